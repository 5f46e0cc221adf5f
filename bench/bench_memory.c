/* bench_memory: the cost of memory profiling per tracked allocation + free,
 * on an empty table and with 10 million live allocations tracked.
 *
 *   build/bin/bench_memory [--live N] [--pairs N]
 *
 * Reference in the same run: glibc malloc + free of the same size.
 *
 * Each measured case records into chunks faulted in beforehand: on this
 * project's VMs touching fresh memory costs 1 ms/MiB at first and 4 ms/MiB
 * once the process holds a few GiB, which would otherwise swamp what is
 * measured here (the tracking) with what the machine charges for new pages
 * (shown separately as the filling rate). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture/pool.h"
#include "capture/state.h"
#include "opprof_trace.h"
#include "timing.h"

OPPROF_SITE(site_op, "bench::alloc");

/* Alloc + free pairs over a rotating window of addresses, fastest of 5. */
static double pairs_ns(uintptr_t base, long n)
{
    double best = 1e9;
    for (int r = 0; r < 5; r++) {
        double t0 = now_s();
        for (long i = 0; i < n; i++) {
            const void *p = (const void *)(base + (uintptr_t)(i & 4095) * 64);
            opprof_record_alloc(p, 64);
            opprof_record_free(p);
        }
        double ns = (now_s() - t0) * 1e9 / (double)n;
        if (ns < best) best = ns;
    }
    return best;
}

static double malloc_ns(long n)
{
    double best = 1e9;
    for (int r = 0; r < 5; r++) {
        double t0 = now_s();
        for (long i = 0; i < n; i++) {
            void *volatile p = malloc(64);
            free(p);
        }
        double ns = (now_s() - t0) * 1e9 / (double)n;
        if (ns < best) best = ns;
    }
    return best;
}

int main(int argc, char **argv)
{
    long live = 10000000, n = 200000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--live") && i + 1 < argc) live = atol(argv[++i]);
        else if (!strcmp(argv[i], "--pairs") && i + 1 < argc) n = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_memory [--live N] [--pairs N]\n");
            return 2;
        }
    }
    if (live < 0 || n < 1000 || n > 200000) {
        fprintf(stderr, "bench_memory: need --live >= 0 and --pairs 1000..200000 (the chunk pool's size)\n");
        return 2;
    }
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.profile_memory = 1;
    cfg.max_events = (uint64_t)live + 25 * (uint64_t)n; /* every pair of every run is kept */
    if (opprof_start(&cfg) != 0) {
        fprintf(stderr, "bench_memory: %s\n", opprof_last_error());
        return 1;
    }
    opprof_begin(&site_op);
    double ref = malloc_ns(n);
    unsigned chunks = (unsigned)((5 * 2 * 32 * (uint64_t)n) / OP_CHUNK_BYTES) + 2;
    op_capture_prefill(chunks);
    double empty = pairs_ns(0x10000000, n);
    double t0 = now_s();
    for (long i = 0; i < live; i++) opprof_record_alloc((const void *)(0x100000000ull + (uintptr_t)i * 32), 32);
    double fill = (now_s() - t0) * 1e9 / (double)(live ? live : 1);
    op_capture_prefill(chunks);
    double full = pairs_ns(0x10000000, n);
    opprof_end(&site_op);
    opprof_trace *t = NULL;
    opprof_stop(&t);
    opprof_memory_stats st;
    opprof_trace_memory_stats(t, &st);
    printf("bench_memory: %ld alloc+free pairs per case (fastest of 5), %ld live allocations\n", n, live);
    printf("%-52s %10s %10s\n", "case", "ns", "target");
    printf("%-52s %10.1f %10s\n", "glibc malloc(64) + free, untracked (reference)", ref, "-");
    printf("%-52s %10.1f %10s\n", "tracked alloc + free, empty table", empty, "<= 60");
    printf("%-52s %10.1f %10s\n", "tracked alloc, filling the table (fresh memory)", fill, "-");
    printf("%-52s %10.1f %10s\n", "tracked alloc + free, with the live allocations", full, "-");
    printf("%-52s %10.2f %10s\n", "  growth (with live / empty)", full / empty, "<= 2.00");
    printf("live bytes at the end: %lld (expected %lld), dropped events: %llu\n", (long long)st.final_bytes,
           (long long)live * 32, (unsigned long long)opprof_trace_dropped(t));
    opprof_trace_free(t);
    return 0;
}

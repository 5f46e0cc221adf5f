/* bench_model_memory: resident bytes per event of the event store.
 *
 *   build/bin/bench_model_memory live [N [THREADS]]  (default 10000000, 1 thread)
 *   build/bin/bench_model_memory trace N FILE.gz [THREADS]
 *
 * live: THREADS threads record N ranges in all (groups of an outer range
 * around three leaves, the threads at once) in a session with no cap, then
 * stops, which builds the model (events of several threads are reordered).
 * Prints the peak resident growth (getrusage's maxrss less the resident set
 * before the session) divided by N, with the times of recording and of stop.
 *
 * trace: writes a gzip'd Chrome trace of N such events (THREADS threads,
 * default 1, one after another), the input for measuring the reader:
 * /usr/bin/time -v opprof summary FILE.gz. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <zlib.h>

#include "opprof_trace.h"
#include "timing.h"

OPPROF_SITE(site_outer, "bench::outer");
OPPROF_SITE(site_a, "bench::leaf_a");
OPPROF_SITE(site_b, "bench::leaf_b");
OPPROF_SITE(site_c, "bench::leaf_c");

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, res = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &res) != 2) res = 0;
        fclose(f);
    }
    return res * 4;
}

static long maxrss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static void *record_groups(void *arg)
{
    long groups = *(const long *)arg;
    for (long i = 0; i < groups; i++) {
        opprof_begin(&site_outer);
        opprof_begin(&site_a);
        opprof_end(&site_a);
        opprof_begin(&site_b);
        opprof_end(&site_b);
        opprof_begin(&site_c);
        opprof_end(&site_c);
        opprof_end(&site_outer);
    }
    return NULL;
}

static int live(long n, int nthreads)
{
    if (nthreads < 1 || nthreads > 64) {
        fprintf(stderr, "bench_model_memory: THREADS must be 1-64\n");
        return 2;
    }
    long groups = n / 4 / nthreads;
    n = groups * 4 * nthreads;
    long before = rss_kb();
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.max_events = 1ull << 40;
    if (opprof_start(&cfg) != 0) {
        fprintf(stderr, "bench_model_memory: start failed: %s\n", opprof_last_error());
        return 1;
    }
    double t0 = now_s();
    pthread_t th[64];
    for (int i = 1; i < nthreads; i++)
        if (pthread_create(&th[i], NULL, record_groups, &groups) != 0) {
            fprintf(stderr, "bench_model_memory: cannot start a thread\n");
            return 1;
        }
    record_groups(&groups);
    for (int i = 1; i < nthreads; i++) pthread_join(th[i], NULL);
    double t1 = now_s();
    opprof_trace *t = NULL;
    if (opprof_stop(&t) != 0 || (long)opprof_trace_event_count(t) != n) {
        fprintf(stderr, "bench_model_memory: expected %ld events, got %zu\n", n, t ? opprof_trace_event_count(t) : 0);
        return 1;
    }
    double t2 = now_s();
    long peak = maxrss_kb();
    printf("bench_model_memory live: %ld events on %d thread%s, record %.2f s, stop %.2f s\n", n, nthreads,
           nthreads > 1 ? "s" : "", t1 - t0, t2 - t1);
    printf("peak resident growth %.1f MiB, %.1f bytes per event (target <= 48)\n", (double)(peak - before) / 1024,
           (double)(peak - before) * 1024 / (double)n);
    opprof_trace_free(t);
    return 0;
}

static int trace(long n, const char *path, int nthreads)
{
    if (nthreads < 1 || nthreads > 64) {
        fprintf(stderr, "bench_model_memory: THREADS must be 1-64\n");
        return 2;
    }
    static const char *const names[4] = {"bench::outer", "bench::leaf_a", "bench::leaf_b", "bench::leaf_c"};
    gzFile f = gzopen(path, "wb6");
    if (!f) {
        fprintf(stderr, "bench_model_memory: cannot write %s\n", path);
        return 1;
    }
    gzbuffer(f, 1 << 20);
    gzprintf(f, "{\"traceEvents\": [\n");
    long groups = n / 4 / nthreads;
    for (int th = 0; th < nthreads; th++) /* one thread after another, as a per-thread writer gives them */
        for (long g = 0; g < groups; g++) {
            long ts = g * 10 + th; /* us: outer [ts, ts+9], leaves 2 us apart */
            for (int k = 0; k < 4; k++) {
                long s = k ? ts + 1 + 2 * (k - 1) : ts, d = k ? 1 : 9;
                gzprintf(f, "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": 1, \"tid\": %d, "
                            "\"ts\": %ld, \"dur\": %ld}\n",
                         th || g || k ? "," : "", names[k], th + 1, s, d);
            }
        }
    groups *= nthreads;
    gzprintf(f, "]}\n");
    if (gzclose(f) != Z_OK) {
        fprintf(stderr, "bench_model_memory: cannot write %s\n", path);
        return 1;
    }
    printf("bench_model_memory: wrote %ld events to %s\n", groups * 4, path);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "live"))
        return live(argc >= 3 ? atol(argv[2]) : 10000000, argc >= 4 ? atoi(argv[3]) : 1);
    if ((argc == 4 || argc == 5) && !strcmp(argv[1], "trace"))
        return trace(atol(argv[2]), argv[3], argc == 5 ? atoi(argv[4]) : 1);
    fprintf(stderr, "usage: bench_model_memory live [N [THREADS]] | trace N FILE.gz [THREADS]\n");
    return 2;
}

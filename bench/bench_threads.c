/* bench_threads: short-lived threads under a session. Each thread records
 * two ranges and exits; the profiled run (a session from before the first
 * thread to after collecting the trace at stop) against the same program
 * without a session, each a child process timed from spawn to exit, with its
 * peak resident memory.
 *
 *   build/bin/bench_threads [--threads N] [--wave W] [--rounds R] [--mode M]
 *
 * W threads run at once (created, then joined, wave after wave). M: events
 * (default: the session keeps events), aggregate (sums only, as opprof exec
 * with a table), stream (a .pftrace streamed as it records, as opprof exec
 * --trace; the file is removed after). Prints the
 * median wall time of each mode, the ratio and the peak RSS; targets from
 * issue 18: profiled / plain <= 2x, profiled peak RSS <= 64 MB. */
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opprof_trace.h"
#include "child.h"
#include "timing.h"

OPPROF_SITE(site_a, "bench::thread_a");
OPPROF_SITE(site_b, "bench::thread_b");

static void *worker(void *arg)
{
    (void)arg;
    opprof_begin(&site_a);
    opprof_end(&site_a);
    opprof_begin(&site_b);
    opprof_end(&site_b);
    return NULL;
}

/* The measured program: nthreads threads, wave at a time. */
static int child(int profiled, long nthreads, long wave, const char *mode)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/bench_threads_%d.pftrace", (int)getpid());
    int sums = strcmp(mode, "events") != 0;
    if (profiled) {
        opprof_config cfg;
        opprof_config_init(&cfg);
        cfg.aggregate = !strcmp(mode, "aggregate");
        if (!strcmp(mode, "stream")) cfg.stream_trace = path;
        if (opprof_start(&cfg) != 0) return 1;
    }
    pthread_t th[256];
    for (long done = 0; done < nthreads;) {
        long n = nthreads - done < wave ? nthreads - done : wave;
        for (long i = 0; i < n; i++)
            if (pthread_create(&th[i], NULL, worker, NULL) != 0) return 1;
        for (long i = 0; i < n; i++) pthread_join(th[i], NULL);
        done += n;
    }
    if (profiled) {
        opprof_trace *tr = NULL;
        if (opprof_stop(&tr) != 0 || !tr) return 1;
        if (opprof_trace_streamed(tr) != !strcmp(mode, "stream")) return 1; /* and links the writer in */
        size_t n = sums ? (size_t)opprof_trace_aggregated(tr) : opprof_trace_event_count(tr);
        uint64_t dropped = opprof_trace_dropped(tr);
        opprof_trace_free(tr);
        unlink(path);
        if (n != (size_t)(2 * nthreads) || dropped) {
            fprintf(stderr, "bench_threads: %zu events, %llu dropped; expected %ld\n", n,
                    (unsigned long long)dropped, 2 * nthreads);
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    long nthreads = 2000, wave = 1, rounds = 5;
    const char *mode = "events";
    if (argc == 6 && !strcmp(argv[1], "--child"))
        return child(!strcmp(argv[2], "profiled"), atol(argv[3]), atol(argv[4]), argv[5]);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            nthreads = atol(argv[++i]);
        } else if (!strcmp(argv[i], "--wave") && i + 1 < argc) {
            wave = atol(argv[++i]);
        } else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            rounds = atol(argv[++i]);
        } else if (!strcmp(argv[i], "--mode") && i + 1 < argc &&
                   (!strcmp(argv[i + 1], "events") || !strcmp(argv[i + 1], "aggregate") ||
                    !strcmp(argv[i + 1], "stream"))) {
            mode = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [--threads N] [--wave W (1-256)] [--rounds R] [--mode events|aggregate|stream]\n",
                    argv[0]);
            return 2;
        }
    }
    if (nthreads < 1 || wave < 1 || wave > 256 || rounds < 1 || rounds > 100) {
        fprintf(stderr, "bench_threads: need N >= 1, 1 <= W <= 256, 1 <= R <= 100\n");
        return 2;
    }
    char self[4096];
    child_self_path(self, sizeof self);
    char nbuf[32], wbuf[32];
    snprintf(nbuf, sizeof nbuf, "%ld", nthreads);
    snprintf(wbuf, sizeof wbuf, "%ld", wave);
    char *plain_argv[] = {self, "--child", "plain", nbuf, wbuf, (char *)mode, NULL};
    char *prof_argv[] = {self, "--child", "profiled", nbuf, wbuf, (char *)mode, NULL};
    double tp[100], tq[100];
    long rss_plain = 0, rss_prof = 0;
    for (long r = 0; r < rounds; r++) { /* interleaved, so that drift hits both */
        long k;
        tp[r] = child_run(plain_argv, &k);
        if (k > rss_plain) rss_plain = k;
        tq[r] = child_run(prof_argv, &k);
        if (k > rss_prof) rss_prof = k;
    }
    double p = median(tp, (int)rounds), q = median(tq, (int)rounds);
    printf("bench_threads: %ld threads, %ld at a time, 2 events each, %ld rounds (median), session: %s\n", nthreads,
           wave, rounds, mode);
    printf("  plain      %8.1f ms   peak RSS %7.1f MB\n", p * 1e3, (double)rss_plain / 1024.0);
    printf("  profiled   %8.1f ms   peak RSS %7.1f MB\n", q * 1e3, (double)rss_prof / 1024.0);
    printf("  profiled / plain  %.2fx  (target <= 2x)   profiled peak RSS %.1f MB (target <= 64 MB)\n", q / p,
           (double)rss_prof / 1024.0);
    return 0;
}

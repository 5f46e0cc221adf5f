/* A program whose threads come and go under the flight recorder (issue
 * 25, item 4): each loop starts four threads that record a ring's worth of
 * ranges or more, ending with a range "churn_last_L" (L the loop's
 * number), and joins them.
 *
 *   flight_churn RING LOOPS RANGES DUMP [RSS_LIMIT_MB]
 *
 * Prints its resident memory after the first loop and at its peak, then
 * dumps to DUMP ("-": no dump) and stops the recorder, timing both:
 *   "rss_first_kb A rss_peak_kb B loops L dump_ms D stop_ms S".
 * Exits 3 without dumping when resident memory grows past RSS_LIMIT_MB
 * (default 200) above the first loop's: the exited threads' rings were
 * kept. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "opprof_trace.h"

OPPROF_SITE(k_work, "churn_work");

static long g_ranges;
static _Thread_local volatile unsigned g_sink; /* one per thread: a shared one is a race */

static long rss_kb(void)
{
    long pages = 0, res = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &pages, &res) != 2) res = -1;
    fclose(f);
    return res < 0 ? -1 : res * (sysconf(_SC_PAGESIZE) / 1024);
}

static double ms_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* arg: the loop. Its last range names it. */
static void *worker(void *arg)
{
    for (long i = 0; i < g_ranges; i++) {
        opprof_begin(&k_work);
        g_sink = g_sink + (unsigned)i;
        opprof_end(&k_work);
    }
    char name[48];
    snprintf(name, sizeof name, "churn_last_%ld", (long)(intptr_t)arg);
    const opprof_site *last = opprof_intern(name, OPPROF_CAT_USER_ANNOTATION);
    opprof_begin(last);
    opprof_end(last);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: flight_churn RING LOOPS RANGES DUMP [RSS_LIMIT_MB]\n");
        return 2;
    }
    long loops = atol(argv[2]), limit_mb = argc > 5 ? atol(argv[5]) : 200;
    g_ranges = atol(argv[3]);
    opprof_flight_config fc;
    opprof_flight_config_init(&fc);
    fc.signal = -1;
    if (opprof_parse_size(argv[1], &fc.ring_bytes) != OPPROF_OK || opprof_flight_start(&fc) != OPPROF_OK) {
        fprintf(stderr, "flight_churn: %s\n", opprof_last_error());
        return 1;
    }
    long first = -1, peak = 0, l;
    for (l = 0; l < loops; l++) {
        pthread_t th[4];
        for (int i = 0; i < 4; i++)
            if (pthread_create(&th[i], NULL, worker, (void *)(intptr_t)l) != 0) return 1;
        for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
        long r = rss_kb();
        if (first < 0) first = r;
        if (r > peak) peak = r;
        if (r - first > limit_mb * 1024) {
            printf("rss_first_kb %ld rss_peak_kb %ld loops %ld: over the limit\n", first, peak, l + 1);
            return 3;
        }
    }
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (strcmp(argv[4], "-") != 0 && opprof_flight_dump(argv[4]) != OPPROF_OK) {
        fprintf(stderr, "flight_churn: dump: %s\n", opprof_last_error());
        return 1;
    }
    double dump_ms = ms_since(&t0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (opprof_flight_stop() != OPPROF_OK) return 1;
    printf("rss_first_kb %ld rss_peak_kb %ld loops %ld dump_ms %.1f stop_ms %.1f\n", first, peak, l, dump_ms,
           ms_since(&t0));
    return 0;
}

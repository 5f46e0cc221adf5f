/* What every benchmark here needs to time itself: a monotonic clock, and
 * the fastest and median of repeated measurements. */
#ifndef OPPROF_BENCH_TIMING_H
#define OPPROF_BENCH_TIMING_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CLOCK_MONOTONIC in seconds. */
static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v in place; the middle value (the mean of the two middle ones for even n). */
static inline double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One figure per round. */
typedef struct series {
    double *v;
    int n;
} series;

static inline void series_add(series *s, double v)
{
    s->v[s->n++] = v;
}

static inline double series_fastest(series *s)
{
    qsort(s->v, (size_t)s->n, sizeof *s->v, cmp_double);
    return s->v[0];
}

/* The upper middle value, as the tables here have always printed. */
static inline double series_median(series *s)
{
    qsort(s->v, (size_t)s->n, sizeof *s->v, cmp_double);
    return s->v[s->n / 2];
}

/* `[--block N] [--rounds R]`, the options of the benchmarks that time
 * blocks of N operations R times; n and rounds hold the defaults. 0, or
 * 2 after printing the usage (the exit status). */
static inline int block_args(const char *prog, int argc, char **argv, long *n, int *rounds)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--block") && i + 1 < argc) {
            *n = atol(argv[++i]);
        } else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            *rounds = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [--block N] [--rounds R]\n", prog);
            return 2;
        }
    }
    if (*rounds < 1 || *rounds > 1000 || *n < 1000) {
        fprintf(stderr, "%s: need --rounds 1..1000 and --block >= 1000\n", prog);
        return 2;
    }
    return 0;
}

#endif

/* bench_mpi: what libopprof_mpi adds to an MPI call, against the call
 * itself (its PMPI entry) measured in the same run, on one rank so that the
 * call is as short as MPI makes it:
 *
 *   mpirun -np 1 build/bin/bench_mpi [--calls N] [--rounds R]
 *
 * For MPI_Barrier and an MPI_Allreduce of one float: ns per call through
 * PMPI (the reference), through the wrapper outside a session (one branch),
 * and through the wrapper recording into a session (the operator with its
 * args). Rounds of each kind alternate; medians are printed, and the
 * recorded overhead per call against issue 12's target (<= 200 ns). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opprof_trace.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum { PLAIN, WRAPPED_IDLE, WRAPPED_RECORDING, NKINDS };

static double barrier_ns(int kind, long n)
{
    double t0 = now_s();
    if (kind == PLAIN)
        for (long i = 0; i < n; i++) PMPI_Barrier(MPI_COMM_WORLD);
    else
        for (long i = 0; i < n; i++) MPI_Barrier(MPI_COMM_WORLD);
    return (now_s() - t0) * 1e9 / (double)n;
}

static double allreduce_ns(int kind, long n)
{
    float x = 1.0f, y = 0.0f;
    double t0 = now_s();
    if (kind == PLAIN)
        for (long i = 0; i < n; i++) PMPI_Allreduce(&x, &y, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    else
        for (long i = 0; i < n; i++) MPI_Allreduce(&x, &y, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    return (now_s() - t0) * 1e9 / (double)n;
}

static double measure(double (*fn)(int, long), int kind, long n)
{
    opprof_config cfg;
    opprof_config_init(&cfg);
    if (kind == WRAPPED_RECORDING && opprof_start(&cfg) != OPPROF_OK) {
        fprintf(stderr, "bench_mpi: %s\n", opprof_last_error());
        exit(1);
    }
    double ns = fn(kind, n);
    if (kind == WRAPPED_RECORDING) {
        opprof_trace *t = NULL;
        opprof_stop(&t);
        if (!t || opprof_trace_event_count(t) != (size_t)n || opprof_trace_dropped(t)) {
            fprintf(stderr, "bench_mpi: the session recorded %zu of %ld calls\n", t ? opprof_trace_event_count(t) : 0,
                    n);
            exit(1);
        }
        opprof_trace_free(t);
    }
    return ns;
}

int main(int argc, char **argv)
{
    long calls = 200000;
    int rounds = 9;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--calls")) calls = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
    }
    if (calls < 1 || rounds < 1 || rounds > 99) {
        fprintf(stderr, "usage: bench_mpi [--calls N] [--rounds R (1..99)]\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static const char *const names[] = {"MPI_Barrier", "MPI_Allreduce (1 float)"};
    double (*fns[2])(int, long) = {barrier_ns, allreduce_ns};
    printf("bench_mpi: %d rank(s), %ld calls per round, medians of %d rounds (shared machine)\n", size, calls, rounds);
    printf("%-26s %12s %14s %14s %12s %8s\n", "call", "PMPI ns", "wrapper idle", "recording", "overhead", "target");
    for (int f = 0; f < 2; f++) {
        double v[NKINDS][99];
        for (int r = 0; r < rounds; r++)
            for (int k = 0; k < NKINDS; k++) v[k][r] = measure(fns[f], k, calls);
        double med[NKINDS];
        for (int k = 0; k < NKINDS; k++) {
            qsort(v[k], (size_t)rounds, sizeof(double), cmp_double);
            med[k] = v[k][rounds / 2];
        }
        double over = med[WRAPPED_RECORDING] - med[PLAIN];
        printf("%-26s %12.1f %14.1f %14.1f %9.1f ns %8s\n", names[f], med[PLAIN], med[WRAPPED_IDLE],
               med[WRAPPED_RECORDING], over, over <= 200.0 ? "<= 200" : "MISSED");
    }
    MPI_Finalize();
    return 0;
}

/* The MPI program the distributed tests run under mpirun:
 *
 *   mpi_scenario collectives|straggler DIR
 *
 * Each rank records a session between MPI_Init and MPI_Finalize (linked with
 * libopprof_mpi, so MPI calls are operators) and writes DIR/rank_R.json.
 * The counts and sizes below are what test_mpi.c expects. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opprof_trace.h"

OPPROF_SITE(site_compute, "compute");

static void spin_us(long us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void collectives(int rank, int size)
{
    float f[1000], fo[1000];
    int ints[256];
    double d[500], dout[500];
    long l[10], *lall = malloc(sizeof(long) * 10 * (size_t)size);
    float *rs_in = malloc(sizeof(float) * 8 * (size_t)size), rs_out[8];
    int *a2a_in = malloc(sizeof(int) * 4 * (size_t)size), *a2a_out = malloc(sizeof(int) * 4 * (size_t)size);
    for (int i = 0; i < 1000; i++) f[i] = (float)i;
    for (int i = 0; i < 256; i++) ints[i] = rank == 0 ? i : -1;
    for (int i = 0; i < 500; i++) d[i] = rank;
    for (int i = 0; i < 10; i++) l[i] = rank;
    for (int i = 0; i < 8 * size; i++) rs_in[i] = 1.0f;
    for (int i = 0; i < 4 * size; i++) a2a_in[i] = rank;

    MPI_Allreduce(f, fo, 1000, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Bcast(ints, 256, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Reduce(d, dout, 100, MPI_DOUBLE, MPI_SUM, 1 % size, MPI_COMM_WORLD);
    MPI_Allgather(l, 10, MPI_LONG, lall, 10, MPI_LONG, MPI_COMM_WORLD);
    MPI_Reduce_scatter_block(rs_in, rs_out, 8, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Alltoall(a2a_in, 4, MPI_INT, a2a_out, 4, MPI_INT, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);

    /* A non-blocking allreduce overlapping computation. */
    MPI_Request req;
    MPI_Iallreduce(d, dout, 500, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
    opprof_begin(&site_compute);
    spin_us(2000);
    opprof_end(&site_compute);
    MPI_Wait(&req, MPI_STATUS_IGNORE);

    /* A ring of non-blocking sends and receives. */
    char out[64], in[64];
    memset(out, rank, sizeof out);
    MPI_Request ring[2];
    MPI_Irecv(in, 64, MPI_BYTE, (rank + size - 1) % size, 7, MPI_COMM_WORLD, &ring[0]);
    MPI_Isend(out, 64, MPI_BYTE, (rank + 1) % size, 7, MPI_COMM_WORLD, &ring[1]);
    MPI_Waitall(2, ring, MPI_STATUSES_IGNORE);

    /* Blocking point-to-point, received from any source. */
    int msg[16] = {0};
    if (rank == 0) MPI_Send(msg, 16, MPI_INT, 1, 3, MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv(msg, 16, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

    /* Barriers whose exits the merged timeline must line up. */
    for (int i = 0; i < 20; i++) MPI_Barrier(MPI_COMM_WORLD);
    free(lall);
    free(rs_in);
    free(a2a_in);
    free(a2a_out);
}

static void straggler(int rank)
{
    int x = rank, sum = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: mpi_scenario collectives|straggler DIR\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.record_shapes = 1; /* messages as inputs: [count] of their dtype */
    if (opprof_start(&cfg) != OPPROF_OK) return 1;
    if (!strcmp(argv[1], "collectives")) collectives(rank, size);
    else straggler(rank);
    MPI_Finalize(); /* measures the clock offset again */
    opprof_trace *t = NULL;
    if (opprof_stop(&t) != OPPROF_OK) return 1;
    char path[4096];
    snprintf(path, sizeof path, "%s/rank_%d.json", argv[2], rank);
    int rc = opprof_export_chrome_trace(t, path);
    if (rc != OPPROF_OK) fprintf(stderr, "rank %d: %s\n", rank, opprof_last_error());
    opprof_trace_free(t);
    return rc == OPPROF_OK ? 0 : 1;
}

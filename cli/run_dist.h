/* `opprof run MODEL --distributed`: data-parallel training over MPI, as
 * PyTorch's DistributedDataParallel does it. Each rank trains on its slice
 * of the batch; between the backward and the optimizer step the gradients
 * are averaged with MPI_Allreduce (recorded as operators by libopprof_mpi)
 * and the buffers (batch-norm statistics) are made rank 0's. Built with MPI
 * when CMake finds it (run_dist_mpi.c), else as stubs that say so
 * (run_dist_none.c). */
#ifndef OPPROF_CLI_RUN_DIST_H
#define OPPROF_CLI_RUN_DIST_H

#include "opprof_nn.h"

/* Joins the job (MPI_Init, which also measures the clock offset to rank 0).
 * Prints why and returns nonzero when it cannot. */
int run_dist_init(int *rank, int *size);

/* The run's name, the same on every rank: rank 0's start in UTC,
 * "YYYYmmdd-HHMMSS-NNNNNNNNN" (nanoseconds), so that names sort by time and
 * the traces of two runs into one folder stay apart. */
void run_dist_run_id(char *out, size_t cap);

/* The nn gradient hook (opprof_nn_sgd_set_grad_hook). */
int run_dist_grad_hook(opprof_nn_model *m, void *ctx);

/* The mean of v over the ranks. */
float run_dist_mean(float v);

/* 1 when every rank holds bit for bit the same parameters and buffers. */
int run_dist_same_weights(opprof_nn_model *m);

/* Measures the clock offset to rank 0 again: the end of the session. */
void run_dist_clock_sync(void);

void run_dist_finish(void);

#endif

/* run_dist.h without MPI: --distributed says what the build lacks. */
#include <stdio.h>

#include "run_dist.h"

int run_dist_init(int *rank, int *size)
{
    *rank = 0;
    *size = 1;
    fprintf(stderr, "opprof run: --distributed needs opprof built with MPI (Debian: libopenmpi-dev)\n");
    return -1;
}

void run_dist_run_id(char *out, size_t cap)
{
    if (cap) out[0] = '\0'; /* run_dist_init has failed */
}

int run_dist_grad_hook(opprof_nn_model *m, void *ctx)
{
    (void)m;
    (void)ctx;
    return 0;
}

float run_dist_mean(float v)
{
    return v;
}

int run_dist_same_weights(opprof_nn_model *m)
{
    (void)m;
    return 1;
}

void run_dist_clock_sync(void)
{
}

void run_dist_finish(void)
{
}

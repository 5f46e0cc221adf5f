/* run_dist.h over MPI. The gradients' allreduces go through the MPI names,
 * so libopprof_mpi records them; the run's own bookkeeping (the loss, the
 * weights check) calls PMPI directly and stays out of the trace. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "opprof_mpi.h"
#include "run_dist.h"

static int g_size = 1;

int run_dist_init(int *rank, int *size)
{
    int up = 0;
    MPI_Initialized(&up);
    if (!up && MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        fprintf(stderr, "opprof run: --distributed: MPI_Init failed\n");
        return -1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    g_size = *size;
    return 0;
}

void run_dist_run_id(char *out, size_t cap)
{
    char id[32] = "";
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        struct timespec ts;
        struct tm tm;
        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        size_t n = strftime(id, sizeof id, "%Y%m%d-%H%M%S", &tm);
        snprintf(id + n, sizeof id - n, "-%09ld", ts.tv_nsec);
    }
    PMPI_Bcast(id, (int)sizeof id, MPI_CHAR, 0, MPI_COMM_WORLD); /* bookkeeping: not in the trace */
    snprintf(out, cap, "%s", id);
}

int run_dist_grad_hook(opprof_nn_model *m, void *ctx)
{
    (void)ctx;
    const float scale = 1.0f / (float)g_size;
    for (size_t i = 0; i < opprof_nn_model_param_count(m); i++) {
        opprof_nn_param *p = opprof_nn_model_param(m, i);
        if (p->is_buffer) {
            /* DDP's broadcast_buffers: every rank keeps rank 0's statistics. */
            if (MPI_Bcast(p->value->data, (int)p->value->numel, MPI_FLOAT, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
                return -1;
            opprof_nn_tensor_touch(p->value);
            continue;
        }
        if (!p->grad) continue;
        float *g = p->grad->data;
        int64_t n = p->grad->numel;
        if (MPI_Allreduce(MPI_IN_PLACE, g, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS) return -1;
        for (int64_t j = 0; j < n; j++) g[j] *= scale;
        opprof_nn_tensor_touch(p->grad);
    }
    return 0;
}

float run_dist_mean(float v)
{
    float sum = 0;
    PMPI_Allreduce(&v, &sum, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    return sum / (float)g_size;
}

/* FNV-1a over every parameter's and buffer's bytes. */
static uint64_t weights_hash(opprof_nn_model *m)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < opprof_nn_model_param_count(m); i++) {
        const opprof_nn_tensor *t = opprof_nn_model_param(m, i)->value;
        const unsigned char *b = (const unsigned char *)t->data;
        for (size_t k = 0; k < (size_t)t->numel * sizeof(float); k++) h = (h ^ b[k]) * 0x100000001b3ull;
    }
    return h;
}

int run_dist_same_weights(opprof_nn_model *m)
{
    uint64_t h = weights_hash(m), lo = 0, hi = 0;
    PMPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    PMPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi;
}

void run_dist_clock_sync(void)
{
    opprof_mpi_clock_sync();
}

void run_dist_finish(void)
{
    MPI_Finalize();
}

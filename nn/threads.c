/* Thread count of the runtime. oneDNN here runs on OpenMP, so one setting,
 * omp_set_num_threads, governs both its kernels and our own loops. */
#include <omp.h>

#include "backend.h"

#include <pthread.h>

static int g_threads, g_default;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* OpenMP's own default (OMP_NUM_THREADS, else every core), read before any
 * setting of ours changes it. */
static void read_default(void)
{
    g_default = omp_get_max_threads();
}

int opprof_nn_set_threads(int n)
{
    pthread_once(&g_once, read_default);
    if (n <= 0) n = g_default;
    omp_set_num_threads(n);
    g_threads = n;
    return OPPROF_OK;
}

int opprof_nn_threads(void)
{
    return g_threads > 0 ? g_threads : omp_get_max_threads();
}

int opprof_nn_sample_threads(void)
{
    int rc = OPPROF_OK;
#pragma omp parallel num_threads(opprof_nn_threads())
    {
        int r = opprof_sample_thread();
        if (r != OPPROF_OK) {
#pragma omp critical
            rc = r;
        }
    }
    return rc;
}

/* Below ~32k elements a parallel region costs more than it saves. */
int op_nn_threads_for(int64_t work)
{
    int t = opprof_nn_threads();
    int64_t useful = work / 32768;
    if (useful < 1) useful = 1;
    return useful < t ? (int)useful : t;
}

void opprof_nn_shutdown(void)
{
    op_nn_conv_cache_clear();
    op_nn_alloc_trim();
}

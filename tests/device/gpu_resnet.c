/* ResNet-18 on the GPU against the CPU runtime, and what profiling costs
 * it. Not a ctest test: scripts/gpu-check.sh runs it on a GPU machine.
 *
 *   gpu_resnet [--batch N] [--iters N]
 *
 * 1. The same weights (the CPU model's, by state_dict name) and input on
 *    both runtimes: the largest |gpu - cpu| over the largest |cpu| must be
 *    <= 1e-3.
 * 2. One profiled forward (CPU + CUDA activity): kernels must be charged
 *    to aten::conv2d, aten::batch_norm and aten::linear; nothing dropped.
 * 3. Forward time (launch to synchronized result), profiled over
 *    unprofiled: after a warm-up, --rounds rounds each time a block of
 *    --iters forwards unprofiled and one in each session kind below, in an
 *    order that turns by one block each round (drift over a round cancels);
 *    each kind's ratio is the median over rounds of its block's median
 *    forward over the unprofiled block's. "cuda" (CPU and CUDA activity, the
 *    defaults) must be <= 1.05; the others show what each part costs: CPU
 *    activity alone, and CUDA with launch callbacks, with every runtime
 *    call, with every driver call, without driver calls. On an H200 a
 *    forward takes about 2 ms and the medians of separate processes differ
 *    by up to 30%, so only blocks of one process are compared.
 * Prints "RESULT key value" lines for the script; exits 77 without a GPU. */
#define _GNU_SOURCE /* setenv */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opprof_trace.h"
#include "opprof_nn.h"
#include "opprof_nn_cuda.h"

static const float *param(void *ctx, const char *name, int64_t *numel)
{
    opprof_nn_param *p = opprof_nn_model_find((opprof_nn_model *)ctx, name);
    if (!p) return NULL;
    *numel = p->value->numel;
    return p->value->data;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define CHECK(call)                                                                                  \
    do {                                                                                             \
        int rc_ = (call);                                                                            \
        if (rc_) {                                                                                   \
            fprintf(stderr, "gpu_resnet: %s failed: %d %s %s\n", #call, rc_, opprof_last_error(),    \
                    opprof_nn_cuda_error());                                                         \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)

static double forward_s(opprof_nn_cuda_model *g, const opprof_nn_cuda_tensor *x)
{
    opprof_nn_cuda_tensor *y = NULL;
    double t0 = now_s();
    CHECK(opprof_nn_cuda_forward(g, x, &y));
    CHECK(opprof_nn_cuda_sync());
    double t = now_s() - t0;
    opprof_nn_cuda_tensor_free(y);
    return t;
}

static void cuda_config(opprof_config *cfg)
{
    opprof_config_init(cfg);
    cfg->activities = OPPROF_ACTIVITY_CPU | OPPROF_ACTIVITY_CUDA;
}

/* Device time of the rows named `name` in the key averages. */
static int64_t row_device_total(const opprof_key_averages *ka, const char *name)
{
    for (size_t i = 0; i < opprof_key_averages_count(ka); i++) {
        opprof_avg_row r;
        if (opprof_key_averages_row(ka, i, &r) == 0 && !strcmp(r.name, name)) return r.device_time_total_ns;
    }
    return -1;
}

int main(int argc, char **argv)
{
    int batch = 5, iters = 10, rounds = 80, failed = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--batch")) batch = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--iters")) iters = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
    }
    if (batch < 1 || iters < 1 || rounds < 1) {
        fprintf(stderr, "gpu_resnet: --batch, --iters and --rounds take a positive number\n");
        return 2;
    }
    if (opprof_nn_cuda_init(0) != 0) {
        printf("gpu_resnet: skipped: %s\n", opprof_nn_cuda_error());
        return 77;
    }
    printf("device: %s\n", opprof_nn_cuda_device_name());

    /* 1. GPU against CPU */
    opprof_nn_model *cpu = NULL;
    CHECK(opprof_nn_resnet18(1000, 0, &cpu));
    int64_t xd[4] = {batch, 3, 224, 224};
    opprof_nn_tensor *x = NULL, *ycpu = NULL;
    CHECK(opprof_nn_tensor_new(4, xd, &x));
    opprof_nn_tensor_normal(x, 0.0f, 1.0f, 1);
    CHECK(opprof_nn_model_forward(cpu, x, 0, &ycpu));
    opprof_nn_cuda_model *g = NULL;
    opprof_nn_cuda_tensor *gx = NULL, *gy = NULL;
    CHECK(opprof_nn_cuda_resnet18(1000, param, cpu, &g));
    CHECK(opprof_nn_cuda_upload(4, xd, x->data, &gx));
    CHECK(opprof_nn_cuda_forward(g, gx, &gy));
    float *ygpu = malloc((size_t)ycpu->numel * sizeof *ygpu);
    CHECK(ygpu ? 0 : OPPROF_E_NOMEM);
    CHECK(opprof_nn_cuda_download(gy, ygpu, (size_t)ycpu->numel));
    opprof_nn_cuda_tensor_free(gy);
    double diff = 0, scale = 0;
    for (int64_t i = 0; i < ycpu->numel; i++) {
        double d = fabs((double)ygpu[i] - ycpu->data[i]);
        if (d > diff || isnan(d)) diff = isnan(d) ? INFINITY : d;
        if (fabs(ycpu->data[i]) > scale) scale = fabs(ycpu->data[i]);
    }
    double rel = diff / (scale > 0 ? scale : 1);
    printf("RESULT gpu_vs_cpu_rel_err %.3e\n", rel);
    if (!(rel <= 1e-3)) failed = 1, printf("FAIL: GPU results differ from the CPU runtime by %.3e > 1e-3\n", rel);

    /* 2. one profiled forward: kernels charged to the operators */
    for (int i = 0; i < 3; i++) forward_s(g, gx); /* cuDNN plans, allocator pool */
    opprof_config cfg;
    cuda_config(&cfg);
    CHECK(opprof_start(&cfg));
    forward_s(g, gx);
    opprof_trace *t = NULL;
    CHECK(opprof_stop(&t));
    size_t kernels = 0, linked_api = 0, api = 0;
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        CHECK(opprof_trace_event(t, i, &e));
        kernels += e.category == OPPROF_CAT_KERNEL;
        if (e.category == OPPROF_CAT_CUDA_RUNTIME || e.category == OPPROF_CAT_CUDA_DRIVER) {
            api++;
            linked_api += e.parent >= 0;
        }
    }
    opprof_key_averages *ka = NULL;
    CHECK(opprof_key_averages(t, NULL, &ka));
    printf("RESULT kernels %zu\nRESULT api_calls %zu\nRESULT api_calls_inside_operators %zu\n", kernels, api,
           linked_api);
    printf("RESULT dropped %llu\n", (unsigned long long)opprof_trace_dropped(t));
    static const char *const ops[] = {"aten::conv2d", "aten::batch_norm", "aten::linear"};
    for (int k = 0; k < 3; k++) {
        int64_t dev = row_device_total(ka, ops[k]);
        printf("RESULT cuda_time_total_us[%s] %.1f\n", ops[k], dev / 1e3);
        if (dev <= 0) failed = 1, printf("FAIL: no kernel charged to %s\n", ops[k]);
    }
    if (!kernels || opprof_trace_dropped(t)) failed = 1, printf("FAIL: no kernels, or activity dropped\n");
    CHECK(opprof_table_write(ka, "self_cuda_time_total", 12, stdout));
    opprof_key_averages_free(ka);
    opprof_trace_free(t);

    /* 3. overhead: each session kind's block against the round's unprofiled one */
    static const struct {
        const char *name, *env; /* env: a setting of src/device/cupti.c for the block */
        int cuda;
    } kinds[] = {
        {"cuda", NULL, 1},
        {"cpu", NULL, 0},
        {"cuda+callbacks", "OPPROF_CUDA_CALLBACKS", 1},
        {"cuda+all_runtime", "OPPROF_CUDA_ALL_RUNTIME", 1},
        {"cuda+all_driver", "OPPROF_CUDA_ALL_DRIVER", 1},
        {"cuda-driver", "OPPROF_CUDA_NO_DRIVER", 1},
        {"cuda-runtime", "OPPROF_CUDA_NO_RUNTIME", 1},
        {"cuda-kernels", "OPPROF_CUDA_NO_KERNELS", 1},
    };
    enum { NK = sizeof kinds / sizeof kinds[0], NB = NK + 1 };
    for (int i = 0; i < 50; i++) forward_s(g, gx); /* clocks up, caches warm */
    double *block = malloc(sizeof(double) * (size_t)iters), *med = malloc(sizeof(double) * NB * (size_t)rounds);
    double *ratio = malloc(sizeof(double) * NK * (size_t)rounds), *col = malloc(sizeof(double) * (size_t)rounds);
    CHECK(block && med && ratio && col ? 0 : OPPROF_E_NOMEM);
    for (int round = 0; round < rounds; round++) {
        for (int j = 0; j < NB; j++) {
            int b = (j + round) % NB; /* 0: unprofiled, k + 1: kinds[k] */
            if (b) {
                opprof_config kc;
                opprof_config_init(&kc);
                kc.activities = OPPROF_ACTIVITY_CPU | (kinds[b - 1].cuda ? OPPROF_ACTIVITY_CUDA : 0);
                if (kinds[b - 1].env) setenv(kinds[b - 1].env, "1", 1);
                CHECK(opprof_start(&kc));
            }
            for (int i = 0; i < iters; i++) block[i] = forward_s(g, gx);
            if (b) {
                CHECK(opprof_stop(&t));
                opprof_trace_free(t);
                if (kinds[b - 1].env) unsetenv(kinds[b - 1].env);
            }
            med[round * NB + b] = median(block, iters);
        }
        for (int k = 0; k < NK; k++) ratio[k * rounds + round] = med[round * NB + k + 1] / med[round * NB];
    }
    for (int b = 0; b < NB; b++) {
        for (int r = 0; r < rounds; r++) col[r] = med[r * NB + b];
        printf("RESULT forward_ms[%s] %.3f\n", b ? kinds[b - 1].name : "unprofiled", median(col, rounds) * 1e3);
    }
    double r_cuda = 0;
    for (int k = 0; k < NK; k++) {
        double *rk = ratio + k * rounds, r = median(rk, rounds); /* sorts rk */
        printf("RESULT overhead[%s] %.3f (rounds %.3f-%.3f)\n", kinds[k].name, r, rk[0], rk[rounds - 1]);
        if (k == 0) r_cuda = r;
    }
    printf("RESULT overhead_ratio %.3f\n", r_cuda);
    if (!(r_cuda <= 1.05)) failed = 1, printf("FAIL: profiled / unprofiled forward time %.3f > 1.05\n", r_cuda);
    free(block);
    free(med);
    free(ratio);
    free(col);
    free(ygpu);
    opprof_nn_cuda_tensor_free(gx);
    opprof_nn_cuda_model_free(g);
    opprof_nn_tensor_release(x);
    opprof_nn_tensor_release(ycpu);
    opprof_nn_model_free(cpu);
    opprof_nn_cuda_shutdown();
    printf("RESULT gpu_resnet %s\n", failed ? "FAIL" : "PASS");
    return failed;
}

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
 *    unprofiled: blocks of each alternate, median per forward; must be
 *    <= 1.05.
 * Prints "RESULT key value" lines for the script; exits 77 without a GPU. */
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
    int batch = 5, iters = 20, failed = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--batch")) batch = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--iters")) iters = atoi(argv[i + 1]);
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

    /* 3. overhead: alternating blocks, median forward of each */
    double *plain = malloc(sizeof(double) * (size_t)iters * 5), *prof = malloc(sizeof(double) * (size_t)iters * 5);
    int np = 0, nq = 0;
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < iters; i++) plain[np++] = forward_s(g, gx);
        CHECK(opprof_start(&cfg));
        for (int i = 0; i < iters; i++) prof[nq++] = forward_s(g, gx);
        CHECK(opprof_stop(&t));
        opprof_trace_free(t);
    }
    double mp = median(plain, np), mq = median(prof, nq);
    printf("RESULT forward_ms_unprofiled %.3f\nRESULT forward_ms_profiled %.3f\nRESULT overhead_ratio %.3f\n",
           mp * 1e3, mq * 1e3, mq / mp);
    if (!(mq / mp <= 1.05)) failed = 1, printf("FAIL: profiled / unprofiled forward time %.3f > 1.05\n", mq / mp);

    free(plain);
    free(prof);
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

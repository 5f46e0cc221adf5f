/* The model runtime's timings, for bench/nn_vs_torch.py (which runs PyTorch
 * in the same run and prints the ratios) or alone:
 *
 *   bench_nn [--threads N] [--reps R] [--batch B] [--train-batch B] [--size PX]
 *
 * Prints one line per measurement, "name ms ms ms ...", each the time of one
 * call, the kinds interleaved round by round so that drift on a shared
 * machine falls on all of them alike:
 *   forward           ResNet-18 inference, no session
 *   forward_profiled  the same inside a session (no options)
 *   forward_full      inside a session with shapes, memory and FLOPs
 *   train_step        one training step (zero_grad, forward, loss, backward, SGD)
 * the same forwards in process CPU time ("cpu_" rows: with one thread, time
 * the machine gave to other programs does not count), and the ratios
 * profiled/unprofiled from the medians. It also estimates the recording
 * cost directly: events per forward times the cost of one recorded range,
 * over the forward's time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opprof_trace.h"
#include "opprof_nn.h"
#include "timing.h"

#define MAX_REPS 200

static double clock_ms(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static double now_ms(void)
{
    return clock_ms(CLOCK_MONOTONIC);
}

/* The median of a copy of v (v keeps its order). */
static double median_of(const double *v, int n)
{
    double s[MAX_REPS];
    memcpy(s, v, (size_t)n * sizeof *s);
    return median(s, n);
}

static void print_row(const char *name, const double *v, int n)
{
    printf("%s", name);
    for (int i = 0; i < n; i++) printf(" %.3f", v[i]);
    printf("\n");
}

static size_t g_events[3];

/* One forward, in a session configured by mode (0: none, 1: plain, 2: full);
 * *cpu gets its process CPU time. */
static double forward_once(opprof_nn_model *m, opprof_nn_tensor *x, int mode, double *cpu)
{
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.record_shapes = cfg.profile_memory = cfg.with_flops = mode == 2;
    if (mode && opprof_start(&cfg) != 0) exit(1);
    opprof_nn_tensor *y = NULL;
    double c0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID), t0 = now_ms();
    if (opprof_nn_model_forward(m, x, 0, &y) != 0) exit(1);
    double t = now_ms() - t0;
    if (cpu) *cpu = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
    opprof_nn_tensor_release(y);
    if (mode) {
        opprof_trace *tr = NULL;
        opprof_stop(&tr);
        g_events[mode] = opprof_trace_event_count(tr);
        opprof_trace_free(tr);
    }
    return t;
}

/* The cost of one recorded range: plain, and as the runtime records a
 * convolution with every option on (13 inputs given, FLOPs at end, a memory
 * event). Minimum of several batches. */
static void range_cost(double *plain_ns, double *full_ns)
{
    static const opprof_site site = OPPROF_SITE_INIT("bench::range", OPPROF_CAT_CPU_OP, NULL);
    opprof_input in[13];
    memset(in, 0, sizeof in);
    in[0].dtype = in[1].dtype = OPPROF_DTYPE_FLOAT;
    in[0].ndim = in[1].ndim = 4;
    for (int k = 0; k < 4; k++) in[0].dims[k] = in[1].dims[k] = 64;
    enum { N = 20000 };
    for (int mode = 1; mode <= 2; mode++) {
        double best = 1e30;
        for (int rep = 0; rep < 5; rep++) {
            opprof_config cfg;
            opprof_config_init(&cfg);
            cfg.record_shapes = cfg.profile_memory = cfg.with_flops = mode == 2;
            if (opprof_start(&cfg) != 0) exit(1);
            double t0 = now_ms();
            for (int i = 0; i < N; i++) {
                if (mode == 1) {
                    opprof_begin(&site);
                    opprof_end(&site);
                } else {
                    opprof_begin_inputs(&site, in, 13);
                    opprof_record_memory(&in[i & 7], 64);
                    opprof_end_flops(&site, 1000);
                }
            }
            double dt = (now_ms() - t0) * 1e6 / N;
            opprof_trace *tr = NULL;
            opprof_stop(&tr);
            opprof_trace_free(tr);
            if (dt < best) best = dt;
        }
        *(mode == 1 ? plain_ns : full_ns) = best;
    }
}

int main(int argc, char **argv)
{
    int threads = 1, reps = 10;
    long batch = 5, train_batch = 8, size = 224;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--threads")) threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--batch")) batch = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--train-batch")) train_batch = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--size")) size = atol(argv[i + 1]);
        else {
            fprintf(stderr, "bench_nn: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (reps < 1 || reps > MAX_REPS) reps = 10;
    opprof_nn_set_threads(threads);
    opprof_nn_model *m = NULL;
    opprof_nn_sgd *sgd = NULL;
    opprof_nn_tensor *x = NULL, *xt = NULL;
    int64_t d[4] = {batch, 3, size, size}, dt[4] = {train_batch, 3, size, size};
    int64_t *targets = calloc((size_t)train_batch, sizeof *targets);
    opprof_nn_sgd_options so = {0.01f, 0.9f, 0.0f, 1e-4f, 0};
    if (!targets || opprof_nn_resnet18(1000, 0, &m) || opprof_nn_tensor_new(4, d, &x) ||
        opprof_nn_tensor_new(4, dt, &xt) || opprof_nn_sgd_new(m, &so, &sgd))
        return 1;
    opprof_nn_tensor_normal(x, 0, 1, 1);
    opprof_nn_tensor_normal(xt, 0, 1, 2);
    for (long i = 0; i < train_batch; i++) targets[i] = (i * 7) % 1000;
    float loss;
    /* warm-up: primitives compiled, weights packed, memory cached */
    for (int i = 0; i < 2; i++) {
        forward_once(m, x, 0, NULL);
        forward_once(m, x, 2, NULL);
        if (opprof_nn_train_step(m, sgd, xt, targets, &loss)) return 1;
    }
    forward_once(m, x, 0, NULL); /* the weights changed: pack them again */
    static double t[4][MAX_REPS], c[3][MAX_REPS];
    for (int r = 0; r < reps; r++) /* the order rotates, so no kind always runs first */
        for (int k = 0; k < 3; k++) {
            int mode = (r + k) % 3;
            t[mode][r] = forward_once(m, x, mode, &c[mode][r]);
        }
    for (int r = 0; r < reps; r++) {
        double t0 = now_ms();
        if (opprof_nn_train_step(m, sgd, xt, targets, &loss)) return 1;
        t[3][r] = now_ms() - t0;
    }
    print_row("forward", t[0], reps);
    print_row("forward_profiled", t[1], reps);
    print_row("forward_full", t[2], reps);
    print_row("train_step", t[3], reps);
    print_row("cpu_forward", c[0], reps);
    print_row("cpu_forward_profiled", c[1], reps);
    print_row("cpu_forward_full", c[2], reps);
    double m0 = median_of(t[0], reps), cm0 = median_of(c[0], reps);
    printf("# threads %d, batch %ld (train %ld), %ldx%ld, %d reps\n", threads, batch, train_batch, size, size, reps);
    printf("# median ms: forward %.2f, profiled %.2f (x%.4f), shapes+memory+flops %.2f (x%.4f), train step %.2f\n",
           m0, median_of(t[1], reps), median_of(t[1], reps) / m0, median_of(t[2], reps), median_of(t[2], reps) / m0,
           median_of(t[3], reps));
    printf("# median CPU ms: forward %.2f, profiled x%.4f, shapes+memory+flops x%.4f\n", cm0, median_of(c[1], reps) / cm0,
           median_of(c[2], reps) / cm0);
    double plain_ns, full_ns;
    range_cost(&plain_ns, &full_ns);
    double min0 = median_of(t[0], reps);
    for (int r = 0; r < reps; r++) min0 = t[0][r] < min0 ? t[0][r] : min0;
    printf("# estimate: %zu events x %.1f ns = x%.5f; with shapes, memory, FLOPs %zu events x %.1f ns = x%.5f\n",
           g_events[1], plain_ns, 1 + g_events[1] * plain_ns / 1e6 / min0, g_events[2], full_ns,
           1 + g_events[2] * full_ns / 1e6 / min0);
    opprof_nn_tensor_release(x);
    opprof_nn_tensor_release(xt);
    opprof_nn_sgd_free(sgd);
    opprof_nn_model_free(m);
    free(targets);
    opprof_nn_shutdown();
    return 0;
}

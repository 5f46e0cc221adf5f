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
 * and the ratios profiled/unprofiled from the medians. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opprof.h"
#include "opprof_nn.h"

#define MAX_REPS 200

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
    double s[MAX_REPS];
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static void print_row(const char *name, const double *v, int n)
{
    printf("%s", name);
    for (int i = 0; i < n; i++) printf(" %.3f", v[i]);
    printf("\n");
}

/* One forward, in a session configured by mode (0: none, 1: plain, 2: full). */
static double forward_once(opprof_nn_model *m, opprof_nn_tensor *x, int mode)
{
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.record_shapes = cfg.profile_memory = cfg.with_flops = mode == 2;
    if (mode && opprof_start(&cfg) != 0) exit(1);
    opprof_nn_tensor *y = NULL;
    double t0 = now_ms();
    if (opprof_nn_model_forward(m, x, 0, &y) != 0) exit(1);
    double t = now_ms() - t0;
    opprof_nn_tensor_release(y);
    if (mode) {
        opprof_trace *tr = NULL;
        opprof_stop(&tr);
        opprof_trace_free(tr);
    }
    return t;
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
        forward_once(m, x, 0);
        forward_once(m, x, 2);
        if (opprof_nn_train_step(m, sgd, xt, targets, &loss)) return 1;
    }
    forward_once(m, x, 0); /* the weights changed: pack them again */
    static double t[4][MAX_REPS];
    for (int r = 0; r < reps; r++) {
        for (int mode = 0; mode < 3; mode++) t[mode][r] = forward_once(m, x, mode);
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
    double m0 = median(t[0], reps);
    printf("# threads %d, batch %ld (train %ld), %ldx%ld, %d reps\n", threads, batch, train_batch, size, size, reps);
    printf("# median ms: forward %.2f, profiled %.2f (x%.4f), shapes+memory+flops %.2f (x%.4f), train step %.2f\n",
           m0, median(t[1], reps), median(t[1], reps) / m0, median(t[2], reps), median(t[2], reps) / m0,
           median(t[3], reps));
    opprof_nn_tensor_release(x);
    opprof_nn_tensor_release(xt);
    opprof_nn_sgd_free(sgd);
    opprof_nn_model_free(m);
    free(targets);
    opprof_nn_shutdown();
    return 0;
}

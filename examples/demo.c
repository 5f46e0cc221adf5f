/* A small instrumented program: a fake "model" of a few operators, profiled
 * with shapes, and its events printed as an indented tree. This is how a C
 * engine uses opprof; the README's example is a shorter version of it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "opprof_trace.h"

OPPROF_SITE(site_matmul, "demo::matmul");
OPPROF_SITE(site_relu, "demo::relu");
OPPROF_SITE(site_layer, "demo::layer");

static void matmul(const float *a, const float *b, float *c, int n)
{
    opprof_input in[2] = {{OPPROF_DTYPE_FLOAT, 2, {n, n}}, {OPPROF_DTYPE_FLOAT, 2, {n, n}}};
    opprof_begin_inputs(&site_matmul, in, 2);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float s = 0;
            for (int k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];
            c[i * n + j] = s;
        }
    opprof_end_flops(&site_matmul, 2ull * n * n * n);
}

static void relu(float *x, int len)
{
    OPPROF_SCOPE("demo::relu_inplace");
    opprof_begin(&site_relu);
    for (int i = 0; i < len; i++) x[i] = x[i] > 0 ? x[i] : 0;
    opprof_end(&site_relu);
}

int main(void)
{
    enum { N = 64 };
    float *a = malloc(sizeof(float) * N * N), *b = malloc(sizeof(float) * N * N), *c = malloc(sizeof(float) * N * N);
    if (!a || !b || !c) return 1;
    for (int i = 0; i < N * N; i++) {
        a[i] = sinf((float)i);
        b[i] = cosf((float)i);
    }
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.record_shapes = 1;
    cfg.with_flops = 1;
    if (opprof_start(&cfg) != 0) {
        fprintf(stderr, "demo: %s\n", opprof_strerror(-1));
        return 1;
    }
    const opprof_site *step = opprof_annotation_begin("forward");
    for (int layer = 0; layer < 3; layer++) {
        opprof_begin(&site_layer);
        matmul(a, b, c, N);
        relu(c, N * N);
        opprof_end(&site_layer);
    }
    opprof_end(step);
    opprof_trace *trace = NULL;
    if (opprof_stop(&trace) != 0) return 1;

    printf("%-28s %12s %12s %8s  %s\n", "event", "total (us)", "self (us)", "flops", "input shapes");
    for (size_t i = 0; i < opprof_trace_event_count(trace); i++) {
        opprof_event e;
        opprof_trace_event(trace, i, &e);
        printf("%*s%-*s %12.3f %12.3f %8llu  %s\n", (int)e.depth * 2, "", 28 - (int)e.depth * 2, e.name,
               e.dur_ns / 1e3, e.self_ns / 1e3, (unsigned long long)e.flops, e.input_shapes);
    }
    printf("%zu events, %llu dropped\n", opprof_trace_event_count(trace),
           (unsigned long long)opprof_trace_dropped(trace));
    opprof_trace_free(trace);
    free(a);
    free(b);
    free(c);
    return 0;
}

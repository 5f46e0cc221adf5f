/* bench_instrument: the cost of a function compiled with
 * -finstrument-functions and recorded through libopprof_instrument's hooks,
 * against the same empty function recorded with a plain opprof_begin/end
 * (a static site), measured in the same run.
 *
 *   build/bin/bench_instrument [--block N] [--rounds R]
 *
 * Issue 8's target: an instrumented call costs at most 1.5x a plain
 * begin/end. The hooks are compiled in (preload/instrument.c), as when a
 * program links -lopprof_instrument. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instrumented_work.h"
#include "opprof_trace.h"
#include "timing.h"

#define NOINLINE __attribute__((noinline))

OPPROF_SITE(site_leaf, "plain_leaf");

static NOINLINE int bare_leaf(int x)
{
    g_inst_sink = x;
    return x + 1;
}

static NOINLINE int plain_leaf(int x)
{
    opprof_begin(&site_leaf);
    g_inst_sink = x;
    opprof_end(&site_leaf);
    return x + 1;
}

typedef int (*leaf_fn)(int);

static double per_call(leaf_fn f, long n)
{
    int x = 0;
    double t0 = now_s();
    for (long i = 0; i < n; i++) x = f(x);
    double t = now_s() - t0;
    g_inst_sink = x;
    return t * 1e9 / (double)n;
}

static void start(void)
{
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.max_events = 1ull << 40;
    if (opprof_start(&cfg) != 0) {
        fprintf(stderr, "bench_instrument: start failed: %s\n", opprof_last_error());
        exit(1);
    }
}

static void stop_expect(long n, const char *name)
{
    opprof_trace *t = NULL;
    opprof_event e;
    if (opprof_stop(&t) != 0 || (long)opprof_trace_event_count(t) != n ||
        (n && (opprof_trace_event(t, 0, &e) != 0 || strcmp(e.name, name) != 0))) {
        fprintf(stderr, "bench_instrument: expected %ld events %s, got %zu\n", n, name, opprof_trace_event_count(t));
        exit(1);
    }
    opprof_trace_free(t);
}

static void row(const char *name, series *s, const char *target)
{
    printf("%-46s %9.2f %9.2f %9s\n", name, series_fastest(s), series_median(s), target);
}

int main(int argc, char **argv)
{
    long n = 200000;
    int rounds = 30;
    if (block_args("bench_instrument", argc, argv, &n, &rounds) != 0) return 2;
    opprof_function_exclude("inst_excluded_*");
    series bare = {0}, plain = {0}, inst = {0}, ratio = {0}, excl = {0}, off = {0};
    series *all[] = {&bare, &plain, &inst, &ratio, &excl, &off};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) all[i]->v = calloc((size_t)rounds, sizeof(double));

    start(); /* first sight of each function: the lookups */
    per_call(inst_leaf, 1000);
    per_call(inst_excluded_leaf, 1000);
    stop_expect(1000, "inst_leaf");
    for (int r = 0; r < rounds; r++) {
        bare.v[bare.n++] = per_call(bare_leaf, n);
        off.v[off.n++] = per_call(inst_leaf, n);
        start();
        double p = per_call(plain_leaf, n);
        stop_expect(n, "plain_leaf");
        start();
        double q = per_call(inst_leaf, n);
        stop_expect(n, "inst_leaf");
        start();
        excl.v[excl.n++] = per_call(inst_excluded_leaf, n);
        stop_expect(0, "");
        plain.v[plain.n++] = p;
        inst.v[inst.n++] = q;
        ratio.v[ratio.n++] = q / p;
    }
    /* Each case's fastest block is the figure least disturbed by other work
     * on a shared machine; the ratio's median is over the rounds, each
     * measured back to back. */
    double fb = series_fastest(&bare), fp = series_fastest(&plain), fi = series_fastest(&inst);
    printf("bench_instrument: blocks of %ld calls, %d rounds\n", n, rounds);
    printf("%-46s %9s %9s %9s\n", "case (ns per call)", "fastest", "median", "target");
    row("empty function, not instrumented", &bare, "-");
    row("empty function + plain begin/end", &plain, "-");
    row("instrumented function, recorded", &inst, "-");
    row("instrumented, excluded", &excl, "-");
    row("instrumented, no session", &off, "-");
    printf("%-46s %9.2f %9.2f %9s\n", "ratio instrumented / plain begin/end", fi / fp, series_median(&ratio), "<= 1.50");
    printf("%-46s %9.2f %9s %9s\n", "cost per recorded instrumented call", fi - fb, "-", "-");
    printf("%-46s %9.2f %9s %9s\n", "cost per excluded instrumented call", series_fastest(&excl) - fb, "-", "-");
    printf("%-46s %9.2f %9s %9s\n", "cost per instrumented call, no session", series_fastest(&off) - fb, "-", "-");
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]->v);
    return 0;
}

/* bench_stacks: the cost of with_stack, per operator, against a plain
 * begin/end and against libunwind's walk alone, measured in the same run.
 *
 *   build/bin/bench_stacks [--block N] [--rounds R] [--depth D]
 *
 * Every range begins at the bottom of a call chain deeper than D, so each
 * begin walks D frames. "one stack" repeats one call path (a loop: the table
 * finds the stack); "1024 stacks" cycles through 1024 call paths (the table
 * holds many stacks). Issue 8's target: <= 300 ns per operator at depth 10
 * (Tracy measures 306 ns on an i7-8700K). */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opprof_trace.h"
#include "timing.h"

OPPROF_SITE(site_op, "bench::op");

#define NOINLINE __attribute__((noinline))

static volatile uint64_t g_sink;
static int g_depth = 10;

enum { WORK_RANGES, WORK_UNWIND };

static NOINLINE void leaf(int work, long n)
{
    void *buf[128];
    for (long i = 0; i < n; i++) {
        if (work == WORK_RANGES) {
            opprof_begin(&site_op);
            opprof_end(&site_op);
        } else {
            g_sink += (uint64_t)unw_backtrace(buf, g_depth);
        }
    }
}

/* Two call sites per level: the bits of path choose the frames. */
static NOINLINE void chain(int level, unsigned path, int work, long n);

static NOINLINE void left(int level, unsigned path, int work, long n)
{
    chain(level, path, work, n);
    g_sink++;
}

static NOINLINE void right(int level, unsigned path, int work, long n)
{
    chain(level, path, work, n);
    g_sink += 2;
}

static NOINLINE void chain(int level, unsigned path, int work, long n)
{
    if (level == 0) leaf(work, n);
    else if (path & 1) right(level - 1, path >> 1, work, n);
    else left(level - 1, path >> 1, work, n);
    g_sink++;
}

/* ns per range (or per walk) over n, in `paths` call paths. */
static double run(int work, long n, unsigned paths)
{
    long per = n / paths;
    double t0 = now_s();
    for (unsigned p = 0; p < paths; p++) chain(g_depth + 2, p, work, per);
    return (now_s() - t0) * 1e9 / (double)(per * paths);
}

static void start(int with_stack)
{
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.with_stack = with_stack;
    cfg.max_stack_depth = (unsigned)g_depth;
    cfg.max_events = 1ull << 40;
    if (opprof_start(&cfg) != 0) {
        fprintf(stderr, "bench_stacks: start failed: %s\n", opprof_last_error());
        exit(1);
    }
}

static void stop_expect(long n, unsigned want_depth)
{
    opprof_trace *t = NULL;
    if (opprof_stop(&t) != 0 || (long)opprof_trace_event_count(t) != n) {
        fprintf(stderr, "bench_stacks: expected %ld events, got %zu\n", n, opprof_trace_event_count(t));
        exit(1);
    }
    if (want_depth && opprof_trace_event_stack_depth(t, 0) != want_depth) {
        fprintf(stderr, "bench_stacks: expected %u frames, got %u\n", want_depth, opprof_trace_event_stack_depth(t, 0));
        exit(1);
    }
    opprof_trace_free(t);
}

static void row(const char *name, series *s, const char *target)
{
    double f = series_fastest(s), m = series_median(s);
    printf("%-40s %9.1f %9.1f %9s\n", name, f, m, target);
}

int main(int argc, char **argv)
{
    long n = 100000;
    int rounds = 15;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--block") && i + 1 < argc) n = atol(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--depth") && i + 1 < argc) g_depth = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_stacks [--block N] [--rounds R] [--depth D]\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > 1000 || n < 4096 || g_depth < 1 || g_depth > 100) {
        fprintf(stderr, "bench_stacks: need --rounds 1..1000, --block >= 4096, --depth 1..100\n");
        return 2;
    }
    n -= n % 1024;
    series plain = {0}, one = {0}, many = {0}, walk = {0}, extra = {0};
    series *all[] = {&plain, &one, &many, &walk, &extra};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) all[i]->v = calloc((size_t)rounds, sizeof(double));

    /* First sessions: libunwind's caches and the stack table fill. */
    start(1);
    run(WORK_RANGES, n, 1024);
    stop_expect(n, 0);
    for (int r = 0; r < rounds; r++) {
        start(0);
        double p = run(WORK_RANGES, n, 1);
        plain.v[plain.n++] = p;
        stop_expect(n, 0);

        start(1);
        double o = run(WORK_RANGES, n, 1);
        one.v[one.n++] = o;
        stop_expect(n, (unsigned)g_depth);
        extra.v[extra.n++] = o - p;

        start(1);
        many.v[many.n++] = run(WORK_RANGES, n, 1024);
        stop_expect(n, (unsigned)g_depth);

        walk.v[walk.n++] = run(WORK_UNWIND, n, 1);
    }
    printf("bench_stacks: blocks of %ld ranges, %d rounds, depth %d\n", n, rounds, g_depth);
    printf("%-40s %9s %9s %9s\n", "case (ns per operator)", "fastest", "median", "target");
    row("begin/end, no stack", &plain, "-");
    row("begin/end with_stack, one stack", &one, "<= 300");
    row("begin/end with_stack, 1024 stacks", &many, "<= 300");
    row("  with_stack minus plain, same round", &extra, "-");
    row("unw_backtrace alone (reference)", &walk, "-");
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]->v);
    return 0;
}

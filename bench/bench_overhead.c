/* bench_overhead: the cost of recording, against the floor of two clock
 * reads and a store, measured in the same run.
 *
 *   build/bin/bench_overhead [--block N] [--rounds R]
 *
 * Prints one table: ns per range for each case, its ratio to the floor and
 * the target (issue 2; issue 18 for 1M-event blocks: fresh memory, 4 input
 * shapes and their bytes), then bytes per recorded event. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture/clock.h"
#include "capture/state.h"
#include "opprof_trace.h"
#include "timing.h"

OPPROF_SITE(site_op, "bench::op");

static volatile uint64_t g_sink[1024];

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The floor: what any recorder must do at least, two timestamps and a store. */
static double floor_ns(long n)
{
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        uint64_t a = op_cycles();
        uint64_t b = op_cycles();
        g_sink[i & 1023] = b - a;
    }
    return (now_s() - t0) * 1e9 / (double)n;
}

static double plain_ns(long n)
{
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        opprof_begin(&site_op);
        opprof_end(&site_op);
    }
    return (now_s() - t0) * 1e9 / (double)n;
}

static double shapes_ns(long n)
{
    opprof_input in[4] = {
        {OPPROF_DTYPE_FLOAT, 4, {5, 64, 56, 56}},
        {OPPROF_DTYPE_FLOAT, 4, {64, 64, 3, 3}},
        {OPPROF_DTYPE_FLOAT, 1, {64}},
        {OPPROF_DTYPE_SCALAR, 0, {0}},
    };
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        opprof_begin_inputs(&site_op, in, 4);
        opprof_end(&site_op);
    }
    return (now_s() - t0) * 1e9 / (double)n;
}

/* Stops the session and checks that every range of the block was kept;
 * the stop's ns per event (the model built from the records, which a
 * session that keeps events pays at its stop). */
static double g_stop_cpu_ns; /* the last stop's thread CPU time per event */

static double stop_expect(long n)
{
    opprof_trace *t = NULL;
    double t0 = now_s(), c0 = thread_cpu_s();
    int rc = opprof_stop(&t);
    double ns = (now_s() - t0) * 1e9 / (double)n;
    g_stop_cpu_ns = (thread_cpu_s() - c0) * 1e9 / (double)n;
    if (rc != 0 || (long)opprof_trace_event_count(t) != n) {
        fprintf(stderr, "bench_overhead: expected %ld events, got %zu\n", n, opprof_trace_event_count(t));
        exit(1);
    }
    opprof_trace_free(t);
    return ns;
}

static void start(int shapes)
{
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.record_shapes = shapes;
    cfg.max_events = 1ull << 40;
    if (opprof_start(&cfg) != 0) {
        fprintf(stderr, "bench_overhead: start failed: %s\n", opprof_last_error());
        exit(1);
    }
}

/* Bytes the calling thread's buffers hold now. */
static size_t buffer_bytes(void)
{
    return op_thread_bytes(op_tls);
}

/* Two recording threads, created once and kept, as a program's workers
 * are: each round both join the round's session and record a block at
 * once. (Threads created per round measured the scheduler instead: a new
 * thread often starts on the CPU of the other new one and shares it until
 * the load balancer moves it, which doubled one thread's time.) */
typedef struct pair {
    long n;
    int quit;
    double ns[2];
    pthread_barrier_t go, done;
    pthread_t th[2];
} pair;

static pair g_pair;

/* Worker k of g_pair. */
static void *par_worker(void *arg)
{
    int k = (int)(intptr_t)arg;
    pair *p = &g_pair;
    for (;;) {
        pthread_barrier_wait(&p->go);
        if (p->quit) return NULL;
        p->ns[k] = plain_ns(p->n);
        pthread_barrier_wait(&p->done);
    }
}

static void pair_start(long n)
{
    pair *p = &g_pair;
    p->n = n;
    p->quit = 0;
    pthread_barrier_init(&p->go, NULL, 3);
    pthread_barrier_init(&p->done, NULL, 3);
    for (int i = 0; i < 2; i++) {
        if (pthread_create(&p->th[i], NULL, par_worker, (void *)(intptr_t)i) != 0) {
            fprintf(stderr, "bench_overhead: pthread_create failed\n");
            exit(1);
        }
    }
}

/* Per-thread ns per range of one block recorded by both threads at once. */
static double parallel_ns(void)
{
    pair *p = &g_pair;
    pthread_barrier_wait(&p->go);
    pthread_barrier_wait(&p->done);
    return (p->ns[0] + p->ns[1]) / 2;
}

static void pair_stop(void)
{
    pair *p = &g_pair;
    p->quit = 1;
    pthread_barrier_wait(&p->go);
    for (int i = 0; i < 2; i++) pthread_join(p->th[i], NULL);
    pthread_barrier_destroy(&p->go);
    pthread_barrier_destroy(&p->done);
}

/* Every case runs in short blocks, interleaved with the floor, R times. The
 * table gives each case's fastest block (the figure least disturbed by other
 * work on a shared machine, taken the same way for the floor) and the median
 * block. The first session of the process runs on freshly mapped chunks,
 * which the pool keeper faults in on another core ahead of the recording
 * thread; later ones reuse chunks kept in the pool, and "fresh memory" shows
 * the difference. Its opprof_stop builds the model on fresh memory too. */
static void row(const char *name, series *s, double floor_fast, double floor_med, const char *target)
{
    double f = series_fastest(s), m = series_median(s);
    if (floor_fast > 0)
        printf("%-44s %9.2f %9.2f %9.2f %9.2f %9s\n", name, f, m, f / floor_fast, m / floor_med, target);
    else
        printf("%-44s %9.2f %9.2f %9s %9s %9s\n", name, f, m, "-", "-", target);
}

int main(int argc, char **argv)
{
    long n = 200000;
    int rounds = 30;
    if (block_args("bench_overhead", argc, argv, &n, &rounds) != 0) return 2;
    series fl = {0}, pl = {0}, sh = {0}, off = {0}, one = {0}, two = {0}, ratio2 = {0}, stp = {0}, stpc = {0};
    series *all[] = {&fl, &pl, &sh, &off, &one, &two, &ratio2, &stp, &stpc};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) all[i]->v = calloc((size_t)rounds, sizeof(double));

    /* The recording thread's CPU time too: on a loaded machine it shows
     * whether this thread still faults fresh pages in, which wall time
     * (sharing the cores with the pool keeper and everything else) blurs. */
    double c0 = thread_cpu_s();
    double fresh_floor = floor_ns(n);
    double c1 = thread_cpu_s();
    start(0);
    double c2 = thread_cpu_s();
    double fresh = plain_ns(n);
    double c3 = thread_cpu_s();
    double fresh_stop = stop_expect(n), fresh_stop_cpu = g_stop_cpu_ns;

    pair_start(n);
    size_t bytes_plain = 0, bytes_shapes = 0;
    for (int r = 0; r < rounds; r++) {
        series_add(&fl, floor_ns(n));
        series_add(&off, plain_ns(n));

        start(0);
        series_add(&pl, plain_ns(n));
        bytes_plain = buffer_bytes();
        series_add(&stp, stop_expect(n));
        series_add(&stpc, g_stop_cpu_ns);

        start(1);
        series_add(&sh, shapes_ns(n));
        bytes_shapes = buffer_bytes();
        stop_expect(n);

        start(0);
        double a = plain_ns(n), b = parallel_ns();
        series_add(&one, a);
        series_add(&two, b);
        series_add(&ratio2, b / a);
        stop_expect(3 * n);
    }
    pair_stop();
    double ff = series_fastest(&fl), fm = series_median(&fl);
    printf("bench_overhead: blocks of %ld ranges, %d rounds\n", n, rounds);
    printf("%-44s %9s %9s %9s %9s %9s\n", "case (ns per range)", "fastest", "median", "x floor", "x floor", "target");
    row("floor: 2 clock reads + 1 store", &fl, ff, fm, "-");
    row("begin/end, static name", &pl, ff, fm, "<= 1.30");
    row("begin/end, 4 input shapes recorded", &sh, ff, fm, "<= 1.50");
    row("begin/end, no session active", &off, 0, 0, "<= 2 ns");
    printf("%-44s %9.2f %9s %9.2f %9s %9s\n", "begin/end, first session (fresh memory)", fresh, "-", fresh / fresh_floor, "-",
           "<= 1.30");
    printf("%-44s %9.2f %9s %9.2f %9s %9s\n", "  its thread CPU time (floor's the same way)", (c3 - c2) * 1e9 / (double)n, "-",
           (c3 - c2) / (c1 - c0), "-", "-");
    printf("%-44s %9.2f %9s %9s %9s %9s\n", "opprof_stop, events kept, first session", fresh_stop, "-", "-", "-",
           "<= 30 ns");
    printf("%-44s %9.2f %9s %9s %9s %9s\n", "  its thread CPU time", fresh_stop_cpu, "-", "-", "-", "-");
    row("opprof_stop, events kept (ns per event)", &stp, 0, 0, "<= 30 ns");
    row("  its thread CPU time", &stpc, 0, 0, "-");
    row("2 threads at once, per thread", &two, 0, 0, "-");
    row("  ratio to 1 thread in the same round", &ratio2, 0, 0, "<= 1.20");
    printf("%-44s %9.1f %9s %9s %9s %9s\n", "bytes per event, no shapes", (double)bytes_plain / (double)n, "-", "-", "-", "<= 32");
    printf("%-44s %9.1f %9s %9s %9s %9s\n", "bytes per event, 4 shapes", (double)bytes_shapes / (double)n, "-", "-", "-", "<= 32");
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]->v);
    return 0;
}

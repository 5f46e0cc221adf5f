/* The flight recorder's costs:
 *
 *   bench_flight [--rounds R] [--threads N] [--size PX] [--batch B] [--ring SIZE] [--dump-dir DIR]
 *
 * 1. Steady state on a ResNet-18 training step (what opprof run
 *    resnet18-train runs): each round times one step without profiling and
 *    one with the recorder running (started before, stopped after, outside
 *    the timing), interleaved so that drift on a shared machine falls on
 *    both alike; prints the medians and flight/plain, in wall time and in
 *    process CPU time (with one thread, --threads 1, the default, time the
 *    machine gave to other programs does not count).
 * 2. A dump of a full ring: one thread fills a 64 MiB ring (and wraps it),
 *    then opprof_flight_dump writes it; prints the time to read the ring
 *    and write the trace, in wall time and in CPU time (the writer's: the
 *    caller only waits). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opprof_trace.h"
#include "opprof_nn.h"
#include "timing.h"

#define MAX_ROUNDS 100

/* How many events a dump holds. */
static size_t events_in(const char *path)
{
    opprof_trace *t = NULL;
    size_t n = opprof_trace_load(path, &t) == OPPROF_OK ? opprof_trace_event_count(t) : 0;
    opprof_trace_free(t);
    return n;
}

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One step's wall time; *cpu its process CPU time. */
static double train_step(opprof_nn_model *m, opprof_nn_sgd *sgd, opprof_nn_tensor *x, const int64_t *targets, double *cpu)
{
    float loss;
    double c0 = cpu_s(), t0 = now_s();
    if (opprof_nn_train_step(m, sgd, x, targets, &loss) != 0) exit(1);
    double t = now_s() - t0;
    if (cpu) *cpu = cpu_s() - c0;
    return t;
}

int main(int argc, char **argv)
{
    int rounds = 5, threads = 1;
    long size = 224, batch = 8;
    size_t ring = 64u << 20;
    const char *dir = "/tmp";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--size")) size = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--threads")) threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--batch")) batch = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--ring") && opprof_parse_size(argv[i + 1], &ring) == OPPROF_OK) continue;
        else if (!strcmp(argv[i], "--dump-dir")) dir = argv[i + 1];
        else {
            fprintf(stderr, "usage: bench_flight [--rounds R] [--threads N] [--size PX] [--batch B] [--ring SIZE] [--dump-dir DIR]\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > MAX_ROUNDS) rounds = 5;
    opprof_nn_set_threads(threads);
    opprof_nn_model *m = NULL;
    opprof_nn_sgd *sgd = NULL;
    opprof_nn_tensor *x = NULL;
    int64_t d[4] = {batch, 3, size, size};
    int64_t *targets = calloc((size_t)batch, sizeof *targets);
    opprof_nn_sgd_options so = {0.01f, 0.9f, 0.0f, 1e-4f, 0};
    if (!targets || opprof_nn_resnet18(1000, 0, &m) || opprof_nn_tensor_new(4, d, &x) || opprof_nn_sgd_new(m, &so, &sgd))
        return 1;
    opprof_nn_tensor_normal(x, 0, 1, 2);
    for (long i = 0; i < batch; i++) targets[i] = (i * 7) % 1000;
    train_step(m, sgd, x, targets, NULL); /* warm-up: allocations, caches */

    double plain[MAX_ROUNDS], flight[MAX_ROUNDS], cplain[MAX_ROUNDS], cflight[MAX_ROUNDS];
    opprof_flight_config fc;
    opprof_flight_config_init(&fc);
    fc.ring_bytes = ring;
    fc.signal = -1;
    for (int r = 0; r < rounds; r++) {
        plain[r] = train_step(m, sgd, x, targets, &cplain[r]);
        if (opprof_flight_start(&fc) != OPPROF_OK) return 1;
        train_step(m, sgd, x, targets, NULL); /* the rings' first chunks mapped: steady state from here */
        flight[r] = train_step(m, sgd, x, targets, &cflight[r]);
        opprof_step();
        if (opprof_flight_stop() != OPPROF_OK) return 1;
    }
    double mp = median(plain, rounds), mf = median(flight, rounds);
    double cp = median(cplain, rounds), cf = median(cflight, rounds);
    printf("resnet18-train step (batch %ld, %ldx%ld, %d thread%s), median of %d rounds:\n"
           "  wall: plain %.1f ms, flight recorder %.1f ms: flight/plain %.4f\n"
           "  cpu:  plain %.1f ms, flight recorder %.1f ms: flight/plain %.4f\n",
           batch, size, size, opprof_nn_threads(), opprof_nn_threads() == 1 ? "" : "s", rounds, mp * 1e3, mf * 1e3,
           mf / mp, cp * 1e3, cf * 1e3, cf / cp);
    fflush(stdout);

    /* 2: a full ring's dump. */
    static const opprof_site site = OPPROF_SITE_INIT("bench::range", OPPROF_CAT_CPU_OP, NULL);
    fc.ring_bytes = 64u << 20;
    /* No on_dump: the recorder's own line on stderr says how the time splits. */
    if (opprof_flight_start(&fc) != OPPROF_OK) return 1;
    const long n = (long)(fc.ring_bytes / 24) * 5 / 4; /* 24 bytes a range: a quarter more than the ring holds */
    for (long i = 0; i < n; i++) {
        opprof_begin(&site);
        opprof_end(&site);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/bench_flight_dump.json", dir);
    double t0 = now_s(), c0 = cpu_s(); /* the caller waits: the process's CPU time is the writer's */
    if (opprof_flight_dump(path) != OPPROF_OK) return 1;
    double total = now_s() - t0, cpu = cpu_s() - c0;
    opprof_flight_stop();
    printf("dump of a full 64 MiB ring (%zu events after %ld recorded): %.3f s (%.3f s of CPU) to read and write %s\n",
           events_in(path), n, total, cpu, path);
    remove(path);
    opprof_nn_sgd_free(sgd);
    opprof_nn_model_free(m);
    opprof_nn_tensor_release(x);
    free(targets);
    opprof_nn_shutdown();
    return 0;
}

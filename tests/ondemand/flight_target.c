/* The flight recorder's slow-step test program (library API):
 *
 *   flight_target DUMP_PATTERN STEPS SLOW_STEP DELAY_MS [RING [MAX_DUMPS [RANGE]]]
 *
 * runs STEPS steps of a few short ranges each; step STEPS*9/10 also
 * sleeps DELAY_MS inside a "slow_work" range. The
 * recorder dumps to DUMP_PATTERN when a step is slower than SLOW_STEP
 * ("20ms" or "1.5x"), of opprof_step intervals or, given RANGE, of the
 * "step_body" ranges around each step's work. Prints the slow step's number and the dumps written;
 * exits 0 when at least one dump was written. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "opprof_trace.h"

OPPROF_SITE(k_fwd, "forward");
OPPROF_SITE(k_bwd, "backward");
OPPROF_SITE(k_slow, "slow_work");
OPPROF_SITE(k_body, "step_body");

static volatile unsigned g_sink;

static void work(unsigned n)
{
    for (unsigned i = 0; i < n; i++) g_sink = g_sink + i;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: flight_target DUMP_PATTERN STEPS SLOW_STEP DELAY_MS [RING [MAX_DUMPS [RANGE]]]\n");
        return 2;
    }
    long steps = atol(argv[2]), slow = steps * 9 / 10;
    opprof_flight_config fc;
    opprof_flight_config_init(&fc);
    fc.path = argv[1];
    if (argc > 6) fc.max_slow_dumps = (unsigned)atoi(argv[6]);
    if (argc > 7) fc.slow_range = argv[7];
    if (opprof_parse_slow_step(argv[3], &fc.slow_step_ns, &fc.slow_step_ratio) != OPPROF_OK ||
        (argc > 5 && opprof_parse_size(argv[5], &fc.ring_bytes) != OPPROF_OK)) {
        fprintf(stderr, "flight_target: %s\n", opprof_last_error());
        return 2;
    }
    int rc = opprof_flight_start(&fc);
    if (rc) {
        fprintf(stderr, "flight_target: %s\n", opprof_last_error());
        return 1;
    }
    for (long s = 0; s < steps; s++) {
        opprof_begin(&k_body);
        opprof_begin(&k_fwd);
        work(2000);
        opprof_end(&k_fwd);
        opprof_begin(&k_bwd);
        work(2000);
        opprof_end(&k_bwd);
        if (s == slow) {
            opprof_begin(&k_slow);
            struct timespec ts = {0, atol(argv[4]) * 1000000L};
            nanosleep(&ts, NULL);
            opprof_end(&k_slow);
        }
        opprof_end(&k_body);
        opprof_step();
    }
    rc = opprof_flight_stop(); /* waits for the dump asked for */
    printf("slow step %ld, dumps %llu\n", slow, (unsigned long long)opprof_flight_dumps());
    return rc == OPPROF_OK && opprof_flight_dumps() > 0 ? 0 : 1;
}

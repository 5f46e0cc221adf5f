/* A long job for the on-demand and flight-recorder tests, linked with
 * libopprof.so so that OPPROF_ON_DEMAND / OPPROF_FLIGHT start what they
 * ask for when the library loads.
 *
 *   od_target SECONDS [STOP_FILE [nostep]]
 *                          steps of ~200 us ("work" ranges and opprof_step)
 *                          for SECONDS, or until STOP_FILE exists (looked
 *                          for every 10 ms; "-": none); prints "start" and
 *                          "done", exits 7. With nostep it never calls
 *                          opprof_step.
 *
 * Its stdout and exit status are the same whether or not it is profiled. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "opprof.h"

OPPROF_SITE(k_work, "work");
OPPROF_SITE(k_inner, "inner");

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile double g_sink;

static void spin(double seconds)
{
    double end = now_s() + seconds;
    while (now_s() < end) g_sink = g_sink + 1;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    const char *stop = argc > 2 && strcmp(argv[2], "-") != 0 ? argv[2] : NULL;
    int steps = !(argc > 3 && !strcmp(argv[3], "nostep"));
    printf("start\n");
    fflush(stdout);
    double end = now_s() + secs, look = 0;
    while (now_s() < end) {
        if (stop && now_s() >= look) {
            if (access(stop, F_OK) == 0) break;
            look = now_s() + 0.01;
        }
        opprof_begin(&k_work);
        opprof_begin(&k_inner);
        spin(100e-6);
        opprof_end(&k_inner);
        spin(100e-6);
        opprof_end(&k_work);
        if (steps) (void)opprof_step(); /* no session while idle: nothing happens */
    }
    printf("done\n");
    return 7;
}

/* A program that knows nothing of opprof, built with
 * -finstrument-functions, for opprof exec --on-demand and --flight:
 *
 *   exec_loop SECONDS [STOP_FILE]
 *                         calls work() (and inner()) for SECONDS, or until
 *                         STOP_FILE exists (looked for every 10 ms);
 *                         prints "start" and "done", exits 3 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile double g_sink;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void inner(void)
{
    for (int i = 0; i < 20000; i++) g_sink = g_sink + i;
}

__attribute__((noinline)) static void work(void)
{
    inner();
    inner();
}

int main(int argc, char **argv)
{
    double end = now_s() + (argc > 1 ? atof(argv[1]) : 1.0), look = 0;
    const char *stop = argc > 2 ? argv[2] : NULL;
    printf("start\n");
    fflush(stdout);
    while (now_s() < end) {
        if (stop && now_s() >= look) {
            if (access(stop, F_OK) == 0) break;
            look = now_s() + 0.01;
        }
        work();
    }
    printf("done\n");
    return 3;
}

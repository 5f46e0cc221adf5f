/* A program that knows nothing of opprof and does what daemons and servers
 * do at start: closes every descriptor above 2, then opens its own files,
 * which take the same numbers. Built with -finstrument-functions.
 *
 *   fd_target DIR [MODE]   closes descriptors 3 and up (closefrom), opens
 *                          DIR/log0..log5 and writes one line to each,
 *                          left in stdio's buffer until exit; prints
 *                          "ready"; calls work() 2000 times, or with
 *                          MODE "wait" until DIR/stop exists; prints "done"
 *                          and exits 0, which flushes the logs. MODE
 *                          "wait_exit": the same, then _exit(0) (no exit
 *                          handlers, nothing flushed). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile double g_sink;

__attribute__((noinline)) static void inner(void)
{
    for (int i = 0; i < 2000; i++) g_sink = g_sink + i;
}

__attribute__((noinline)) static void work(void)
{
    inner();
    inner();
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    closefrom(3);
    FILE *log[6];
    char path[4096];
    for (int i = 0; i < 6; i++) {
        snprintf(path, sizeof path, "%s/log%d", argv[1], i);
        if (!(log[i] = fopen(path, "w"))) return 4;
        fprintf(log[i], "log %d: one buffered line\n", i);
    }
    printf("ready\n");
    fflush(stdout);
    char stop[4096];
    snprintf(stop, sizeof stop, "%s/stop", argv[1]);
    int wait = argc > 2 && !strncmp(argv[2], "wait", 4);
    for (long n = 0; wait ? access(stop, F_OK) != 0 : n < 2000; n++) work();
    printf("done\n");
    if (argc > 2 && !strcmp(argv[2], "wait_exit")) _exit(0);
    return 0; /* exit flushes and closes the logs */
}

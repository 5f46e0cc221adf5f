/* Benchmarks that measure a whole process: run it, time it from spawn to
 * exit, and read its peak resident memory. */
#ifndef OPPROF_BENCH_CHILD_H
#define OPPROF_BENCH_CHILD_H

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "timing.h"

extern char **environ;

/* Runs argv (found on PATH) to completion with stdout to /dev/null; returns
 * its wall time in seconds and its peak RSS in KiB. Exits when it cannot
 * start or does not exit 0: a benchmark of a failed run means nothing. */
static inline double child_run(char *const argv[], long *maxrss_kb)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    double t0 = now_s();
    if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
        perror(argv[0]);
        exit(1);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "%s failed\n", argv[0]);
        exit(1);
    }
    double t = now_s() - t0;
    posix_spawn_file_actions_destroy(&fa);
    if (maxrss_kb) *maxrss_kb = ru.ru_maxrss;
    return t;
}

/* This program's path (to run itself, or what was built beside it); exits
 * when /proc cannot tell. */
static inline void child_self_path(char *buf, size_t cap)
{
    ssize_t len = readlink("/proc/self/exe", buf, cap - 1);
    if (len <= 0) {
        perror("/proc/self/exe");
        exit(1);
    }
    buf[len] = '\0';
}

#endif

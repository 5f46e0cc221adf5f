/* Running the target programs of the on-demand and flight tests: spawn
 * with extra variables and the output in files, wait for the listener,
 * collect the exit status. */
#ifndef OPPROF_TESTS_ONDEMAND_PROC_H
#define OPPROF_TESTS_ONDEMAND_PROC_H

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "opprof_trace.h"

/* Starts argv with the "NAME=VALUE" strings of env set, stdout and stderr
 * into out and err; returns its pid (-1 on failure). */
static inline pid_t proc_spawn(char *const *argv, const char *const *env, const char *out, const char *err)
{
    pid_t pid = fork();
    if (pid != 0) return pid;
    for (; env && *env; env++) putenv((char *)*env);
    int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644), fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(99);
    execv(argv[0], argv);
    _exit(98);
}

/* The exit status, or 1000 + signal, or -1. */
static inline int proc_wait(pid_t pid)
{
    int st;
    if (waitpid(pid, &st, 0) != pid) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 1000 + WTERMSIG(st) : -1;
}

static inline int64_t proc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* proc_wait with a deadline: -2 (and the process killed) when it has not
 * ended within ms. */
static inline int proc_wait_ms(pid_t pid, long ms)
{
    int64_t end = proc_now_ms() + ms;
    for (;;) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 1000 + WTERMSIG(st) : -1;
        if (r < 0) return -1;
        if (proc_now_ms() >= end) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -2;
        }
        struct timespec ts = {0, 5000000L};
        nanosleep(&ts, NULL);
    }
}

static inline void proc_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* How long a test waits for an event before it fails: long enough for a
 * sanitized build on a loaded 2-core machine, short beside a hang. */
#define PROC_DEADLINE_MS 60000

/* Waits up to PROC_DEADLINE_MS until pid is listed as accepting triggers:
 * 1 when it is (0 at once when pid has ended). */
static inline int proc_wait_listening(pid_t pid)
{
    char want[32];
    snprintf(want, sizeof want, "%lld ", (long long)pid);
    for (int64_t end = proc_now_ms() + PROC_DEADLINE_MS;;) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f) return 0;
        opprof_trigger_list(f);
        fclose(f);
        int found = 0;
        for (const char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
            if (!strncmp(l, want, strlen(want))) found = 1;
        siginfo_t si;
        si.si_pid = 0;
        int gone = !found && waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
        if (!found && (gone || proc_now_ms() >= end)) {
            fprintf(stderr, "proc_wait_listening: %lld %s, not in the list:\n%s\n", (long long)pid,
                    gone ? "has ended" : "still runs", buf ? buf : "");
            free(buf);
            return 0;
        }
        free(buf);
        if (found) return 1;
        proc_sleep_ms(10);
    }
}

/* Waits up to PROC_DEADLINE_MS for path to exist: 1 when it does. */
static inline int proc_wait_file(const char *path)
{
    for (int64_t end = proc_now_ms() + PROC_DEADLINE_MS; access(path, F_OK) != 0; proc_sleep_ms(10))
        if (proc_now_ms() >= end) return 0;
    return 1;
}

/* The CPU time pid has used (user + system), in clock ticks; -1 when it is
 * gone. */
static inline long proc_cpu_ticks(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%lld/stat", (long long)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the name may hold spaces */
    unsigned long ut, st;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2) return -1;
    return (long)(ut + st);
}

/* Waits until pid has used ticks more clock ticks of CPU than it had: it
 * ran, however busy the machine. 0 when it did, -1 when it ended or the
 * deadline passed. */
static inline int proc_wait_cpu(pid_t pid, long ticks)
{
    long t0 = proc_cpu_ticks(pid);
    if (t0 < 0) return -1;
    for (int64_t end = proc_now_ms() + PROC_DEADLINE_MS; proc_now_ms() < end; proc_sleep_ms(5)) {
        long t = proc_cpu_ticks(pid);
        if (t < 0) return -1;
        if (t - t0 >= ticks) return 0;
    }
    return -1;
}

/* Makes the (empty) file path: a target given it as its stop file ends. */
static inline int proc_touch(const char *path)
{
    FILE *f = fopen(path, "w");
    return f && fclose(f) == 0 ? 0 : -1;
}

/* Runs a command line, its stderr (and stdout) into err; the exit status. */
static inline int proc_run(char *const *argv, const char *out, const char *err)
{
    pid_t pid = proc_spawn(argv, NULL, out, err);
    return pid < 0 ? -1 : proc_wait(pid);
}

/* A test group's folder (templ ends in XXXXXX) with run/ inside as
 * $XDG_RUNTIME_DIR, for this process and the programs it starts: their
 * sockets stay out of the user's own folder. env_out (may be NULL) gets
 * "XDG_RUNTIME_DIR=...". 0 or -1. */
static inline int proc_group_setup(char *templ, char *env_out, size_t cap)
{
    if (!mkdtemp(templ)) return -1;
    char xdg[600];
    snprintf(xdg, sizeof xdg, "%s/run", templ);
    if (mkdir(xdg, 0700) != 0) return -1;
    if (env_out) snprintf(env_out, cap, "XDG_RUNTIME_DIR=%s", xdg);
    return setenv("XDG_RUNTIME_DIR", xdg, 1);
}

#endif

/* Running fd_target under opprof exec for this area's tests: a case's
 * folder, spawning, waiting on its exit, its "ready", and the checks of
 * its logs, outputs and leftovers. Each test program includes it once. */
#ifndef OPPROF_TESTS_FDS_TARGET_RUN_H
#define OPPROF_TESTS_FDS_TARGET_RUN_H

#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "opprof_trace.h"
#include "slurp.h"
#include "tmpdir.h"

static char g_dir[] = "/tmp/opprof_fds_XXXXXX"; /* the group's folder */
static char g_case[700]; /* this case's folder, the target's DIR */

static inline void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static inline void in_case(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", g_case, name);
}

static inline void new_case(const char *name)
{
    snprintf(g_case, sizeof g_case, "%s/%s", g_dir, name);
    assert_int_equal(mkdir(g_case, 0700), 0);
}

/* opprof exec ARGS... -- fd_target DIR [MODE] (fd_target.c: NULL, "wait"
 * or "wait_exit"), stdout and stderr into the case's folder; its pid. */
static inline pid_t spawn(const char *const *args, const char *mode)
{
    char out[800], err[800];
    in_case(out, sizeof out, "out");
    in_case(err, sizeof err, "err");
    pid_t pid = fork();
    if (pid != 0) return pid;
    char *argv[32];
    int n = 0;
    argv[n++] = getenv("OPPROF_BIN");
    argv[n++] = "exec";
    for (; *args; args++) argv[n++] = (char *)*args;
    argv[n++] = "--";
    argv[n++] = getenv("FD_TARGET");
    argv[n++] = g_case;
    if (mode) argv[n++] = (char *)mode;
    argv[n] = NULL;
    int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644), fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(99);
    execv(argv[0], argv);
    _exit(98);
}

/* The exit status within `seconds` (1000 + signal when killed by one);
 * past that the program is killed and the case fails: it did not end. */
static inline int wait_exit(pid_t pid, int seconds)
{
    for (long i = 0; i < seconds * 100L; i++) {
        int st;
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st);
        sleep_ms(10);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    fail_msg("the program did not end within %d s of being told to", seconds);
    return -1;
}

/* Waits until the program has closed its descriptors and opened its logs. */
static inline void wait_ready(void)
{
    char out[800];
    in_case(out, sizeof out, "out");
    for (int i = 0; i < 2000; i++) {
        char *o = slurp(out);
        int ready = o && strstr(o, "ready\n");
        free(o);
        if (ready) return;
        sleep_ms(10);
    }
    fail_msg("the program never said ready");
}

static inline void tell_stop(void)
{
    char stop[800];
    in_case(stop, sizeof stop, "stop");
    int fd = open(stop, O_WRONLY | O_CREAT, 0644);
    assert_true(fd >= 0);
    close(fd);
}

/* Each log holds its one line and nothing else; stdout is the program's. */
static inline void check_logs(void)
{
    for (int i = 0; i < 6; i++) {
        char path[800], want[64];
        snprintf(path, sizeof path, "%s/log%d", g_case, i);
        snprintf(want, sizeof want, "log %d: one buffered line\n", i);
        size_t len = 0;
        char *got = slurp_len(path, &len);
        if (!got || len != strlen(want) || memcmp(got, want, len) != 0)
            fail_msg("%s: %zu bytes, want %zu: '%.200s'", path, got ? len : 0, strlen(want), got ? got : "(missing)");
        free(got);
    }
    char out[800];
    in_case(out, sizeof out, "out");
    char *o = slurp(out);
    assert_non_null(o);
    assert_string_equal(o, "ready\ndone\n");
    free(o);
}

/* Calls of name in the trace at path. */
static inline size_t calls_in(const char *path, const char *name)
{
    opprof_trace *t = NULL;
    if (opprof_trace_load(path, &t) != OPPROF_OK) fail_msg("%s: %s", path, opprof_last_error());
    size_t n = 0;
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        assert_int_equal(opprof_trace_event(t, i, &e), OPPROF_OK);
        n += !strcmp(e.name, name);
    }
    opprof_trace_free(t);
    return n;
}

/* No temporary file of opprof's is left in the case's folder. */
static inline void check_no_leftovers(void)
{
    char cmd[900];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | grep -q '^\\.'", g_case);
    if (system(cmd) == 0) fail_msg("a hidden file is left in %s", g_case);
}

static inline char *err_text(void)
{
    char err[800];
    in_case(err, sizeof err, "err");
    return slurp(err);
}

static inline int setup(void **state)
{
    (void)state;
    if (tmpdir_make(g_dir) != 0) return -1;
    char run[700];
    snprintf(run, sizeof run, "%s/run", g_dir);
    if (mkdir(run, 0700) != 0) return -1;
    return setenv("XDG_RUNTIME_DIR", run, 1); /* the trigger sockets stay out of the user's folder */
}

static inline int teardown(void **state)
{
    (void)state;
    return tmpdir_remove(g_dir);
}

#endif

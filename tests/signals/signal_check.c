/* SIGINT and SIGTERM during a session the environment started
 * (libopprof_instrument.so under opprof exec, or preloaded by hand): the
 * trace recorded so far is written, atomically, marked incomplete, and the
 * program's own treatment of the signal still happens: its handlers run, a
 * signal it ignores stays ignored, and without a handler it dies of the
 * signal (the exit status says so). signal_target.c is the program. */
#include <dirent.h>
#include <errno.h>
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

static char g_dir[] = "/tmp/opprof_signals_XXXXXX";

static const char *need_env(const char *var)
{
    const char *v = getenv(var);
    if (!v) fail_msg("%s is not set (run under ctest)", var);
    return v;
}

typedef struct run_result {
    int status;     /* waitpid's */
    char out[1024]; /* the program's stdout */
    pid_t signalled;
} run_result;

/* Starts argv with stdout into a pipe (env: extra NAME=VALUE settings,
 * NULL-terminated), waits for "ready PID", gives it 30 ms more of
 * recording, sends sig to PID (0: none), and collects the rest. */
static void run_and_signal(char *const *argv, const char *const *env, int sig, int ignore_int, run_result *r)
{
    memset(r, 0, sizeof *r);
    int p[2];
    assert_int_equal(pipe(p), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        if (dup2(p[1], 1) < 0) _exit(99);
        for (int i = 0; env && env[i]; i++) putenv((char *)env[i]);
        if (ignore_int) signal(SIGINT, SIG_IGN); /* inherited across exec, as nohup does it */
        execv(argv[0], argv);
        _exit(98);
    }
    close(p[1]);
    size_t n = 0;
    for (;;) {
        ssize_t k = read(p[0], r->out + n, sizeof r->out - 1 - n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        n += (size_t)k;
        r->out[n] = '\0';
        const char *rd = strstr(r->out, "ready ");
        if (sig && !r->signalled && rd && strchr(rd, '\n')) {
            r->signalled = (pid_t)atol(rd + 6);
            struct timespec ts = {0, 30 * 1000 * 1000};
            nanosleep(&ts, NULL);
            assert_int_equal(kill(r->signalled, sig), 0);
        }
        if (n == sizeof r->out - 1) break;
    }
    close(p[0]);
    assert_int_equal(waitpid(pid, &r->status, 0), pid);
    if (sig) assert_true(r->signalled > 0);
}

static void path_in(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", g_dir, name);
}

/* Loads path; checks it holds work() events and says whether it is
 * incomplete. */
static void check_trace(const char *path, int incomplete)
{
    opprof_trace *t = NULL;
    if (opprof_trace_load(path, &t) != OPPROF_OK) fail_msg("%s: %s", path, opprof_last_error());
    size_t n = opprof_trace_event_count(t), works = 0;
    for (size_t i = 0; i < n; i++) {
        opprof_event e;
        opprof_trace_event(t, i, &e);
        if (!strcmp(e.name, "work")) works++;
    }
    print_message("%s: %zu events, %zu work, incomplete %d\n", path, n, works, opprof_trace_incomplete(t));
    assert_true(works >= 20);
    assert_int_equal(opprof_trace_incomplete(t), incomplete);
    opprof_trace_free(t);
}

/* Nothing but the expected files: no temporary file left behind. */
static void check_only(const char *dir, int expected)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (e->d_name[0] == '.') fail_msg("temporary file left in %s: %s", dir, e->d_name);
        n++;
    }
    closedir(d);
    assert_int_equal(n, expected);
}

static int g_streamed; /* exec_case: a streamed trace (no cap): 1 gzip'd JSON, 2 .pftrace */

/* opprof exec --trace DIR/name.json -- signal_target mode; with a cap, so
 * that the events are kept to the end, unless g_streamed */
static void exec_case(const char *name, const char *mode, int sig, int ignore_int, run_result *r, char *trace,
                      size_t cap)
{
    char sub[512];
    path_in(sub, sizeof sub, name);
    assert_int_equal(mkdir(sub, 0755), 0);
    snprintf(trace, cap, "%s/trace.%s", sub, g_streamed == 2 ? "pftrace" : g_streamed ? "json.gz" : "json");
    char *argv[] = {(char *)need_env("OPPROF_BIN"), "exec", "--trace", trace, "--max-events", "200000",
                    "--", (char *)need_env("SIGNAL_TARGET"), (char *)mode, NULL};
    if (g_streamed) memmove(argv + 4, argv + 6, 4 * sizeof *argv);
    run_and_signal(argv, NULL, sig, ignore_int, r);
}

static void dies_of(const run_result *r, int sig)
{
    if (!WIFSIGNALED(r->status))
        fail_msg("expected death by signal %d, got exit %d; stdout: %s", sig, WEXITSTATUS(r->status), r->out);
    assert_int_equal(WTERMSIG(r->status), sig);
}

/* signal_target `mode` under opprof exec, sent `sig` (with SIGINT ignored
 * from the start when ignore_int): it ends with exit status `code` (or,
 * negative, dies of signal -code), its stdout has `says`, its trace holds
 * work() events, marked incomplete or not, and nothing else is left in its
 * folder. */
static void exec_expect(const char *name, const char *mode, int sig, int ignore_int, int code, const char *says,
                        int incomplete)
{
    run_result r;
    char trace[600];
    exec_case(name, mode, sig, ignore_int, &r, trace, sizeof trace);
    if (code < 0) {
        dies_of(&r, -code);
    } else {
        if (!WIFEXITED(r.status)) fail_msg("%s: died of signal %d", name, WTERMSIG(r.status));
        assert_int_equal(WEXITSTATUS(r.status), code);
    }
    if (says && !strstr(r.out, says)) fail_msg("%s: stdout '%s' does not say '%s'", name, r.out, says);
    check_trace(trace, incomplete);
    *strrchr(trace, '/') = '\0';
    check_only(trace, 1);
}

static void test_no_handler_sigint_and_sigterm(void **state)
{
    (void)state;
    exec_expect("default_int", "default", SIGINT, 0, -SIGINT, NULL, 1);
    exec_expect("default_term", "default", SIGTERM, 0, -SIGTERM, NULL, 1);
}

static void test_handler_that_exits_still_runs(void **state)
{
    (void)state;
    exec_expect("exit", "exit", SIGTERM, 0, 42, "handled 15\n", 1);
}

/* The trace is written at the signal; the program's exit has nothing more. */
static void test_handler_that_sets_a_flag_still_runs(void **state)
{
    (void)state;
    exec_expect("flag", "flag", SIGINT, 0, 0, "stopped 2\n", 1);
}

/* Ignored by the program: no effect, and the trace at exit is complete. An
 * ignored disposition inherited across exec (nohup) stays too. */
static void test_ignored_signals_stay_ignored(void **state)
{
    (void)state;
    exec_expect("ignore", "ignore", SIGTERM, 0, 0, "finished\n", 0);
    exec_expect("nohup", "ignore", SIGINT, 1, 0, "finished\n", 0);
}

/* Other threads keep recording while the trace is written. */
static void test_other_threads_keep_recording(void **state)
{
    (void)state;
    exec_expect("threads", "threads", SIGTERM, 0, -SIGTERM, NULL, 1);
}

/* A streamed trace (written as the program runs) is whole too when a
 * signal ends the run, whatever the program does with the signal, with
 * threads still recording, or when the program ends early on its own. */
static void test_streamed_trace_of_a_signalled_run_is_whole(void **state)
{
    (void)state;
    g_streamed = 1;
    exec_expect("s_default_term", "default", SIGTERM, 0, -SIGTERM, NULL, 1);
    exec_expect("s_exit", "exit", SIGTERM, 0, 42, "handled 15\n", 1);
    exec_expect("s_flag", "flag", SIGINT, 0, 0, "stopped 2\n", 1);
    exec_expect("s_threads", "threads", SIGTERM, 0, -SIGTERM, NULL, 1);
    exec_expect("s_ignore", "ignore", SIGTERM, 0, 0, "finished\n", 0);
    g_streamed = 2; /* Perfetto's format, its metadata instant last */
    exec_expect("p_default_term", "default", SIGTERM, 0, -SIGTERM, NULL, 1);
    exec_expect("p_threads", "threads", SIGTERM, 0, -SIGTERM, NULL, 1);
    exec_expect("p_ignore", "ignore", SIGTERM, 0, 0, "finished\n", 0);
    g_streamed = 0;
}

/* A forked child has no session: the signal treats it as the program
 * would; the parent's session carries on and ends complete. */
static void test_forked_child_gets_the_default(void **state)
{
    (void)state;
    exec_expect("fork", "fork", SIGINT, 0, 0, "child signal 2\n", 0);
}

/* Preloaded by hand with the documented variables: profile_{rank}.json in
 * OPPROF_OUTPUT_TRACE_DIR replaces the one a previous run left, atomically. */
/* opprof exec --table of a run that SIGTERM ended says, under the table,
 * that it is incomplete; the table of a run that finished does not. */
static void test_table_of_a_signalled_run_says_incomplete(void **state)
{
    (void)state;
    const char *const mode[2] = {"default", "ignore"};
    for (int k = 0; k < 2; k++) {
        char sub[512], table[600];
        path_in(sub, sizeof sub, k ? "table_done" : "table_cut");
        assert_int_equal(mkdir(sub, 0755), 0);
        snprintf(table, sizeof table, "%s/table.txt", sub);
        char *argv[] = {(char *)need_env("OPPROF_BIN"), "exec", "--table", table, "--max-events", "200000",
                        "--", (char *)need_env("SIGNAL_TARGET"), (char *)mode[k], NULL};
        run_result r;
        run_and_signal(argv, NULL, SIGTERM, 0, &r);
        if (k == 0) dies_of(&r, SIGTERM);
        else assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
        char *text = slurp(table);
        assert_non_null(text);
        assert_non_null(strstr(text, "Self CPU time total:"));
        const char *line = strstr(text, "Incomplete: the program got a signal");
        if (k == 0 && !line) fail_msg("the table of a SIGTERM'd run does not say it is incomplete:\n%s", text);
        if (k == 1 && line) fail_msg("the table of a finished run says it is incomplete:\n%s", text);
        free(text);
    }
}

static void test_environment_session_replaces_the_previous_trace(void **state)
{
    (void)state;
    char dir[512], file[600], preload[1200], dirvar[600];
    path_in(dir, sizeof dir, "env");
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(file, sizeof file, "%s/profile_7.json", dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fputs("{\"traceEvents\": []}\n", f);
    fclose(f);
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", need_env("INSTRUMENT_LIB"));
    snprintf(dirvar, sizeof dirvar, "OPPROF_OUTPUT_TRACE_DIR=%s", dir);
    const char *env[] = {preload, dirvar, "RANK=7", "OPPROF_MAX_EVENTS=200000", NULL};
    char *argv[] = {(char *)need_env("SIGNAL_TARGET"), "default", NULL};
    run_result r;
    run_and_signal(argv, env, SIGINT, 0, &r);
    dies_of(&r, SIGINT);
    check_trace(file, 1);
    check_only(dir, 1);
}

TMPDIR_SETUP(g_dir)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_handler_sigint_and_sigterm),
        cmocka_unit_test(test_table_of_a_signalled_run_says_incomplete),
        cmocka_unit_test(test_handler_that_exits_still_runs),
        cmocka_unit_test(test_handler_that_sets_a_flag_still_runs),
        cmocka_unit_test(test_ignored_signals_stay_ignored),
        cmocka_unit_test(test_other_threads_keep_recording),
        cmocka_unit_test(test_forked_child_gets_the_default),
        cmocka_unit_test(test_streamed_trace_of_a_signalled_run_is_whole),
        cmocka_unit_test(test_environment_session_replaces_the_previous_trace),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

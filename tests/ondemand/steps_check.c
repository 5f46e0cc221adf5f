/* opprof trigger PID --steps N (issue 25, item 3): the wait for steps ends
 * at the program's exit and at the client's disconnect, the listener
 * answers --list and a second trigger while it waits, the steps recorded
 * are whole (the step under way when the trigger came is not counted) and
 * named ProfilerStep#1..N, and a program that never calls opprof_step is
 * told so at once instead of waiting out the timeout.
 *
 * Every wait has a deadline (proc_wait_ms): on a listener that wedges, the
 * test fails in seconds instead of hanging. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "proc.h"
#include "slurp.h"
#include "tmpdir.h"

static char g_dir[] = "/tmp/opprof_steps_XXXXXX";
static char g_xdg_env[700];

/* Generous for a loaded 2-core machine under TSan; a wedged listener
 * takes minutes (its default --timeout is 10). */
#define DEADLINE_MS 60000

static void path_in(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", g_dir, name);
}

/* od_target with on demand: for secs, or until the file stop exists. */
static pid_t start_target(const char *secs, const char *stop, int nostep, const char *tag)
{
    char out[600], err[600];
    snprintf(out, sizeof out, "%s/%s.out", g_dir, tag);
    snprintf(err, sizeof err, "%s/%s.err", g_dir, tag);
    char *argv[] = {getenv("OD_TARGET"), (char *)secs, (char *)(stop ? stop : "-"), nostep ? "nostep" : NULL, NULL};
    const char *env[] = {g_xdg_env, "OPPROF_ON_DEMAND=1", NULL};
    pid_t pid = proc_spawn(argv, env, out, err);
    assert_true(pid > 0);
    assert_true(proc_wait_listening(pid));
    return pid;
}

/* Starts `opprof trigger ARGS...` (NULL-ended), output in tag.out/.err. */
static pid_t spawn_cli(const char *tag, char **args)
{
    char *argv[16] = {getenv("OPPROF_BIN"), "trigger"};
    int n = 2;
    for (; *args && n < 15; args++) argv[n++] = *args;
    argv[n] = NULL;
    char out[600], err[600];
    snprintf(out, sizeof out, "%s/%s.out", g_dir, tag);
    snprintf(err, sizeof err, "%s/%s.err", g_dir, tag);
    pid_t pid = proc_spawn(argv, NULL, out, err);
    assert_true(pid > 0);
    return pid;
}

static char *cli_text(const char *tag, const char *ext)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s.%s", g_dir, tag, ext);
    char *t = slurp(p);
    assert_non_null(t);
    return t;
}

/* The STATE column of pid in `opprof trigger --list` (within the deadline):
 * 1 when it is want. */
static int listed_state_is(pid_t pid, const char *want)
{
    char *args[] = {"--list", NULL};
    pid_t cli = spawn_cli("list", args);
    int rc = proc_wait_ms(cli, DEADLINE_MS);
    if (rc != 0) fail_msg("opprof trigger --list: exit %d (-2: no answer within %d ms)", rc, DEADLINE_MS);
    char *o = cli_text("list", "out"), line[128];
    snprintf(line, sizeof line, "%lld on-demand %s ", (long long)pid, want);
    int found = strstr(o, line) != NULL;
    free(o);
    return found;
}

static void stop_target(pid_t pid, const char *stop)
{
    FILE *f = fopen(stop, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(proc_wait_ms(pid, DEADLINE_MS), 7);
}

/* A program that ends before its N steps ends as it would: the trigger
 * gets what was recorded, cut short, instead of holding it at exit. */
static void steps_end_at_program_exit(void **state)
{
    (void)state;
    pid_t pid = start_target("1.5", NULL, 0, "short");
    char pids[32], trace[600];
    snprintf(pids, sizeof pids, "%lld", (long long)pid);
    path_in(trace, sizeof trace, "exit.json");
    char *args[] = {pids, "--steps", "100000000", "--trace", trace, NULL};
    pid_t cli = spawn_cli("exit", args);
    int64_t t0 = proc_now_ms();
    int st = proc_wait_ms(pid, DEADLINE_MS);
    print_message("program of 1.5 s ended after %.1f s more, status %d\n", (double)(proc_now_ms() - t0) / 1e3, st);
    assert_int_equal(st, 7);
    assert_int_equal(proc_wait_ms(cli, DEADLINE_MS), 0);
    char *o = cli_text("exit", "out");
    if (!strstr(o, "cut short") || !strstr(o, "exited")) fail_msg("trigger said:\n%s", o);
    free(o);
    char *text = cli_text("short", "out");
    assert_string_equal(text, "start\ndone\n");
    free(text);
}

/* The ProfilerStep#K events of a trace, and its "work" ranges: whole
 * steps only, numbered 1..n. */
static void check_aligned(const char *path, int n)
{
    opprof_trace *t = NULL;
    assert_int_equal(opprof_trace_load(path, &t), OPPROF_OK);
    int seen[64] = {0}, others = 0, work = 0, outside = 0;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        assert_int_equal(opprof_trace_event(t, i, &e), OPPROF_OK);
        if (!strncmp(e.name, "ProfilerStep#", 13)) {
            long k = atol(e.name + 13);
            if (k >= 1 && k <= n) seen[k]++;
            else others++;
            if (e.start_ns < lo) lo = e.start_ns;
            if (e.start_ns + e.dur_ns > hi) hi = e.start_ns + e.dur_ns;
        }
    }
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        assert_int_equal(opprof_trace_event(t, i, &e), OPPROF_OK);
        if (strcmp(e.name, "work") != 0) continue;
        work++;
        if (e.start_ns < lo || e.start_ns + e.dur_ns > hi) outside++;
    }
    opprof_trace_free(t);
    for (int k = 1; k <= n; k++)
        if (seen[k] != 1) fail_msg("ProfilerStep#%d recorded %d times", k, seen[k]);
    print_message("steps 1..%d once each, %d other steps, %d work ranges (%d outside the steps)\n", n, others, work,
                  outside);
    assert_int_equal(others, 0);
    assert_int_equal(work, n); /* od_target: one "work" per step, none of a partial step */
    assert_int_equal(outside, 0);
}

/* While a trigger waits for steps the listener answers --list and turns a
 * second trigger away; the client's Ctrl-C frees it; then a --steps
 * trigger records whole steps. */
static void steps_answer_others_and_end_at_disconnect(void **state)
{
    (void)state;
    char stop[600], pids[32], trace[600];
    path_in(stop, sizeof stop, "busy.stop");
    pid_t pid = start_target("600", stop, 0, "busy");
    snprintf(pids, sizeof pids, "%lld", (long long)pid);
    path_in(trace, sizeof trace, "never.json");
    char *first[] = {pids, "--steps", "1000000000", "--trace", trace, NULL};
    pid_t a = spawn_cli("first", first);
    int recording = 0;
    for (int64_t end = proc_now_ms() + DEADLINE_MS; !recording && proc_now_ms() < end;)
        if (!(recording = listed_state_is(pid, "recording"))) proc_sleep_ms(20);
    assert_true(recording);
    char *second[] = {pids, "--duration", "100ms", NULL};
    pid_t b = spawn_cli("second", second);
    assert_int_equal(proc_wait_ms(b, DEADLINE_MS), 2);
    char *e = cli_text("second", "err");
    if (!strstr(e, "busy")) fail_msg("second trigger said:\n%s", e);
    free(e);
    /* Ctrl-C on the first trigger: the program stops recording for it. */
    assert_int_equal(kill(a, SIGINT), 0);
    assert_int_equal(proc_wait_ms(a, DEADLINE_MS), 1000 + SIGINT);
    int idle = 0;
    for (int64_t end = proc_now_ms() + DEADLINE_MS; !idle && proc_now_ms() < end;)
        if (!(idle = listed_state_is(pid, "idle"))) proc_sleep_ms(20);
    assert_true(idle);
    assert_int_equal(access(trace, F_OK), -1); /* no one asks for it any more */
    /* Whole steps, named as torch names them. */
    path_in(trace, sizeof trace, "aligned.json");
    char *steps[] = {pids, "--steps", "5", "--trace", trace, NULL};
    pid_t c = spawn_cli("aligned", steps);
    assert_int_equal(proc_wait_ms(c, DEADLINE_MS), 0);
    check_aligned(trace, 5);
    stop_target(pid, stop);
}

/* Without opprof_step there are no steps to wait for: the trigger is told
 * at once, not after --timeout. */
static void steps_need_opprof_step(void **state)
{
    (void)state;
    char stop[600], pids[32];
    path_in(stop, sizeof stop, "nostep.stop");
    pid_t pid = start_target("600", stop, 1, "nostep");
    snprintf(pids, sizeof pids, "%lld", (long long)pid);
    char *args[] = {pids, "--steps", "3", NULL};
    pid_t cli = spawn_cli("nostep_cli", args);
    assert_int_equal(proc_wait_ms(cli, DEADLINE_MS), 2);
    char *e = cli_text("nostep_cli", "err");
    if (!strstr(e, "opprof_step")) fail_msg("trigger said:\n%s", e);
    free(e);
    stop_target(pid, stop);
}

static int setup(void **state)
{
    (void)state;
    return proc_group_setup(g_dir, g_xdg_env, sizeof g_xdg_env);
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove(g_dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(steps_end_at_program_exit),
        cmocka_unit_test(steps_answer_others_and_end_at_disconnect),
        cmocka_unit_test(steps_need_opprof_step),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

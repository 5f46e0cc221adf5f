/* opprof exec --on-demand and --flight on a program compiled with
 * -finstrument-functions that knows nothing of opprof: a trigger's table
 * names its functions, SIGUSR2 dumps the flight recorder, and its stdout
 * and exit status are its own; bad options are refused before it runs. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "proc.h"
#include "slurp.h"
#include "tmpdir.h"

static char g_dir[] = "/tmp/opprof_exec_od_XXXXXX";

static void path_in(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", g_dir, name);
}

static void exec_on_demand_trigger_table(void **state)
{
    (void)state;
    char out[600], err[600];
    path_in(out, sizeof out, "od.out");
    path_in(err, sizeof err, "od.err");
    char *argv[] = {getenv("OPPROF_BIN"), "exec", "--on-demand", "--", getenv("EXEC_LOOP"), "3", NULL};
    pid_t pid = proc_spawn(argv, NULL, out, err);
    assert_true(pid > 0);
    assert_true(proc_wait_listening(pid)); /* exec replaced itself with the program: the same pid */
    char table[600];
    path_in(table, sizeof table, "table.txt");
    opprof_trigger_request r;
    opprof_trigger_request_init(&r);
    r.duration_ns = 300000000;
    r.table = table;
    assert_int_equal(opprof_trigger(pid, &r, NULL), OPPROF_OK);
    char *t = slurp(table);
    assert_non_null(t);
    assert_non_null(strstr(t, "work"));
    assert_non_null(strstr(t, "inner"));
    free(t);
    assert_int_equal(proc_wait(pid), 3);
    char *o = slurp(out);
    assert_string_equal(o, "start\ndone\n");
    free(o);
    char *e = slurp(err);
    assert_string_equal(e, ""); /* nothing of ours on the program's stderr either */
    free(e);
}

static void exec_flight_signal_dump(void **state)
{
    (void)state;
    char out[600], err[600], file[600];
    path_in(out, sizeof out, "fl.out");
    path_in(err, sizeof err, "fl.err");
    path_in(file, sizeof file, "fl_{n}.json");
    char *argv[] = {getenv("OPPROF_BIN"), "exec", "--flight", "4M", "--flight-file", file, "--",
                    getenv("EXEC_LOOP"), "2", NULL};
    pid_t pid = proc_spawn(argv, NULL, out, err);
    assert_true(pid > 0);
    assert_true(proc_wait_listening(pid));
    proc_sleep_ms(300);
    assert_int_equal(kill(pid, SIGUSR2), 0);
    char first[600];
    path_in(first, sizeof first, "fl_1.json");
    for (int i = 0; i < 500 && access(first, F_OK) != 0; i++) proc_sleep_ms(10);
    assert_int_equal(proc_wait(pid), 3);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_trace_load(first, &t), OPPROF_OK);
    int work = 0;
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        assert_int_equal(opprof_trace_event(t, i, &e), OPPROF_OK);
        work += !strcmp(e.name, "work");
    }
    opprof_trace_free(t);
    assert_true(work > 10);
    char *o = slurp(out);
    assert_string_equal(o, "start\ndone\n");
    free(o);
}

static void exec_refuses_bad_flight_options(void **state)
{
    (void)state;
    char out[600], err[600];
    path_in(out, sizeof out, "bad.out");
    path_in(err, sizeof err, "bad.err");
    char *a1[] = {getenv("OPPROF_BIN"), "exec", "--flight", "lots", "--", getenv("EXEC_LOOP"), "0", NULL};
    assert_int_equal(proc_run(a1, out, err), 2);
    char *e = slurp(err);
    assert_non_null(strstr(e, "--flight"));
    free(e);
    char *a2[] = {getenv("OPPROF_BIN"), "exec", "--slow-step", "50ms", "--", getenv("EXEC_LOOP"), "0", NULL};
    assert_int_equal(proc_run(a2, out, err), 2);
    e = slurp(err);
    assert_non_null(strstr(e, "go with --flight SIZE"));
    free(e);
    char *a3[] = {getenv("OPPROF_BIN"), "exec", "--flight", "8M", "--slow-step", "fast", "--", getenv("EXEC_LOOP"), "0",
                  NULL};
    assert_int_equal(proc_run(a3, out, err), 2);
}

static int setup(void **state)
{
    (void)state;
    return proc_group_setup(g_dir, NULL, 0);
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove(g_dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exec_on_demand_trigger_table),
        cmocka_unit_test(exec_flight_signal_dump),
        cmocka_unit_test(exec_refuses_bad_flight_options),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* opprof exec on a program that closes every descriptor above 2 at start
 * and opens six logs of its own, which take the numbers opprof had
 * (fd_target.c), in every mode: plain (the table), --trace .json and
 * .pftrace (streamed), --flight (a dump through the trigger socket and one
 * on SIGUSR2) and --on-demand (a triggered recording). In each the logs
 * are byte-exact (opprof never wrote to, read from or closed a descriptor
 * that was the program's), the program ends on time with its own status
 * and output, and what opprof wrote holds the program's calls. */
#include "target_run.h"

static void plain_exec_keeps_the_logs(void **state)
{
    (void)state;
    new_case("plain");
    const char *args[] = {NULL};
    assert_int_equal(wait_exit(spawn(args, NULL), 60), 0);
    check_logs();
    char *e = err_text();
    assert_non_null(e);
    if (!strstr(e, "work")) fail_msg("no table with work on stderr:\n%s", e);
    free(e);
}

static void streamed_trace(const char *name)
{
    new_case(name);
    char trace[800];
    in_case(trace, sizeof trace, name);
    const char *args[] = {"--trace", trace, NULL};
    assert_int_equal(wait_exit(spawn(args, NULL), 60), 0);
    check_logs();
    char *e = err_text();
    if (e && *e) fail_msg("stderr:\n%s", e);
    free(e);
    size_t work = calls_in(trace, "work");
    if (work != 2000) fail_msg("%s: %zu calls of work, want 2000", trace, work);
    check_no_leftovers();
}

static void trace_json_goes_to_its_file(void **state)
{
    (void)state;
    streamed_trace("cf.json");
}

static void trace_pftrace_goes_to_its_file(void **state)
{
    (void)state;
    streamed_trace("cf.pftrace");
}

static void flight_dumps_and_keeps_the_logs(void **state)
{
    (void)state;
    new_case("flight");
    char file[800];
    in_case(file, sizeof file, "fl_{n}.json");
    const char *args[] = {"--flight", "4M", "--flight-file", file, NULL};
    pid_t pid = spawn(args, "wait");
    wait_ready();
    sleep_ms(100); /* some calls in the rings */
    opprof_trigger_request r;
    opprof_trigger_request_init(&r);
    r.dump = 1;
    if (opprof_trigger(pid, &r, NULL) != OPPROF_OK) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        fail_msg("trigger --dump: %s", opprof_last_error());
    }
    char first[800], second[800];
    in_case(first, sizeof first, "fl_1.json");
    in_case(second, sizeof second, "fl_2.json");
    assert_true(calls_in(first, "work") > 0);
    assert_int_equal(kill(pid, SIGUSR2), 0);
    for (int i = 0; i < 2000 && access(second, F_OK) != 0; i++) sleep_ms(10);
    tell_stop();
    assert_int_equal(wait_exit(pid, 20), 0);
    check_logs();
    assert_true(calls_in(second, "work") > 0);
    check_no_leftovers();
}

static void on_demand_records_and_keeps_the_logs(void **state)
{
    (void)state;
    new_case("ondemand");
    const char *args[] = {"--on-demand", NULL};
    pid_t pid = spawn(args, "wait");
    wait_ready();
    char table[800];
    in_case(table, sizeof table, "table.txt");
    opprof_trigger_request r;
    opprof_trigger_request_init(&r);
    r.duration_ns = 200000000;
    r.table = table;
    if (opprof_trigger(pid, &r, NULL) != OPPROF_OK) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        fail_msg("trigger: %s", opprof_last_error());
    }
    char *t = slurp(table);
    assert_non_null(t);
    if (!strstr(t, "work")) fail_msg("table without work:\n%s", t);
    free(t);
    tell_stop();
    assert_int_equal(wait_exit(pid, 20), 0);
    check_logs();
    char *e = err_text();
    if (e && *e) fail_msg("stderr:\n%s", e);
    free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plain_exec_keeps_the_logs),
        cmocka_unit_test(trace_json_goes_to_its_file),
        cmocka_unit_test(trace_pftrace_goes_to_its_file),
        cmocka_unit_test(flight_dumps_and_keeps_the_logs),
        cmocka_unit_test(on_demand_records_and_keeps_the_logs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

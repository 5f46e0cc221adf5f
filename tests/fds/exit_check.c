/* The exit and crash paths of a profiled program (fd_target.c under opprof
 * exec): SIGUSR2 arriving while a --flight program exits does not kill it;
 * a run killed with SIGKILL or ended by _exit leaves no temporary file
 * that nothing removes: a flight dump's has no name until it is written,
 * and a streamed trace's is removed by the next run writing that trace. */
#include "target_run.h"

/* Hidden files (opprof's temporary files) in the case's folder. */
static int hidden_files(void)
{
    char cmd[900];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | grep -c '^\\.'", g_case);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p && fscanf(p, "%d", &n) != 1) n = -1;
    if (p) pclose(p);
    return n;
}

static void sigusr2_during_exit_ends_nothing(void **state)
{
    (void)state;
    new_case("usr2_exit");
    char file[800];
    in_case(file, sizeof file, "fl_{n}.json");
    const char *args[] = {"--flight", "8M", "--flight-file", file, NULL};
    pid_t pid = spawn(args, "wait");
    wait_ready();
    sleep_ms(300); /* the rings hold something to dump */
    tell_stop();
    /* SIGUSR2 every 2 ms, from before the program's exit to its end: some
     * arrive while the last dumps are written and the recorder stops. */
    int st = 0, status = -1;
    for (int i = 0; i < 30000; i++) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            status = WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st);
            break;
        }
        kill(pid, SIGUSR2);
        sleep_ms(2);
    }
    if (status < 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        fail_msg("the program did not end within 60 s");
    }
    if (status != 0) fail_msg("exit status %d (1000 + signal when killed)", status);
    check_logs(); /* and stdout: "ready", "done" */
    assert_int_equal(hidden_files(), 0);
}

static void killed_flight_dump_leaves_nothing(void **state)
{
    (void)state;
    new_case("flight_kill");
    char file[800];
    in_case(file, sizeof file, "fl_{n}.json");
    const char *args[] = {"--flight", "8M", "--flight-file", file, NULL};
    /* Killed 0, 10, ... 90 ms after the dump is asked for: most while
     * it is being written. */
    for (int i = 0; i < 10; i++) {
        pid_t pid = spawn(args, "wait");
        wait_ready();
        sleep_ms(300);
        assert_int_equal(kill(pid, SIGUSR2), 0);
        sleep_ms(10 * i);
        kill(pid, SIGKILL);
        assert_int_equal(wait_exit(pid, 20), 1000 + SIGKILL);
        if (hidden_files() != 0) fail_msg("try %d: a temporary file is left in %s", i, g_case);
        char out[800];
        in_case(out, sizeof out, "out");
        unlink(out); /* the next try's "ready" */
    }
}

static void streamed_trace_leftovers_go_with_the_next_run(void **state)
{
    (void)state;
    new_case("trace_kill");
    char trace[800];
    in_case(trace, sizeof trace, "cf.json");
    const char *args[] = {"--trace", trace, NULL};
    /* Killed, then ended by _exit: each leaves its temporary file (the
     * trace is written as the program runs, under a name so that it can
     * be opened again when the program closes opprof's descriptor), and
     * each run removes the one the run before left. */
    pid_t pid = spawn(args, "wait");
    wait_ready();
    kill(pid, SIGKILL);
    assert_int_equal(wait_exit(pid, 20), 1000 + SIGKILL);
    assert_int_equal(hidden_files(), 1);
    char out[800];
    in_case(out, sizeof out, "out");
    unlink(out); /* the next run's "ready" */
    pid = spawn(args, "wait_exit");
    wait_ready();
    tell_stop();
    assert_int_equal(wait_exit(pid, 20), 0);
    char stop[800];
    in_case(stop, sizeof stop, "stop");
    unlink(stop);
    assert_int_equal(hidden_files(), 1);
    /* The next run writing cf.json removes them, and writes its trace. */
    assert_int_equal(wait_exit(spawn(args, NULL), 60), 0);
    assert_int_equal(hidden_files(), 0);
    size_t work = calls_in(trace, "work");
    if (work != 2000) fail_msg("%zu calls of work, want 2000", work);
    check_logs();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sigusr2_during_exit_ends_nothing),
        cmocka_unit_test(killed_flight_dump_leaves_nothing),
        cmocka_unit_test(streamed_trace_leftovers_go_with_the_next_run),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

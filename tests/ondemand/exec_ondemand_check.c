/* opprof exec --on-demand and --flight on a program compiled with
 * -finstrument-functions that knows nothing of opprof: a trigger's table
 * names its functions, SIGUSR2 dumps the flight recorder, and its stdout
 * and exit status are its own; bad options, and options that cannot work
 * together, are refused in one line before it runs. opprof trigger states
 * the vocabulary's defaults (cpu_time_total), a header over --list, and
 * the absolute path of a dump written in the program's own folder. */
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
    char stop[600];
    path_in(stop, sizeof stop, "od.stop");
    char *argv[] = {getenv("OPPROF_BIN"), "exec", "--on-demand", "--", getenv("EXEC_LOOP"), "600", stop, NULL};
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
    assert_int_equal(proc_touch(stop), 0);
    assert_int_equal(proc_wait_ms(pid, PROC_DEADLINE_MS), 3);
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
    char stop[600];
    path_in(stop, sizeof stop, "fl.stop");
    char *argv[] = {getenv("OPPROF_BIN"), "exec", "--flight", "4M", "--flight-file", file, "--",
                    getenv("EXEC_LOOP"), "600", stop, NULL};
    pid_t pid = proc_spawn(argv, NULL, out, err);
    assert_true(pid > 0);
    assert_true(proc_wait_listening(pid));
    /* A dump on SIGUSR2, asked again until it holds 10 calls of work (a
     * loaded machine may not have made that many yet). */
    int work = 0, n = 0;
    for (int64_t end = proc_now_ms() + PROC_DEADLINE_MS; work <= 10;) {
        assert_true(proc_now_ms() < end);
        assert_int_equal(kill(pid, SIGUSR2), 0);
        char first[600], name[64];
        snprintf(name, sizeof name, "fl_%d.json", ++n);
        path_in(first, sizeof first, name);
        assert_true(proc_wait_file(first));
        opprof_trace *t = NULL;
        assert_int_equal(opprof_trace_load(first, &t), OPPROF_OK);
        work = 0;
        for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
            opprof_event e;
            assert_int_equal(opprof_trace_event(t, i, &e), OPPROF_OK);
            work += !strcmp(e.name, "work");
        }
        opprof_trace_free(t);
    }
    assert_int_equal(proc_touch(stop), 0);
    assert_int_equal(proc_wait_ms(pid, PROC_DEADLINE_MS), 3);
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

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

static void exec_refuses_what_cannot_work_together(void **state)
{
    (void)state;
    char out[600], err[600], file[600];
    path_in(out, sizeof out, "tog.out");
    path_in(err, sizeof err, "tog.err");
    path_in(file, sizeof file, "never.json");
    static const struct {
        const char *args[5], *why;
    } cases[] = {
        {{"--on-demand", "--trace", NULL}, "--on-demand records only when triggered, so --trace"},
        {{"--on-demand", "--table", NULL}, "so --table would stay empty"},
        {{"--on-demand", "--stacks", NULL}, "so --stacks would stay empty"},
        {{"--flight", "8M", "--table", NULL}, "not --table"},
        {{"--flight", "8M", "--trace", NULL}, "not --trace"},
        {{"--on-demand", "--flight", "8M", NULL}, "--on-demand or --flight, not both"},
        {{"--flight", "8M", "--flight-signal", "9"}, "--flight-signal 9: SIGKILL and SIGSTOP cannot be caught"},
        {{"--flight", "10", NULL}, "--flight 10: give a unit"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char *argv[16];
        int n = 0;
        argv[n++] = getenv("OPPROF_BIN");
        argv[n++] = "exec";
        for (int k = 0; k < 5 && cases[c].args[k]; k++) {
            argv[n++] = (char *)cases[c].args[k];
            /* an output option takes the file */
            if (!strcmp(cases[c].args[k], "--trace") || !strcmp(cases[c].args[k], "--table") ||
                !strcmp(cases[c].args[k], "--stacks"))
                argv[n++] = file;
        }
        argv[n++] = "--";
        argv[n++] = getenv("EXEC_LOOP");
        argv[n++] = "0";
        argv[n] = NULL;
        int rc = proc_run(argv, out, err);
        char *e = slurp(err), *o = slurp(out);
        if (rc != 2 || count_lines(e) != 1 || !strstr(e, cases[c].why) || *o)
            fail_msg("case %zu: exit %d, stdout '%s', stderr:\n%s", c, rc, o, e);
        free(e);
        free(o);
        assert_int_equal(access(file, F_OK), -1);
    }
}

/* Another user's symbolic link as an output: refused before the program
 * runs, as the writers would refuse it after. */
static void exec_refuses_another_users_link(void **state)
{
    (void)state;
    if (geteuid() != 0) return; /* only root can make a link another user owns */
    char out[600], err[600], link[600], target[600];
    path_in(out, sizeof out, "ln.out");
    path_in(err, sizeof err, "ln.err");
    path_in(link, sizeof link, "link.json");
    path_in(target, sizeof target, "target.txt");
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(lchown(link, 65534, 65534), 0);
    static const char *const opts[] = {"--trace", "--table", "--stacks"};
    for (int i = 0; i < 3; i++) {
        char *argv[] = {getenv("OPPROF_BIN"), "exec", (char *)opts[i], link, "--", getenv("EXEC_LOOP"), "0", NULL};
        int rc = proc_run(argv, out, err);
        char *e = slurp(err), *o = slurp(out);
        if (rc != 2 || count_lines(e) != 1 || !strstr(e, "a symbolic link owned by another user (uid 65534)") || *o)
            fail_msg("%s: exit %d, stdout '%s', stderr:\n%s", opts[i], rc, o, e);
        free(e);
        free(o);
    }
    char *argv[] = {getenv("OPPROF_BIN"), "run", "mlp-train", "--trace", link, NULL};
    assert_int_equal(proc_run(argv, out, err), 2);
    assert_int_equal(access(target, F_OK), -1);
    unlink(link);
}

/* 1 when the rows of a table are in order of their CPU total % (the 4th
 * column), largest first. (Not "work before inner": a recording's edges
 * cut ranges, and inner, almost all of work's time, can come out ahead.) */
static int sorted_by_cpu_total(const char *table)
{
    const char *l = strstr(table, "# of Calls");
    if (!l) return 0;
    double prev = 1e300;
    int rows = 0;
    for (l = strchr(l, '\n'); l && *++l; l = strchr(l, '\n')) {
        char name[128], self_pct[32], self[32], total_pct[32];
        if (l[0] == '-' || sscanf(l, "%127s %31s %31s %31s", name, self_pct, self, total_pct) != 4) continue;
        if (!strchr(total_pct, '%')) continue;
        double v = atof(total_pct);
        if (v > prev) return 0;
        prev = v;
        rows++;
    }
    return rows >= 2;
}

static void trigger_speaks_the_vocabulary(void **state)
{
    (void)state;
    char out[600], err[600], tout[600], terr[600];
    path_in(out, sizeof out, "voc.out");
    path_in(err, sizeof err, "voc.err");
    path_in(tout, sizeof tout, "trig.out");
    path_in(terr, sizeof terr, "trig.err");
    char stop[600];
    path_in(stop, sizeof stop, "voc.stop");
    char *argv[] = {getenv("OPPROF_BIN"), "exec", "--on-demand", "--", getenv("EXEC_LOOP"), "600", stop, NULL};
    pid_t pid = proc_spawn(argv, NULL, out, err);
    assert_true(pid > 0);
    assert_true(proc_wait_listening(pid));
    char pids[32];
    snprintf(pids, sizeof pids, "%lld", (long long)pid);
    char *list[] = {getenv("OPPROF_BIN"), "trigger", "--list", NULL};
    assert_int_equal(proc_run(list, tout, terr), 0);
    char *o = slurp(tout);
    assert_int_equal(strncmp(o, "PID MODE STATE COMMAND\n", 23), 0);
    assert_non_null(strstr(o, pids));
    free(o);
    /* a sort key no table knows is refused before the program is asked */
    char *bogus[] = {getenv("OPPROF_BIN"), "trigger", pids, "--sort", "bogus", "--table", "-", NULL};
    assert_int_equal(proc_run(bogus, tout, terr), 2);
    o = slurp(terr);
    assert_non_null(strstr(o, "--sort takes one of cpu_time_total|"));
    free(o);
    /* 1h is a duration (here refused only for coming with --steps) */
    char *hour[] = {getenv("OPPROF_BIN"), "trigger", pids, "--duration", "1h", "--steps", "2", NULL};
    assert_int_equal(proc_run(hour, tout, terr), 2);
    o = slurp(terr);
    assert_non_null(strstr(o, "--duration or --steps, not both"));
    free(o);
    /* by cpu_time_total, as every command: work (which calls inner) first */
    char *table[] = {getenv("OPPROF_BIN"), "trigger", pids, "--duration", "300ms", "--table", "-", NULL};
    assert_int_equal(proc_run(table, tout, terr), 0);
    o = slurp(tout);
    if (!strstr(o, "  work  ") || !strstr(o, "  inner  ") || !sorted_by_cpu_total(o))
        fail_msg("not sorted by cpu_time_total:\n%s", o);
    free(o);
    assert_int_equal(proc_touch(stop), 0);
    assert_int_equal(proc_wait_ms(pid, PROC_DEADLINE_MS), 3);
}

/* A dump named by the program's default, in the program's own folder: the
 * trigger prints where it is from the caller's side, an absolute path. */
static void trigger_dump_prints_an_absolute_path(void **state)
{
    (void)state;
    char out[600], err[600], tout[600], terr[600], sub[600];
    path_in(out, sizeof out, "dump.out");
    path_in(err, sizeof err, "dump.err");
    path_in(tout, sizeof tout, "dumpt.out");
    path_in(terr, sizeof terr, "dumpt.err");
    path_in(sub, sizeof sub, "elsewhere");
    assert_int_equal(mkdir(sub, 0755), 0);
    char script[2000];
    char stop[600];
    path_in(stop, sizeof stop, "dump.stop");
    snprintf(script, sizeof script, "cd '%s' && exec '%s' exec --flight 4M -- '%s' 600 '%s'", sub,
             getenv("OPPROF_BIN"), getenv("EXEC_LOOP"), stop);
    char *argv[] = {"/bin/sh", "-c", script, NULL};
    pid_t pid = proc_spawn(argv, NULL, out, err);
    assert_true(pid > 0);
    assert_true(proc_wait_listening(pid));
    char pids[32];
    snprintf(pids, sizeof pids, "%lld", (long long)pid);
    char *dump[] = {getenv("OPPROF_BIN"), "trigger", pids, "--dump", NULL};
    assert_int_equal(proc_run(dump, tout, terr), 0);
    char *o = slurp(tout), file[700], want[800];
    snprintf(file, sizeof file, "%s/opprof_flight_%s_1.json", sub, pids);
    snprintf(want, sizeof want, "wrote %s\n", file);
    assert_string_equal(o, want);
    free(o);
    assert_int_equal(access(file, F_OK), 0);
    assert_int_equal(proc_touch(stop), 0);
    assert_int_equal(proc_wait_ms(pid, PROC_DEADLINE_MS), 3);
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
        cmocka_unit_test(exec_refuses_what_cannot_work_together),
        cmocka_unit_test(exec_refuses_another_users_link),
        cmocka_unit_test(trigger_speaks_the_vocabulary),
        cmocka_unit_test(trigger_dump_prints_an_absolute_path),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

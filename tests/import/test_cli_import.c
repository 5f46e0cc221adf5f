/* `opprof summary` and `opprof diff` as a user runs them:
 *  - torch-traces: the table text PyTorch printed, byte for byte, for sort
 *    keys cpu_time_total, self_cpu_time_total, count (all rows) and the
 *    cpu_time_total top 10;
 *  - kineto: --format csv gives the rows of *.expected.csv (same names and
 *    counts, times within 0.001 us);
 *  - every malformed trace: exit status 2 and one line on stderr with the
 *    byte offset, from a file and from stdin;
 *  - diff: matching, ordering by absolute change, totals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_shell.h"
#include "opprof_trace.h"
#include "csv.h"
#include "fixtures.h"
#include "slurp.h"

static char g_tmp[64];
static char g_out[600], g_err[600];

static int setup(void **state)
{
    (void)state;
    snprintf(g_tmp, sizeof g_tmp, "/tmp/opprof_cli_XXXXXX");
    if (!mkdtemp(g_tmp)) return -1;
    snprintf(g_out, sizeof g_out, "%s/out", g_tmp);
    snprintf(g_err, sizeof g_err, "%s/err", g_tmp);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_tmp);
    return system(cmd) == 0 ? 0 : -1;
}

#define opprof(...) cli_shell_run(g_out, g_err, __VA_ARGS__)
#define write_file(name, text) write_text(g_tmp, name, text)

static void test_torch_tables_byte_for_byte(void **state)
{
    (void)state;
    char dir[1024], path[2048];
    if (!fixture_path(dir, sizeof dir, "torch-traces")) {
        print_message("skipped: no fixtures at %s\n", dir);
        skip();
    }
    static const char *const traces[] = {"resnet18_infer_b5", "mlp_train_3steps"};
    static const char *const keys[] = {"cpu_time_total", "self_cpu_time_total", "count", NULL};
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 4; k++) {
            const char *key = keys[k] ? keys[k] : "cpu_time_total";
            assert_int_equal(opprof("summary %s/%s.trace.json --sort %s --row-limit %d", dir, traces[t], key,
                                    keys[k] ? -1 : 10),
                             0);
            snprintf(path, sizeof path, "%s/%s.table.%s%s.txt", dir, traces[t], key, keys[k] ? "" : ".top10");
            char *want = slurp(path), *got = slurp(g_out);
            assert_non_null(want);
            assert_non_null(got);
            if (strcmp(got, want) != 0) fail_msg("%s differs from PyTorch's table:\n%s", path, got);
            free(want);
            free(got);
        }
}

/* Compares `opprof summary --format csv` with the expected CSV by name. */
static void check_csv(const char *dir, const char *base)
{
    char path[2048];
    assert_int_equal(opprof("summary %s/%s.json.gz --format csv", dir, base), 0);
    snprintf(path, sizeof path, "%s/%s.expected.csv", dir, base);
    char *want = slurp(path), *got = slurp(g_out);
    assert_non_null(want);
    assert_non_null(got);
    static char name[1 << 16], field[64], oname[1 << 16];
    size_t rows = 0, ours = 0;
    for (const char *l = strchr(got, '\n') + 1; *l; l = strchr(l, '\n') + 1) ours++;
    for (const char *w = strchr(want, '\n') + 1; *w; w = strchr(w, '\n') + 1) {
        const char *p = w;
        csv_field(&p, name, sizeof name);
        /* Find the row of that name in our output (any order). */
        const char *o = strchr(got, '\n') + 1, *q = NULL;
        for (; *o && !q; o = strchr(o, '\n') + 1) {
            const char *t = o;
            csv_field(&t, oname, sizeof oname);
            if (!strcmp(oname, name)) q = t;
        }
        if (!q) fail_msg("%s: no row %.80s", base, name);
        csv_field(&p, field, sizeof field);
        csv_field(&q, oname, sizeof oname);
        if (strcmp(field, oname) != 0) fail_msg("%s: count of %.80s is %s, expected %s", base, name, oname, field);
        for (int c = 0; c < 4; c++) {
            csv_field(&p, field, sizeof field);
            csv_field(&q, oname, sizeof oname);
            double d = strtod(field, NULL) - strtod(oname, NULL);
            if (d > 0.0010001 || d < -0.0010001)
                fail_msg("%s: column %d of %.80s is %s, expected %s", base, c + 2, name, oname, field);
        }
        rows++;
    }
    assert_int_equal(rows, ours);
    free(want);
    free(got);
}

static void test_kineto_csv(void **state)
{
    (void)state;
    char dir[1024];
    if (!fixture_path(dir, sizeof dir, "kineto")) {
        print_message("skipped: no fixtures at %s\n", dir);
        skip();
    }
    check_csv(dir, "nccl_data");
    check_csv(dir, "benchmark_result_2869224_1695835535_trace");
    check_csv(dir, "rank-34.Jul_15_10_52_41.1074.pt.trace");
}

static void test_malformed_exit_2_one_line(void **state)
{
    (void)state;
    const char *src = getenv("OPPROF_SOURCE_DIR");
    char dir[1024], line[1024], path[2048];
    snprintf(dir, sizeof dir, "%s/tests/import/malformed", src ? src : ".");
    snprintf(path, sizeof path, "%s/expected.txt", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        char *file = strtok(line, "\t"), *off = strtok(NULL, "\t");
        for (int from_stdin = 0; from_stdin < 2; from_stdin++) {
            int rc = from_stdin ? opprof("summary - < %s/%s", dir, file) : opprof("summary %s/%s", dir, file);
            char *err = slurp(g_err), *out = slurp(g_out);
            char want[2100];
            if (from_stdin) snprintf(want, sizeof want, "opprof summary: <stdin>: byte %s: ", off);
            else snprintf(want, sizeof want, "opprof summary: %s/%s: byte %s: ", dir, file, off);
            if (!strcmp(off, "-")) want[strlen(want) - 3] = '\0'; /* offset not fixed: "byte " only */
            if (rc != 2 || count_lines(err) != 1 || strncmp(err, want, strlen(want)) != 0 || *out)
                fail_msg("%s%s: exit %d, stderr '%s', wanted '%s...'", file, from_stdin ? " on stdin" : "", rc, err, want);
            free(err);
            free(out);
        }
        n++;
    }
    fclose(f);
    assert_true(n >= 50);
    /* Arguments: a missing file, an unknown option, a bad sort key. */
    assert_int_equal(opprof("summary /nonexistent.json"), 2);
    assert_int_equal(opprof("summary"), 2);
    assert_int_equal(opprof("summary x.json --bogus"), 2);
    assert_int_equal(opprof("diff only_one.json"), 2);
    assert_int_equal(opprof("summary --help"), 0);
}

static void test_summary_formats_and_stdin(void **state)
{
    (void)state;
    write_file("t.json", "[{\"ph\":\"X\",\"name\":\"a,b\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10,"
                         "\"args\":{\"Input Dims\":[[2, 3]]}},"
                         "{\"ph\":\"X\",\"name\":\"c\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":4,"
                         "\"args\":{\"Input Dims\":[[1]]}}]");
    assert_int_equal(opprof("summary %s/t.json --format csv", g_tmp), 0);
    char *out = slurp(g_out);
    assert_non_null(strstr(out, "\"a,b\",1,6.000,10.000,"));
    assert_non_null(strstr(out, "c,1,4.000,4.000,"));
    free(out);
    assert_int_equal(opprof("summary - --format json --group-by-input-shape < %s/t.json", g_tmp), 0);
    out = slurp(g_out);
    assert_non_null(strstr(out, "\"a,b\""));
    assert_non_null(strstr(out, "[[2, 3]]"));
    free(out);
    assert_int_equal(opprof("summary %s/t.json --top-level --format csv", g_tmp), 0);
    out = slurp(g_out);
    assert_null(strstr(out, "\nc,"));
    free(out);
    assert_int_equal(opprof("summary %s/t.json --sort no_such_key", g_tmp), 2);
    char *err = slurp(g_err);
    assert_null(strstr(err, "incomplete"));
    free(err);
}

/* A trace written after a signal: its table, its dropped count, and one
 * line on stderr saying it stops early. */
static void test_summary_of_an_incomplete_trace(void **state)
{
    (void)state;
    write_file("cut.json", "{\"incomplete\": 1, \"droppedEvents\": 3, \"traceEvents\": "
                           "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10}]}");
    assert_int_equal(opprof("summary %s/cut.json", g_tmp), 0);
    char *out = slurp(g_out), *err = slurp(g_err);
    assert_non_null(strstr(out, "Dropped events: 3"));
    assert_non_null(strstr(err, "cut.json is incomplete"));
    assert_int_equal(count_lines(err), 1);
    free(out);
    free(err);
}

/* A trace of events that are not rows (async "b"/"e") gives an empty
 * table and a line saying why; "B"/"E" duration events are rows. */
static void test_summary_of_a_trace_without_rows(void **state)
{
    (void)state;
    write_file("async.json", "{\"traceEvents\": [{\"ph\":\"b\",\"name\":\"a\",\"cat\":\"x\",\"id\":1,\"pid\":1,"
                             "\"tid\":1,\"ts\":1},{\"ph\":\"e\",\"name\":\"a\",\"cat\":\"x\",\"id\":1,\"pid\":1,"
                             "\"tid\":1,\"ts\":5}]}");
    assert_int_equal(opprof("summary %s/async.json", g_tmp), 0);
    char *err = slurp(g_err);
    assert_non_null(strstr(err, "async.json has no operators: rows are complete"));
    assert_int_equal(count_lines(err), 1);
    free(err);
    write_file("be.json", "[{\"ph\":\"B\",\"name\":\"outer\",\"pid\":1,\"tid\":1,\"ts\":1},"
                          "{\"ph\":\"B\",\"name\":\"inner\",\"pid\":1,\"tid\":1,\"ts\":2},"
                          "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":5},{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":9}]");
    assert_int_equal(opprof("summary %s/be.json --format csv", g_tmp), 0);
    char *out = slurp(g_out);
    err = slurp(g_err);
    if (!strstr(out, "\nouter,1,5.000,8.000,") || !strstr(out, "\ninner,1,3.000,3.000,") || *err)
        fail_msg("stdout:\n%s\nstderr:\n%s", out, err);
    free(out);
    free(err);
}

static void test_diff(void **state)
{
    (void)state;
    write_file("base.json", "[{\"ph\":\"X\",\"name\":\"slow\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10},"
                            "{\"ph\":\"X\",\"name\":\"same\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":5},"
                            "{\"ph\":\"X\",\"name\":\"faster\",\"pid\":1,\"tid\":1,\"ts\":30,\"dur\":8},"
                            "{\"ph\":\"X\",\"name\":\"gone\",\"pid\":1,\"tid\":1,\"ts\":40,\"dur\":1}]");
    write_file("test.json", "[{\"ph\":\"X\",\"name\":\"slow\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":40},"
                            "{\"ph\":\"X\",\"name\":\"slow\",\"pid\":1,\"tid\":1,\"ts\":50,\"dur\":10},"
                            "{\"ph\":\"X\",\"name\":\"same\",\"pid\":1,\"tid\":1,\"ts\":60,\"dur\":5},"
                            "{\"ph\":\"X\",\"name\":\"faster\",\"pid\":1,\"tid\":1,\"ts\":70,\"dur\":2},"
                            "{\"ph\":\"X\",\"name\":\"new\",\"pid\":1,\"tid\":1,\"ts\":80,\"dur\":3}]");
    assert_int_equal(opprof("diff %s/base.json %s/test.json --format csv", g_tmp, g_tmp), 0);
    char *out = slurp(g_out);
    /* Largest absolute change of CPU total time (the default, here equal to
     * self time) first: slow +40, faster -6, new +3, gone -1, same 0. */
    const char *order[] = {"\nslow,", "\nfaster,", "\nnew,", "\ngone,", "\nsame,"};
    const char *prev = out;
    for (int i = 0; i < 5; i++) {
        const char *at = strstr(out, order[i]);
        if (!at || at < prev) fail_msg("row %s out of order in\n%s", order[i] + 1, out);
        prev = at;
    }
    assert_non_null(strstr(out, "\nslow,,1,2,1,10.000,50.000,40.000,"));
    assert_non_null(strstr(out, "\nnew,,0,1,1,0.000,3.000,3.000,"));
    free(out);
    assert_int_equal(opprof("diff %s/base.json %s/test.json", g_tmp, g_tmp), 0);
    out = slurp(g_out);
    assert_non_null(strstr(out, "Self CPU time total: base 24.000us, test 60.000us, diff +36.000us (+150.00%)"));
    assert_non_null(strstr(out, "5 rows, 1 only in base, 1 only in test; sorted by |change| of cpu_time_total"));
    /* The two traces by name; each metric's base, test and change under one
     * heading, none cut short; the change % column names its metric. */
    char want[700];
    snprintf(want, sizeof want, "Base: %s/base.json\nTest: %s/test.json\n", g_tmp, g_tmp);
    assert_int_equal(strncmp(out, want, strlen(want)), 0);
    assert_non_null(strstr(out, "- Calls -"));
    assert_non_null(strstr(out, "- Self CPU -"));
    assert_non_null(strstr(out, "- CPU total -"));
    assert_non_null(strstr(out, "      CPU total  \n"));
    assert_non_null(strstr(out, "base           test         change"));
    assert_non_null(strstr(out, "change %"));
    assert_null(strstr(out, "..."));
    assert_non_null(strstr(out, "Self: the operator's own time; total: with the operators it called"));
    assert_null(strstr(out, "Warning:"));
    free(out);
    /* A capped trace is named under the table (and on stderr for csv). */
    write_file("capped.json", "{\"droppedEvents\": 7, \"traceEvents\": [{\"ph\":\"X\",\"name\":\"slow\",\"pid\":1,"
                              "\"tid\":1,\"ts\":0,\"dur\":40}]}");
    assert_int_equal(opprof("diff %s/base.json %s/capped.json", g_tmp, g_tmp), 0);
    out = slurp(g_out);
    snprintf(want, sizeof want, "Warning: test (%s/capped.json) dropped 7 events at its event cap: its calls and "
                                "times are too low\n", g_tmp);
    assert_non_null(strstr(out, want));
    free(out);
    assert_int_equal(opprof("diff %s/capped.json %s/test.json --format csv", g_tmp, g_tmp), 0);
    char *err = slurp(g_err);
    assert_non_null(strstr(err, "Warning: base ("));
    free(err);
    assert_int_equal(opprof("diff %s/capped.json %s/test.json --format json", g_tmp, g_tmp), 0);
    out = slurp(g_out);
    assert_non_null(strstr(out, "\"dropped_events\": 7, \"incomplete\": false}, \"test\": {\"path\": "));
    free(out);
    assert_int_equal(opprof("diff %s/base.json %s/test.json --sort count --format json", g_tmp, g_tmp), 0);
    out = slurp(g_out);
    assert_non_null(strstr(out, "\"sort\": \"count\""));
    assert_non_null(strstr(out, "\"name\": \"slow\", \"input_shapes\": \"\", \"in_base\": true"));
    free(out);
    assert_int_equal(opprof("diff %s/base.json %s/missing.json", g_tmp, g_tmp), 2);
}

static void test_diff_of_a_fixture_with_itself(void **state)
{
    (void)state;
    char path[1024];
    if (!fixture_path(path, sizeof path, "kineto/nccl_data.json.gz")) skip();
    assert_int_equal(opprof("diff %s %s --format csv", path, path), 0);
    char *out = slurp(g_out);
    /* Every change is zero. */
    for (const char *l = strchr(out, '\n') + 1; *l; l = strchr(l, '\n') + 1) {
        char f[1 << 12];
        const char *p = l;
        for (int c = 0; c < 17; c++) {
            csv_field(&p, f, sizeof f);
            if (c >= 2 && (c - 2) % 3 == 2 && strtod(f, NULL) != 0) fail_msg("a change in %.200s", l);
        }
    }
    free(out);
}

/* A trace too large for the memory there is: unreadable, so exit 2 as the
 * help says (it was 1), with the reader's "out of memory" line. The limit is
 * the address space (ulimit -v); where the program cannot start under one
 * (ASan reserves terabytes of it) the test is skipped. */
static void test_out_of_memory_is_an_unreadable_trace(void **state)
{
    (void)state;
    const char *bin = getenv("OPPROF_BIN");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "sh -c 'ulimit -v 160000 && exec %s --version' >/dev/null 2>&1", bin ? bin : "opprof");
    if (system(cmd) != 0) {
        print_message("skipped: the program does not start in 160 MB of address space\n");
        skip();
    }
    char big[700];
    snprintf(big, sizeof big, "%s/big.json", g_tmp);
    snprintf(cmd, sizeof cmd,
             "(printf '['; yes '{\"ph\":\"X\",\"name\":\"n\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1},' "
             "| head -n 3000000; printf '{}]') > %s",
             big);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "sh -c 'ulimit -v 160000 && exec %s summary %s' >%s 2>%s", bin ? bin : "opprof", big,
             g_out, g_err);
    int st = system(cmd);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 2);
    char *err = slurp(g_err);
    assert_non_null(err);
    if (!strstr(err, "out of memory") || !strstr(err, "byte ")) fail_msg("stderr: %s", err);
    free(err);
}

/* A report that cannot be written to standard output (a full disk) says so
 * and exits 1, the status for a write failure; it was silent. */
static void test_merge_to_a_full_stdout(void **state)
{
    (void)state;
    char dir[1024];
    if (!fixture_path(dir, sizeof dir, "torch-traces")) skip();
    const char *bin = getenv("OPPROF_BIN");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s merge %s/mlp_train_3steps.trace.json >/dev/full 2>%s", bin ? bin : "opprof", dir,
             g_err);
    int st = system(cmd);
    char *err = slurp(g_err);
    assert_non_null(err);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 1);
    /* the reason, not just the fact: it was "cannot write the ranks report" */
    if (!strstr(err, "standard output") || !strstr(err, "No space left on device")) fail_msg("stderr: %s", err);
    free(err);
}

/* Each command (its paths in g_tmp) exits 2 with one line: more than 2 events. */
static void refused_past_2(const char *const *cmds, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(opprof(cmds[i], g_tmp, g_tmp), 2);
        char *err = slurp(g_err);
        if (!strstr(err, "more than 2 events (the limit asked for)") || count_lines(err) != 1)
            fail_msg("%s: %s", cmds[i], err);
        free(err);
    }
}

/* --max-events: a trace of more events is refused with exit 2 and one line,
 * before the reader has seen the rest of it (the garbage after the third
 * event is never reached); summary, diff, report and merge alike. */
static void test_max_events(void **state)
{
    (void)state;
    const char *ev3 = "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10},"
                      "{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":4},"
                      "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":3,"
                      "\"args\":{\"Addr\":1,\"Bytes\":8}}";
    char text[1024];
    snprintf(text, sizeof text, "%s]", ev3);
    write_file("three.json", text);
    snprintf(text, sizeof text, "%s, {\"ph\": this is not json", ev3);
    write_file("cut.json", text);
    assert_int_equal(opprof("summary %s/three.json --format csv", g_tmp), 0);
    char *plain = slurp(g_out);
    assert_int_equal(opprof("summary %s/three.json --format csv --max-events 3", g_tmp), 0);
    char *limited = slurp(g_out);
    assert_string_equal(plain, limited);
    free(plain);
    free(limited);

    static const char *const cmds[] = {"summary %s/three.json --max-events 2", "summary %s/cut.json --max-events 2",
                                       "diff %s/three.json %s/three.json --max-events 2",
                                       "report %s/three.json -o %s/r.html --max-events 2",
                                       "merge %s/three.json -o %s/m.json --max-events 2"};
    refused_past_2(cmds, sizeof cmds / sizeof *cmds);
    /* The garbage is there: without the limit the reader reaches it. */
    assert_int_equal(opprof("summary %s/cut.json", g_tmp), 2);
    char *err = slurp(g_err);
    assert_null(strstr(err, "more than"));
    free(err);
    assert_int_equal(opprof("summary %s/three.json --max-events 0", g_tmp), 2);

    opprof_trace *t = NULL;
    snprintf(text, sizeof text, "%s/three.json", g_tmp);
    assert_int_equal(opprof_trace_load_max(text, 3, &t), OPPROF_OK);
    assert_int_equal(opprof_trace_event_count(t), 2);
    opprof_trace_free(t);
    assert_int_equal(opprof_trace_load_max(text, 2, &t), OPPROF_E_RANGE);
    assert_null(t);
    assert_non_null(strstr(opprof_last_error(), "more than 2 events"));
}

/* --max-events on Perfetto's format: the same refusal, exit 2 and one
 * line, for a .pftrace of compressed batches, one of plain packets (by
 * name and from stdin) and a .pftrace.gz; with garbage after the third
 * event, the limit stops the reader before it. */
static void test_max_events_pftrace(void **state)
{
    (void)state;
    write_file("three3.json", "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10},"
                              "{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":4},"
                              "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":3,"
                              "\"args\":{\"Addr\":1,\"Bytes\":8}}]");
    char path[700];
    snprintf(path, sizeof path, "%s/three3.json", g_tmp);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_trace_load(path, &t), OPPROF_OK);
    static const char *const names[] = {"three.pftrace", "plain.pftrace", "three.pftrace.gz"};
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/%s", g_tmp, names[k]);
        if (k == 1) setenv("OPPROF_PFTRACE_COMPRESS", "0", 1);
        assert_int_equal(opprof_export_chrome_trace(t, path), OPPROF_OK);
        unsetenv("OPPROF_PFTRACE_COMPRESS");
    }
    opprof_trace_free(t);
    /* The plain file with a packet cut short after it. */
    char cut[700];
    snprintf(cut, sizeof cut, "cat %s/plain.pftrace > %s/cut.pftrace && printf '\\012\\005\\010' >> %s/cut.pftrace",
             g_tmp, g_tmp, g_tmp);
    assert_int_equal(system(cut), 0);

    assert_int_equal(opprof("summary %s/three3.json --format csv", g_tmp), 0);
    char *want = slurp(g_out);
    static const char *const ok[] = {"summary %s/three.pftrace --format csv --max-events 3",
                                     "summary %s/plain.pftrace --format csv --max-events 3",
                                     "summary %s/three.pftrace.gz --format csv --max-events 3",
                                     "summary - --format csv --max-events 3 < %s/three.pftrace"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        assert_int_equal(opprof(ok[i], g_tmp), 0);
        char *got = slurp(g_out);
        assert_string_equal(want, got);
        free(got);
    }
    free(want);
    static const char *const cmds[] = {"summary %s/three.pftrace --max-events 2",
                                       "summary %s/plain.pftrace --max-events 2",
                                       "summary %s/three.pftrace.gz --max-events 2",
                                       "summary %s/cut.pftrace --max-events 2",
                                       "summary - --max-events 2 < %s/plain.pftrace",
                                       "diff %s/three.pftrace %s/three.pftrace --max-events 2",
                                       "report %s/three.pftrace -o %s/r.html --max-events 2",
                                       "merge %s/three.pftrace -o %s/m.json --max-events 2"};
    refused_past_2(cmds, sizeof cmds / sizeof *cmds);
    /* The cut is there: without the limit the reader reaches it. */
    assert_int_equal(opprof("summary %s/cut.pftrace", g_tmp), 2);
    char *err = slurp(g_err);
    assert_non_null(strstr(err, "the input ends inside a packet"));
    free(err);
    snprintf(path, sizeof path, "%s/three.pftrace", g_tmp);
    assert_int_equal(opprof_trace_load_max(path, 2, &t), OPPROF_E_RANGE);
    assert_null(t);
}

/* Five kernels of just under 2^61 ns each: diff's device total used to wrap
 * to -6917529027.641s (and abort under UBSan); it stays at the limit and the
 * footer says so. */
static void test_diff_device_total_saturates_visibly(void **state)
{
    (void)state;
    const char *src = getenv("OPPROF_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/import/accepted/device_sum_saturates.json", src ? src : ".");
    assert_int_equal(opprof("diff %s %s", path, path), 0);
    char *out = slurp(g_out);
    assert_non_null(out);
    if (!strstr(out, "Self CUDA time total: base 9223372036.855s, test 9223372036.855s, diff 0.000us") ||
        !strstr(out, "Saturated: some sums passed the 64-bit range"))
        fail_msg("stdout:\n%s", out);
    free(out);
}

/* Two ranks whose operator time is each at the limit: the cross-rank sum
 * used to wrap (the row vanished, UBSan aborted) and the minimum named rank
 * -1; the mean is exact, a real rank is named, and the report says the
 * figures are at the limit. */
static void test_merge_sums_saturate_visibly(void **state)
{
    (void)state;
    char path[2][700];
    for (int r = 0; r < 2; r++) {
        snprintf(path[r], sizeof path[r], "%s/sat_r%d.json", g_tmp, r);
        FILE *f = fopen(path[r], "w");
        assert_non_null(f);
        fprintf(f, "{\"distributedInfo\": {\"rank\": %d, \"world_size\": 2}, \"traceEvents\": [", r);
        for (int t = 0; t < 5; t++)
            fprintf(f, "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"n\", \"pid\": 1, \"tid\": %d, "
                       "\"ts\": 0, \"dur\": 2305843009213693}",
                    t ? ", " : "", t);
        fprintf(f, "]}\n");
        assert_int_equal(fclose(f), 0);
    }
    assert_int_equal(opprof("merge %s %s", path[0], path[1]), 0);
    char *out = slurp(g_out);
    assert_non_null(out);
    /* mean, min and max all at the limit: the mean is not half of a saturated sum */
    if (!strstr(out, " 10 9223372036854.775 9223372036854.775 (r0)") || strstr(out, "(r-1)") ||
        !strstr(out, "Saturated: some sums passed the 64-bit range"))
        fail_msg("stdout:\n%s", out);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_torch_tables_byte_for_byte),
        cmocka_unit_test(test_kineto_csv),
        cmocka_unit_test(test_malformed_exit_2_one_line),
        cmocka_unit_test(test_summary_formats_and_stdin),
        cmocka_unit_test(test_summary_of_an_incomplete_trace),
        cmocka_unit_test(test_summary_of_a_trace_without_rows),
        cmocka_unit_test(test_diff),
        cmocka_unit_test(test_diff_of_a_fixture_with_itself),
        cmocka_unit_test(test_out_of_memory_is_an_unreadable_trace),
        cmocka_unit_test(test_merge_to_a_full_stdout),
        cmocka_unit_test(test_max_events),
        cmocka_unit_test(test_max_events_pftrace),
        cmocka_unit_test(test_diff_device_total_saturates_visibly),
        cmocka_unit_test(test_merge_sums_saturate_visibly),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

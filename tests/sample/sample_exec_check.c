/* opprof exec --sample on a program nobody instrumented (s73.c, -O2):
 * the table by function and the folded stacks, a thread the program starts
 * sampled from its start (pthread_create interposed), --no-inline, the
 * program's exit status kept, and --threads refused without --sample. The
 * streamed --trace carries the samples: as V8 CPU profiles in Chrome JSON
 * (read by profile_json.py), as PerfSample packets in a .pftrace (decoded
 * by protoc), which opprof summary reads past, saying how many. --sample
 * with --flight or --on-demand is refused. */
#define _GNU_SOURCE
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
#include "fixtures.h"
#include "slurp.h"
#include "tmpdir.h"

static char g_dir[] = "/tmp/opprof_sample_XXXXXX";

static const char *env(const char *var)
{
    const char *v = getenv(var);
    if (!v) fail_msg("%s is not set (run under ctest)", var);
    return v;
}

/* The CSV row's self_cpu_time_total_us (column 1 after the name) or
 * cpu_time_total_us (column 2) of name, -1 when absent. */
static double row_us(const char *csv, const char *name, int column)
{
    char key[256];
    snprintf(key, sizeof key, "\n%s,", name);
    const char *p = strstr(csv, key);
    long count;
    double us[2];
    if (!p || sscanf(p + strlen(key), "%ld,%lf,%lf", &count, &us[0], &us[1]) != 3) return -1;
    return us[column - 1];
}

static double total_us(const char *csv, const char *name)
{
    return row_us(csv, name, 2);
}

static double self_us(const char *csv, const char *name)
{
    return row_us(csv, name, 1);
}

static void test_table_and_stacks_by_function(void **state)
{
    (void)state;
    assert_int_equal(shell_status("'%s' exec --sample --format csv --table %s/t.csv --stacks %s/s.folded -- "
                                  "'%s' 20000 busy 2>%s/err",
                        env("OPPROF_BIN"), g_dir, g_dir, env("S73"), g_dir),
                     0);
    char path[600];
    snprintf(path, sizeof path, "%s/t.csv", g_dir);
    char *csv = slurp(path);
    assert_non_null(csv);
    double a = total_us(csv, "work_a"), b = total_us(csv, "work_b"), s = total_us(csv, "sleeper_spin");
    print_message("work_a %.0f us, work_b %.0f us, sleeper_spin %.0f us\n", a, b, s);
    assert_true(a > 0 && b > 0);
    assert_true(a > b); /* 7:3 calls: the ratio itself is test_sample's, with enough samples */
    assert_true(s > 0); /* the thread the program started was sampled */
    free(csv);
    snprintf(path, sizeof path, "%s/s.folded", g_dir);
    char *folded = slurp(path);
    assert_non_null(folded);
    assert_non_null(strstr(folded, "main;work_a;mix "));
    assert_non_null(strstr(folded, "sleeper;sleeper_spin;mix "));
    free(folded);
}

/* --no-inline: the leaf is the function the code belongs to (work_a, as
 * perf report names it), not mix, which the compiler inlined into it. */
static void test_no_inline_is_perfs_view(void **state)
{
    (void)state;
    assert_int_equal(shell_status("'%s' exec --sample --no-inline --format csv --row-limit -1 --table %s/n.csv "
                                  "--stacks %s/n.folded -- '%s' 20000 2>%s/err",
                                  env("OPPROF_BIN"), g_dir, g_dir, env("S73"), g_dir),
                     0);
    char path[600];
    snprintf(path, sizeof path, "%s/n.csv", g_dir);
    char *csv = slurp(path);
    assert_non_null(csv);
    double a = self_us(csv, "work_a"), b = self_us(csv, "work_b");
    print_message("--no-inline: work_a self %.0f us, work_b self %.0f us\n", a, b);
    assert_true(a > 0 && b > 0);
    assert_null(strstr(csv, "\nmix,"));
    free(csv);
    snprintf(path, sizeof path, "%s/n.folded", g_dir);
    char *folded = slurp(path);
    assert_non_null(folded);
    assert_non_null(strstr(folded, "main;work_a "));
    assert_null(strstr(folded, ";mix "));
    free(folded);
}

/* A program whose DWARF is in a separate file (s73_split, as Debian's -dbg
 * packages ship libraries) is named from its symbol table: no inlined mix,
 * since opening separate DWARF at exit costs more than the sampling. With
 * OPPROF_SEPARATE_DEBUGINFO=1 the inlined frame comes back. */
static void test_separate_debuginfo_named_from_the_symbol_table(void **state)
{
    (void)state;
    for (int separate = 0; separate <= 1; separate++) {
        assert_int_equal(shell_status("OPPROF_SEPARATE_DEBUGINFO=%d '%s' exec --sample --stacks %s/d%d.folded -- "
                                      "'%s' 10000 2>%s/err",
                                      separate, env("OPPROF_BIN"), g_dir, separate, env("S73_SPLIT"), g_dir),
                         0);
        char path[600];
        snprintf(path, sizeof path, "%s/d%d.folded", g_dir, separate);
        char *folded = slurp(path);
        assert_non_null(folded);
        if (separate) {
            assert_non_null(strstr(folded, ";main;work_a;mix "));
        } else {
            assert_non_null(strstr(folded, ";main;work_a "));
            assert_null(strstr(folded, ";mix "));
        }
        free(folded);
    }
}

static void test_exit_status_and_errors(void **state)
{
    (void)state;
    /* s73 with a bad thread start cannot fail; the status of `false` is 1. */
    assert_int_equal(shell_status("'%s' exec --sample --table %s/x -- false 2>/dev/null", env("OPPROF_BIN"), g_dir), 1);
    assert_int_equal(shell_status("'%s' exec --threads main -- true 2>%s/err2", env("OPPROF_BIN"), g_dir), 2);
    char path[600];
    snprintf(path, sizeof path, "%s/err2", g_dir);
    char *err = slurp(path);
    assert_non_null(err);
    assert_non_null(strstr(err, "needs --sample"));
    free(err);
    assert_int_equal(shell_status("'%s' exec --sample=0 -- true 2>/dev/null", env("OPPROF_BIN")), 2);
}

static char *read_in(const char *name)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    char *text = slurp(path);
    if (!text) fail_msg("cannot read %s", path);
    return text;
}

static size_t count(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* The first line of out holding both words (w2 may be NULL), NULL when
 * none; free it. */
static char *line_with(const char *out, const char *w1, const char *w2)
{
    for (const char *p = out; *p;) {
        size_t n = strcspn(p, "\n");
        char *line = strndup(p, n);
        assert_non_null(line);
        if (strstr(line, w1) && (!w2 || strstr(line, w2))) return line;
        free(line);
        p += n + (p[n] != 0);
    }
    return NULL;
}

static void test_streamed_trace_carries_the_samples(void **state)
{
    (void)state;
    const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    assert_int_equal(shell_status("'%s' exec --sample --trace %s/x.json -- '%s' 5000 busy 2>%s/xerr",
                                  env("OPPROF_BIN"), g_dir, env("S73"), g_dir),
                     0);
    assert_int_equal(shell_status("'%s' '%s/tests/sample/profile_json.py' %s/x.json > %s/x.profiles", py,
                                  env("OPPROF_SOURCE_DIR"), g_dir, g_dir),
                     0);
    char *out = read_in("x.profiles");
    print_message("%s", out);
    /* the main thread's work, and the thread it started, each its own profile */
    char *m = line_with(out, "work_a", "work_b");
    assert_non_null(m);
    assert_non_null(strstr(m, " name=s73 "));
    char *sl = line_with(out, "sleeper_spin", NULL);
    assert_non_null(sl);
    assert_null(strstr(sl, "work_a")); /* another thread's profile */
    assert_null(line_with(out, "sleeper_spin", "work_a"));
    free(m);
    free(sl);
    free(out);
    assert_int_equal(
        shell_status("'%s' summary %s/x.json >%s/x.sum 2>%s/x.sumerr", env("OPPROF_BIN"), g_dir, g_dir, g_dir), 0);
    char *err = read_in("x.sumerr");
    assert_non_null(strstr(err, "sample events of the file (sampled stacks) were read past"));
    free(err);

    char schema[1024];
    if (!fixture_path(schema, sizeof schema, "perfetto/perfetto_trace.proto")) {
        print_message("%s missing: the .pftrace half skipped\n", schema);
        return;
    }
    if (system("command -v protoc >/dev/null 2>&1") != 0)
        fail_msg("protoc not found: install protobuf-compiler (scripts/deps.sh)");
    /* .pftrace.gz: plain packets inside the gzip, so protoc reads them. */
    assert_int_equal(shell_status("'%s' exec --sample --trace %s/x.pftrace.gz -- '%s' 5000 busy 2>%s/perr",
                                  env("OPPROF_BIN"), g_dir, env("S73"), g_dir),
                     0);
    assert_int_equal(shell_status("zcat %s/x.pftrace.gz | protoc -I %s/perfetto --decode=perfetto.protos.Trace "
                                  "perfetto_trace.proto > %s/x.txt",
                                  g_dir, fixtures_dir(), g_dir),
                     0);
    char *text = read_in("x.txt");
    size_t n = count(text, "perf_sample {");
    print_message("%zu PerfSamples\n", n);
    assert_true(n > 10);
    assert_int_equal(count(text, "callstack_iid: "), n);
    assert_int_equal(count(text, "str: \"work_a\""), 1);
    assert_int_equal(count(text, "str: \"sleeper_spin\""), 1);
    assert_non_null(strstr(text, "thread_name: \"s73\""));
    free(text);
    assert_int_equal(shell_status("'%s' summary %s/x.pftrace.gz >%s/p.sum 2>%s/p.sumerr", env("OPPROF_BIN"), g_dir,
                                  g_dir, g_dir),
                     0);
    err = read_in("p.sumerr");
    char note[96];
    snprintf(note, sizeof note, ": %zu sample events of the file", n);
    if (!strstr(err, note)) fail_msg("no \"%s\" in: %s", note, err);
    free(err);
}

static void test_sample_refused_with_flight_and_on_demand(void **state)
{
    (void)state;
    const char *other[] = {"--flight 1M", "--on-demand"};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(
            shell_status("'%s' exec --sample %s -- true 2>%s/ferr", env("OPPROF_BIN"), other[i], g_dir), 2);
        char *err = read_in("ferr");
        assert_non_null(strstr(err, "--sample does not go with"));
        free(err);
    }
}

TMPDIR_SETUP(g_dir)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_and_stacks_by_function),
        cmocka_unit_test(test_no_inline_is_perfs_view),
        cmocka_unit_test(test_separate_debuginfo_named_from_the_symbol_table),
        cmocka_unit_test(test_exit_status_and_errors),
        cmocka_unit_test(test_streamed_trace_carries_the_samples),
        cmocka_unit_test(test_sample_refused_with_flight_and_on_demand),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

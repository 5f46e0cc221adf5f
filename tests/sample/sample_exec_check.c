/* opprof exec --sample on a program nobody instrumented (s73.c, -O2):
 * the table by function and the folded stacks, a thread the program starts
 * sampled from its start (pthread_create interposed), --no-inline, the program's exit
 * status kept, and --threads refused without --sample. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "slurp.h"
#include "tmpdir.h"

static char g_dir[] = "/tmp/opprof_sample_XXXXXX";

static const char *env(const char *var)
{
    const char *v = getenv(var);
    if (!v) fail_msg("%s is not set (run under ctest)", var);
    return v;
}

static int sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The CSV row's cpu_time_total_us of name, -1 when absent. */
static double total_us(const char *csv, const char *name)
{
    char key[256];
    snprintf(key, sizeof key, "\n%s,", name);
    const char *p = strstr(csv, key);
    if (!p) return -1;
    p += strlen(key);
    long count;
    double self, total;
    if (sscanf(p, "%ld,%lf,%lf", &count, &self, &total) != 3) return -1;
    return total;
}

static void test_table_and_stacks_by_function(void **state)
{
    (void)state;
    assert_int_equal(sh("'%s' exec --sample --format csv --table %s/t.csv --stacks %s/s.folded -- '%s' 20000 busy "
                        "2>%s/err",
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

/* The self CPU time of name, -1 when absent. */
static double self_us(const char *csv, const char *name)
{
    char key[256];
    snprintf(key, sizeof key, "\n%s,", name);
    const char *p = strstr(csv, key);
    long count;
    double self;
    if (!p || sscanf(p + strlen(key), "%ld,%lf", &count, &self) != 2) return -1;
    return self;
}

/* --no-inline: the leaf is the function the code belongs to (work_a, as
 * perf report names it), not mix, which the compiler inlined into it. */
static void test_no_inline_is_perfs_view(void **state)
{
    (void)state;
    assert_int_equal(sh("'%s' exec --sample --no-inline --format csv --row-limit -1 --table %s/n.csv "
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

static void test_exit_status_and_errors(void **state)
{
    (void)state;
    /* s73 with a bad thread start cannot fail; the status of `false` is 1. */
    assert_int_equal(sh("'%s' exec --sample --table %s/x -- false 2>/dev/null", env("OPPROF_BIN"), g_dir), 1);
    assert_int_equal(sh("'%s' exec --threads main -- true 2>%s/err2", env("OPPROF_BIN"), g_dir), 2);
    char path[600];
    snprintf(path, sizeof path, "%s/err2", g_dir);
    char *err = slurp(path);
    assert_non_null(err);
    assert_non_null(strstr(err, "needs --sample"));
    free(err);
    assert_int_equal(sh("'%s' exec --sample=0 -- true 2>/dev/null", env("OPPROF_BIN")), 2);
}

static int setup(void **state)
{
    (void)state;
    return tmpdir_make(g_dir);
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove(g_dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_and_stacks_by_function),
        cmocka_unit_test(test_no_inline_is_perfs_view),
        cmocka_unit_test(test_exit_status_and_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* One vocabulary, checked option by option on every command that takes it:
 * a saved trace answers what a live run answers.
 *  - --max-events refuses a trace past N on summary, diff, report, merge;
 *  - --top-level keeps only the outer events on summary and diff, whose
 *    totals stay the whole trace's;
 *  - --group-by-stack N splits rows by the trace's "Call stack" on summary
 *    and diff (JSON and .pftrace alike), and their CSV and JSON carry the
 *    stack so that same-name rows can be told apart;
 *  - --stacks FILE writes folded stacks from a trace: its call stacks, or
 *    its operator tree when it has none;
 *  - every reading command's help names .pftrace among what it reads;
 *  - an error says why and what to change (batch norm's one value per
 *    channel, PyTorch's "Expected more than 1 value per channel"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_shell.h"
#include "slurp.h"
#include "tmpdir.h"

static char g_tmp[] = "/tmp/opprof_cli_vocab_XXXXXX";
static char g_out[600], g_err[600];

#define opprof(...) cli_shell_run(g_out, g_err, __VA_ARGS__)

/* op called from two sites: once from f (10 us), twice from g (5 us each),
 * all inside main. */
#define STACKED_TRACE                                                                                          \
    "{\"traceEvents\": ["                                                                                      \
    "{\"ph\": \"X\", \"name\": \"main\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 100},"                  \
    "{\"ph\": \"X\", \"name\": \"op\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 10,"                      \
    " \"args\": {\"Call stack\": \"a.c(1): f;main.c(9): main\"}},"                                           \
    "{\"ph\": \"X\", \"name\": \"op\", \"pid\": 1, \"tid\": 1, \"ts\": 20, \"dur\": 5,"                      \
    " \"args\": {\"Call stack\": \"b.c(2): g;main.c(9): main\"}},"                                           \
    "{\"ph\": \"X\", \"name\": \"op\", \"pid\": 1, \"tid\": 1, \"ts\": 30, \"dur\": 5,"                      \
    " \"args\": {\"Call stack\": \"b.c(2): g;main.c(9): main\"}}]}"

static char *path_of(const char *name)
{
    static char buf[4][700];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_tmp, name);
    return buf[k];
}

static char *out_text(void)
{
    char *s = slurp(g_out);
    assert_non_null(s);
    return s;
}

static void test_max_events_on_every_reader(void **state)
{
    (void)state;
    write_text(g_tmp, "s.json", STACKED_TRACE);
    const char *t = path_of("s.json");
    static const char *const fmt[] = {"summary %s --max-events %s", "diff %s %s --max-events 3",
                                      "report %s -o /dev/null --max-events %s", "merge %s --max-events %s"};
    for (int i = 0; i < 4; i++) {
        char args[1600];
        snprintf(args, sizeof args, fmt[i], t, i == 1 ? t : "3");
        int rc = opprof("%s", args);
        char *err = slurp(g_err);
        if (rc != 2 || !strstr(err, "more than 3 events")) fail_msg("opprof %s: exit %d, %s", args, rc, err);
        free(err);
        /* and 4 events pass */
        snprintf(args, sizeof args, fmt[i], t, i == 1 ? t : "4");
        if (i == 1) strcpy(strstr(args, "--max-events 3"), "--max-events 4");
        rc = opprof("%s", args);
        err = slurp(g_err);
        if (rc != 0) fail_msg("opprof %s: exit %d, %s", args, rc, err);
        free(err);
    }
}

static void test_top_level_on_summary_and_diff(void **state)
{
    (void)state;
    write_text(g_tmp, "s.json", STACKED_TRACE);
    const char *t = path_of("s.json");
    assert_int_equal(opprof("summary %s --top-level --format csv", t), 0);
    char *out = out_text();
    assert_non_null(strstr(out, "\nmain,1,"));
    assert_null(strstr(out, "\nop,"));
    free(out);
    assert_int_equal(opprof("diff %s %s --top-level", t, t), 0);
    out = out_text();
    /* the total is the trace's self time (100 us), not the rows' (main's 80 us) */
    assert_non_null(strstr(out, "Self CPU time total: base 100.000us, test 100.000us"));
    assert_non_null(strstr(out, "Calls: base 1, test 1 (top-level events)"));
    assert_null(strstr(out, "\nop "));
    free(out);
}

/* Every reading command that groups by stack splits "op" by its two sites. */
static void expect_split_by_stack(const char *trace)
{
    assert_int_equal(opprof("summary %s --group-by-stack 1", trace), 0);
    char *out = out_text();
    if (!strstr(out, "Source Location") || !strstr(out, "a.c(1): f") || !strstr(out, "b.c(2): g"))
        fail_msg("summary %s --group-by-stack 1:\n%s", trace, out);
    free(out);
    assert_int_equal(opprof("summary %s --group-by-stack 1 --format csv", trace), 0);
    out = out_text();
    if (!strstr(out, ",input_shapes,stack\n") || !strstr(out, "\nop,1,10.000,") || !strstr(out, ",a.c(1): f\n") ||
        !strstr(out, "\nop,2,10.000,") || !strstr(out, ",b.c(2): g\n"))
        fail_msg("summary %s --group-by-stack 1 --format csv:\n%s", trace, out);
    free(out);
    assert_int_equal(opprof("summary %s --group-by-stack 2 --format json", trace), 0);
    out = out_text();
    if (!strstr(out, "\"stack\": \"a.c(1): f\\nmain.c(9): main\"")) fail_msg("summary --format json:\n%s", out);
    free(out);
    assert_int_equal(opprof("diff %s %s --group-by-stack 1", trace, trace), 0);
    out = out_text();
    if (!strstr(out, "Source Location") || !strstr(out, "a.c(1): f") || !strstr(out, "b.c(2): g"))
        fail_msg("diff --group-by-stack 1:\n%s", out);
    free(out);
    assert_int_equal(opprof("diff %s %s --group-by-stack 1 --format csv", trace, trace), 0);
    out = out_text();
    if (!strstr(out, "name,input_shapes,stack,") || !strstr(out, "\nop,,a.c(1): f,1,1,0,") ||
        !strstr(out, "\nop,,b.c(2): g,2,2,0,"))
        fail_msg("diff --group-by-stack 1 --format csv:\n%s", out);
    free(out);
}

static void test_group_by_stack_on_saved_traces(void **state)
{
    (void)state;
    write_text(g_tmp, "s.json", STACKED_TRACE);
    expect_split_by_stack(path_of("s.json"));
    /* the same trace as a .pftrace reads its stacks back too */
    assert_int_equal(opprof("convert %s %s", path_of("s.json"), path_of("s.pftrace")), 0);
    expect_split_by_stack(path_of("s.pftrace"));
    /* a trace without stacks says so, and gives one row per name */
    write_text(g_tmp, "plain.json", "[{\"ph\": \"X\", \"name\": \"op\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 1}]");
    assert_int_equal(opprof("summary %s --group-by-stack 3", path_of("plain.json")), 0);
    char *err = slurp(g_err);
    assert_non_null(strstr(err, "has no call stacks (record it with --with-stack)"));
    free(err);
}

static void test_stacks_from_saved_traces(void **state)
{
    (void)state;
    write_text(g_tmp, "s.json", STACKED_TRACE);
    assert_int_equal(opprof("summary %s --stacks %s", path_of("s.json"), path_of("s.folded")), 0);
    char *folded = slurp(path_of("s.folded"));
    assert_non_null(folded);
    /* root first, the operator last, microseconds */
    if (!strstr(folded, "main.c(9):_main;a.c(1):_f;op 10\n") || !strstr(folded, "main.c(9):_main;b.c(2):_g;op 10\n"))
        fail_msg("%s", folded);
    free(folded);
    /* without stacks: the operator call tree */
    write_text(g_tmp, "tree.json",
               "[{\"ph\": \"X\", \"name\": \"outer\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 50},"
               " {\"ph\": \"X\", \"name\": \"inner\", \"pid\": 1, \"tid\": 1, \"ts\": 10, \"dur\": 20}]");
    assert_int_equal(opprof("summary %s --stacks %s", path_of("tree.json"), path_of("t.folded")), 0);
    folded = slurp(path_of("t.folded"));
    assert_non_null(folded);
    if (!strstr(folded, "outer 30\n") || !strstr(folded, "outer;inner 20\n")) fail_msg("%s", folded);
    free(folded);
}

/* Every command that reads traces says it reads .pftrace too. */
static void test_readers_name_pftrace_in_help(void **state)
{
    (void)state;
    static const char *const cmds[] = {"summary", "report", "convert"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(opprof("%s --help", cmds[i]), 0);
        char *out = out_text();
        if (!strstr(out, ".pftrace")) fail_msg("opprof %s --help does not name .pftrace:\n%s", cmds[i], out);
        free(out);
    }
}

static void test_batch_norm_error_says_what_to_change(void **state)
{
    (void)state;
    assert_int_equal(opprof("run resnet18-train --batch 1 --image-size 32"), 2);
    char *err = slurp(g_err);
    if (count_lines(err) != 1 || !strstr(err, "batch norm in training needs more than 1 value per channel") ||
        !strstr(err, "layer4 sees 1x1 at --image-size 32") || !strstr(err, "give --batch 2 or more, or --image-size 33"))
        fail_msg("%s", err);
    free(err);
    /* and what it says to change runs */
    assert_int_equal(opprof("run resnet18-train --batch 1 --image-size 33 --warmup 0 --row-limit 1 --threads 1"), 0);
}

static int setup(void **state)
{
    (void)state;
    if (tmpdir_make(g_tmp)) return -1;
    snprintf(g_out, sizeof g_out, "%s/out", g_tmp);
    snprintf(g_err, sizeof g_err, "%s/err", g_tmp);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove(g_tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_max_events_on_every_reader),
        cmocka_unit_test(test_top_level_on_summary_and_diff),
        cmocka_unit_test(test_group_by_stack_on_saved_traces),
        cmocka_unit_test(test_stacks_from_saved_traces),
        cmocka_unit_test(test_readers_name_pftrace_in_help),
        cmocka_unit_test(test_batch_norm_error_says_what_to_change),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* The opprof command's conventions, the same for every subcommand:
 *  - `opprof help CMD` prints exactly `opprof CMD --help`;
 *  - a wrong command line exits 2 with the problem and the two-line usage,
 *    never the whole help;
 *  - the sort keys the library accepts are the ones --help lists, and
 *    every command states the same defaults (cpu_time_total, 10 rows);
 *  - merge names both files of a rank given twice and exits 2, takes
 *    --output, takes a folder (its latest run), and does not cut names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_shell.h"
#include "opprof_trace.h"
#include "slurp.h"
#include "tmpdir.h"

static char g_tmp[] = "/tmp/opprof_cli_opts_XXXXXX";
static char g_out[600], g_err[600];

static const char *const COMMANDS[] = {"run", "summary", "diff", "report", "exec", "merge", "convert", "trigger"};
#define NCOMMANDS (sizeof COMMANDS / sizeof *COMMANDS)

#define opprof(...) cli_shell_run(g_out, g_err, __VA_ARGS__)
#define write_file(name, text) write_text(g_tmp, name, text)

static void test_help_cmd_is_cmd_help(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCOMMANDS; i++) {
        assert_int_equal(opprof("%s --help", COMMANDS[i]), 0);
        char *want = slurp(g_out);
        assert_int_equal(opprof("help %s", COMMANDS[i]), 0);
        char *got = slurp(g_out);
        assert_non_null(want);
        assert_non_null(got);
        if (strcmp(want, got)) fail_msg("opprof help %s differs from opprof %s --help", COMMANDS[i], COMMANDS[i]);
        char usage[64];
        snprintf(usage, sizeof usage, "usage: opprof %s ", COMMANDS[i]);
        assert_int_equal(strncmp(got, usage, strlen(usage)), 0);
        free(want);
        free(got);
    }
    assert_int_equal(opprof("help"), 0); /* the command list */
    char *out = slurp(g_out);
    for (size_t i = 0; i < NCOMMANDS; i++) assert_non_null(strstr(out, COMMANDS[i]));
    free(out);
    assert_int_equal(opprof("help no-such-command"), 2);
}

/* The problem on one line, then the usage and where the options are. */
static void expect_usage_error(const char *cmd, const char *args)
{
    int rc = opprof("%s %s", cmd, args);
    char *err = slurp(g_err);
    assert_non_null(err);
    char usage[64];
    snprintf(usage, sizeof usage, "\nusage: opprof %s", cmd);
    if (rc != 2 || count_lines(err) != 3 || !strstr(err, usage) || strstr(err, "options:"))
        fail_msg("'opprof %s %s' exited %d with stderr:\n%s", cmd, args, rc, err);
    free(err);
}

static void test_usage_errors_are_two_lines(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCOMMANDS; i++) {
        expect_usage_error(COMMANDS[i], "--bogus x");
        expect_usage_error(COMMANDS[i], "--row-limit many x");
    }
    expect_usage_error("summary", "t.json --sort nonsense");
    expect_usage_error("run", "vgg16");
    expect_usage_error("run", "resnet18 --gzip");
    expect_usage_error("run", "resnet18 --schedule wait=1");
    expect_usage_error("diff", "only_one.json");
    expect_usage_error("merge", "");
    expect_usage_error("exec", "--format xml true");
    expect_usage_error("exec", "");
    assert_int_equal(opprof(""), 2);
    char *err = slurp(g_err);
    assert_int_equal(count_lines(err), 2);
    free(err);
    assert_int_equal(opprof("--bogus"), 2);
    err = slurp(g_err);
    assert_int_equal(count_lines(err), 3);
    free(err);
}

/* The library's sort keys, from its own error message ("valid keys: a, b"). */
static int library_keys(char keys[32][64])
{
    opprof_config cfg;
    opprof_config_init(&cfg);
    opprof_trace *t = NULL;
    opprof_key_averages *ka = NULL;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_int_equal(opprof_key_averages(t, NULL, &ka), OPPROF_OK);
    assert_int_not_equal(opprof_key_averages_sort(ka, "no_such_key"), OPPROF_OK);
    const char *list = strstr(opprof_last_error(), "valid keys: ");
    assert_non_null(list);
    int n = 0;
    for (const char *p = list + 12; *p && n < 32;) {
        size_t len = strcspn(p, ", ");
        snprintf(keys[n++], 64, "%.*s", (int)len, p);
        p += len;
        while (*p == ',' || *p == ' ') p++;
    }
    opprof_key_averages_free(ka);
    opprof_trace_free(t);
    return n;
}

static void test_sort_keys_and_defaults_are_stated(void **state)
{
    (void)state;
    char keys[32][64];
    int n = library_keys(keys);
    assert_true(n >= 13);
    static const char *const table_cmds[] = {"run", "summary", "exec"};
    for (int c = 0; c < 3; c++) {
        assert_int_equal(opprof("%s --help", table_cmds[c]), 0);
        char *help = slurp(g_out);
        const char *sort = strstr(help, "\n  --sort KEY");
        assert_non_null(sort);
        const char *end = strstr(sort + 1, "\n  --");
        for (int k = 0; k < n; k++) {
            const char *at = strstr(sort, keys[k]);
            if (!at || (end && at > end)) fail_msg("opprof %s --help does not list sort key %s", table_cmds[c], keys[k]);
        }
        assert_non_null(strstr(help, "(default cpu_time_total)"));
        assert_non_null(strstr(help, "(default 10;"));
        free(help);
        /* and every key it lists is accepted before anything runs */
        for (int k = 0; k < n; k++) {
            int rc = opprof("%s --sort %s --bogus", table_cmds[c], keys[k]);
            char *err = slurp(g_err);
            if (rc != 2 || !strstr(err, "unknown option '--bogus'"))
                fail_msg("opprof %s refused --sort %s: %s", table_cmds[c], keys[k], err);
            free(err);
        }
    }
    assert_int_equal(opprof("diff --help"), 0);
    char *help = slurp(g_out);
    static const char *const diff_keys[] = {"cpu_time_total", "self_cpu_time_total", "count", "device_time_total",
                                            "self_device_time_total"};
    for (int k = 0; k < 5; k++) assert_non_null(strstr(help, diff_keys[k]));
    assert_non_null(strstr(help, "cpu_time_total (default)"));
    assert_non_null(strstr(help, "(default 10;"));
    free(help);
}

#define EVENT(name, ts, dur) "{\"ph\":\"X\",\"name\":\"" name "\",\"pid\":1,\"tid\":1,\"ts\":" #ts ",\"dur\":" #dur "}"
#define RANK_TRACE(rank, events)                                                                              \
    "{\"distributedInfo\": {\"backend\": \"mpi\", \"rank\": " #rank ", \"world_size\": 2}, \"traceEvents\": [" \
    events "]}"

static void test_merge_inputs(void **state)
{
    (void)state;
    write_file("a0.json", RANK_TRACE(0, EVENT("op", 0, 10)));
    write_file("b0.json", RANK_TRACE(0, EVENT("op", 0, 12)));
    assert_int_equal(opprof("merge %s/a0.json %s/b0.json", g_tmp, g_tmp), 2);
    char *err = slurp(g_err);
    if (!strstr(err, "/a0.json and ") || !strstr(err, "/b0.json are both rank 0") || count_lines(err) != 1)
        fail_msg("%s", err);
    free(err);

    /* --output (and -o) write the merged trace; names are never cut */
    write_file("a1.json", RANK_TRACE(1, EVENT("an_operator_name_well_over_forty_characters_long::forward", 0, 10)));
    assert_int_equal(opprof("merge %s/a0.json %s/a1.json --output %s/m.json", g_tmp, g_tmp, g_tmp), 0);
    char *out = slurp(g_out);
    assert_non_null(strstr(out, "an_operator_name_well_over_forty_characters_long::forward "));
    free(out);
    char path[700];
    snprintf(path, sizeof path, "%s/m.json", g_tmp);
    assert_int_equal(access(path, R_OK), 0);
    unlink(path);
    assert_int_equal(opprof("merge %s/a0.json %s/a1.json -o %s/m.json --quiet", g_tmp, g_tmp, g_tmp), 0);
    assert_int_equal(access(path, R_OK), 0);
}

/* A folder holds two runs, and in the later one rank 1 wrote two cycles:
 * merge takes the later run and rank 1's last cycle. */
static void test_merge_folder_takes_the_latest_run(void **state)
{
    (void)state;
    char dir[700];
    snprintf(dir, sizeof dir, "%s/runs", g_tmp);
    assert_int_equal(mkdir(dir, 0755), 0);
    write_file("runs/20260101-000000-000000001_rank_0.1000.pt.trace.json", RANK_TRACE(0, EVENT("old_run", 0, 5)));
    write_file("runs/20260101-000000-000000001_rank_1.1000.pt.trace.json", RANK_TRACE(1, EVENT("old_run", 0, 5)));
    write_file("runs/20260101-000001-000000002_rank_0.2000.pt.trace.json", RANK_TRACE(0, EVENT("new_run", 0, 5)));
    write_file("runs/20260101-000001-000000002_rank_1.2000.pt.trace.json", RANK_TRACE(1, EVENT("cycle_1", 0, 5)));
    write_file("runs/20260101-000001-000000002_rank_1.3000.pt.trace.json", RANK_TRACE(1, EVENT("cycle_2", 0, 5)));
    write_file("runs/notes.txt", "not a trace");
    assert_int_equal(opprof("merge %s", dir), 0);
    char *out = slurp(g_out), *err = slurp(g_err);
    assert_non_null(strstr(out, "new_run"));
    assert_non_null(strstr(out, "cycle_2"));
    assert_null(strstr(out, "old_run"));
    assert_null(strstr(out, "cycle_1"));
    assert_non_null(strstr(err, "run 20260101-000001-000000002, 2 ranks (2 files of older runs left out, 1 earlier cycle)"));
    free(out);
    free(err);
    assert_int_equal(opprof("merge %s", g_tmp), 2); /* no run's files there */
    err = slurp(g_err);
    assert_non_null(strstr(err, "no rank's trace"));
    free(err);
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
        cmocka_unit_test(test_help_cmd_is_cmd_help),
        cmocka_unit_test(test_usage_errors_are_two_lines),
        cmocka_unit_test(test_sort_keys_and_defaults_are_stated),
        cmocka_unit_test(test_merge_inputs),
        cmocka_unit_test(test_merge_folder_takes_the_latest_run),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

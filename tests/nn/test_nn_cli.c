/* `opprof run`: the table it prints for each model and option, --help that
 * documents every option with an example, and bad command lines refused
 * with status 2. Runs the built CLI (OPPROF_BIN) on small inputs. */
#define _GNU_SOURCE /* memmem */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_run.h"

static void test_resnet18_table(void **state)
{
    (void)state;
    int st;
    char *out = run("run resnet18 --batch 1 --image-size 64 --threads 1", &st);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "Self CPU %"));
    assert_non_null(strstr(out, "Self CPU time total:"));
    /* ten rows by default (which ten depends on timing at this size), no FLOPs column */
    assert_null(strstr(out, "FLOPs"));
    int rows = 0;
    for (const char *p = out; (p = strstr(p, "aten::")); p++) rows++;
    assert_int_equal(rows, 10);
    free(out);
}

static void test_options_change_the_table(void **state)
{
    (void)state;
    int st;
    char *out = run("run resnet18 --batch 1 --image-size 64 --threads 1 --row-limit -1 --flops --sort flops "
                    "--group-by-input-shape",
                    &st);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "FLOPs  ")); /* "Total MFLOPs": PyTorch scales the unit */
    assert_non_null(strstr(out, "Input Shapes"));
    const char *first_row = strstr(out, "aten::");
    assert_true(first_row && !strncmp(first_row, "aten::conv2d ", 13));
    /* one row per shape: layer1's four 64->64 convolutions lead by FLOPs;
     * the stem's is a row of its own */
    assert_int_equal(calls_of(out, "aten::conv2d"), 4);
    assert_non_null(strstr(out, "[[1, 3, 64, 64], [64, 3, 7, 7], [], [], [], [], []]"));
    assert_int_equal(calls_of(out, "aten::linear"), 1);
    free(out);
    out = run("run mlp-train --steps 3 --row-limit -1 --sort count", &st);
    assert_int_equal(st, 0);
    assert_int_equal(calls_of(out, "train_step"), 3);
    assert_int_equal(calls_of(out, "AddmmBackward0"), 6);
    assert_int_equal(calls_of(out, "Optimizer.step#SGD.step"), 3);
    free(out);
    out = run("run resnet18-train --batch 2 --image-size 32 --warmup 0 --row-limit -1", &st);
    assert_int_equal(st, 0);
    assert_int_equal(calls_of(out, "ConvolutionBackward0"), 20);
    assert_int_equal(calls_of(out, "train_step"), 1);
    free(out);
}

static void test_help_documents_every_option(void **state)
{
    (void)state;
    int st;
    char *out = run("run --help", &st);
    assert_int_equal(st, 0);
    static const char *const opts[] = {"--batch",     "--image-size", "--steps",  "--warmup",
                                       "--threads",   "--seed",       "--sort",   "--row-limit",
                                       "--shapes",    "--group-by-input-shape", "--flops",
                                       "--memory",    "--memory-timeline", "--trace", "--schedule",
                                       "--trace-dir", "--gzip", "--with-stack", "--stacks",
                                       "--stacks-metric", "--group-by-stack", "--format"};
    const char *section = strstr(out, "\noptions:\n");
    assert_non_null(section);
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++) {
        /* the option's entry: "\n  --name" followed by a space or its metavariable */
        char head[64];
        snprintf(head, sizeof head, "\n  %s ", opts[i]);
        const char *p = strstr(section, head);
        if (!p) fail_msg("--help does not document %s", opts[i]);
        const char *next = strstr(p + 1, "\n  --"), *eg = strstr(p, "e.g. opprof run");
        if (!eg || (next && eg > next)) fail_msg("--help gives no example for %s", opts[i]);
        const char *eol = strchr(eg, '\n');
        size_t len = eol ? (size_t)(eol - eg) : strlen(eg);
        if (!memmem(eg, len, opts[i], strlen(opts[i]))) fail_msg("the example for %s does not use it", opts[i]);
    }
    assert_non_null(strstr(out, "resnet18-train"));
    assert_non_null(strstr(out, "mlp-train"));
    /* the old spellings work but are not shown */
    assert_null(strstr(out, "--stacks-out"));
    assert_null(strstr(out, "\n  --stack "));
    free(out);
}

/* --format csv and json: the rows of the table, every one, sorted; the old
 * spellings of --with-stack and --stacks still work. */
static void test_formats_and_old_spellings(void **state)
{
    (void)state;
    int st;
    char *out = run("run mlp-train --steps 1 --format csv", &st);
    assert_int_equal(st, 0);
    assert_int_equal(strncmp(out, "name,count,", 11), 0);
    assert_null(strstr(out, "Self CPU %")); /* no table */
    int rows = 0;
    for (const char *p = out; (p = strchr(p, '\n')); p++) rows++;
    assert_true(rows > 11); /* a header and every row, not --row-limit's 10 */
    assert_non_null(strstr(out, "\ntrain_step,1,"));
    free(out);
    out = run("run mlp-train --steps 1 --format json --sort count", &st);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "\"name\": \"train_step\""));
    free(out);
    char tmp[] = "/tmp/opprof_nn_cli_XXXXXX", args[256];
    assert_non_null(mkdtemp(tmp));
    snprintf(args, sizeof args, "run mlp-train --steps 1 --stack --stacks-out %s/old.folded --row-limit 1", tmp);
    free(run(args, &st));
    assert_int_equal(st, 0);
    snprintf(args, sizeof args, "%s/old.folded", tmp);
    FILE *f = fopen(args, "r");
    assert_non_null(f);
    char line[4096];
    assert_non_null(fgets(line, sizeof line, f)); /* folded lines: frames;...;op N */
    assert_non_null(strchr(line, ' '));
    fclose(f);
    unlink(args);
    rmdir(tmp);
}

static void test_bad_command_lines(void **state)
{
    (void)state;
    static const char *const bad[] = {"run",
                                      "run vgg16",
                                      "run resnet18 --batch 0",
                                      "run resnet18 --batch x",
                                      "run resnet18 --frobnicate",
                                      "run resnet18 --steps",
                                      "run resnet18 --flops=1",
                                      "run resnet18 mlp-train",
                                      "run resnet18 --sort nonsense",
                                      "run resnet18 --schedule wait=1",
                                      "run resnet18 --schedule active=x",
                                      "run resnet18 --gzip",
                                      "run resnet18 --stacks-metric cpu_time",
                                      "run resnet18 --group-by-stack -1",
                                      "run resnet18 --memory=1",
                                      "run resnet18 --format xml"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int st;
        free(run(bad[i], &st));
        if (st != 2) fail_msg("'opprof %s' exited %d, want 2", bad[i], st);
    }
}

/* opprof run --flight: the dump of the slow step holds the run's operators
 * (a table-only run sums instead of keeping events; a flight recorder must
 * keep them, or its dumps are empty), in JSON and in Perfetto's format. */
static void test_flight_dump_holds_the_slow_step(void **state)
{
    (void)state;
    char dir[] = "/tmp/opprof_nnflight_XXXXXX", xdg[64];
    assert_non_null(mkdtemp(dir));
    /* the recorder's trigger socket in a folder of the test's, not the user's */
    snprintf(xdg, sizeof xdg, "%s/run", dir);
    assert_int_equal(mkdir(xdg, 0700), 0);
    assert_int_equal(setenv("XDG_RUNTIME_DIR", xdg, 1), 0);
    static const char *const ext[] = {"json", "pftrace"};
    for (int k = 0; k < 2; k++) {
        char args[512], path[600];
        snprintf(args, sizeof args,
                 "run mlp-train --steps 12 --flight 8M --slow-step 50ms --inject-delay 8:120 --flight-file %s/f_{n}.%s",
                 dir, ext[k]);
        int st;
        free(run(args, &st));
        assert_int_equal(st, 0);
        snprintf(path, sizeof path, "summary %s/f_1.%s --row-limit -1", dir, ext[k]);
        char *table = run(path, &st);
        assert_int_equal(st, 0);
        if (calls_of(table, "aten::addmm") < 2 || calls_of(table, "train_step") < 1) fail_msg("dump:\n%s", table);
        free(table);
    }
    unsetenv("XDG_RUNTIME_DIR");
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resnet18_table),
        cmocka_unit_test(test_options_change_the_table),
        cmocka_unit_test(test_help_documents_every_option),
        cmocka_unit_test(test_bad_command_lines),
        cmocka_unit_test(test_formats_and_old_spellings),
        cmocka_unit_test(test_flight_dump_holds_the_slow_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* PyTorch's own traces and the tables PyTorch 1.13 printed for them
 * (../shared/fixtures/torch-traces): rebuilt from the events, our tables must
 * be the same text, byte for byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "slurp.h"
#include "fixtures.h"
#include "opprof_trace.h"

/* Prints the first differing line of two texts, for a readable failure. */
static void show_difference(const char *want, const char *got)
{
    size_t i = 0, start = 0;
    int line = 1;
    for (; want[i] && want[i] == got[i]; i++)
        if (want[i] == '\n') line++, start = i + 1;
    fprintf(stderr, "first difference at line %d:\n  want: %.*s\n  got:  %.*s\n", line,
            (int)strcspn(want + start, "\n"), want + start, (int)strcspn(got + start, "\n"), got + start);
}

static void check_model(const char *model)
{
    char path[4096], sub[512];
    snprintf(sub, sizeof sub, "torch-traces/%s.trace.json", model);
    if (!fixture_path(path, sizeof path, sub)) {
        fprintf(stderr, "SKIP: %s not found (set OPPROF_FIXTURES)\n", path);
        skip();
    }
    opprof_trace *t = NULL;
    if (opprof_trace_load(path, &t) != OPPROF_OK) fail_msg("%s", opprof_last_error());
    opprof_key_averages *ka;
    assert_int_equal(opprof_key_averages(t, NULL, &ka), OPPROF_OK);
    opprof_trace_free(t); /* the averages own their strings */

    static const struct {
        const char *key, *suffix;
        int limit;
    } cases[] = {
        {"cpu_time_total", "", -1},
        {"self_cpu_time_total", "", -1},
        {"count", "", -1},
        {"cpu_time_total", ".top10", 10},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(sub, sizeof sub, "torch-traces/%s.table.%s%s.txt", model, cases[i].key, cases[i].suffix);
        assert_true(fixture_path(path, sizeof path, sub));
        char *want = slurp(path), *got = NULL;
        assert_non_null(want);
        assert_int_equal(opprof_table_string(ka, cases[i].key, cases[i].limit, &got), OPPROF_OK);
        if (strcmp(want, got) != 0) {
            show_difference(want, got);
            fail_msg("%s: table differs from PyTorch's", sub);
        }
        free(want);
        free(got);
    }
    opprof_key_averages_free(ka);
}

static void test_resnet18_tables_match_pytorch(void **state)
{
    (void)state;
    check_model("resnet18_infer_b5");
}

static void test_mlp_train_tables_match_pytorch(void **state)
{
    (void)state;
    check_model("mlp_train_3steps");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resnet18_tables_match_pytorch),
        cmocka_unit_test(test_mlp_train_tables_match_pytorch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

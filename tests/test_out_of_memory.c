/* The common containers' out-of-memory paths as their users take them: each
 * allocation through op_realloc (common/vec.h) fails in turn while a trace
 * is read (JSON and .pftrace), averaged, printed as a table and written as
 * folded stacks. Every attempt must fail cleanly with OPPROF_E_NOMEM or
 * succeed with exactly the output of a run without failures (ASan checks
 * that nothing leaks or is touched after free). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/vec.h"
#include "fixtures.h"
#include "model/strtab.h"
#include "opprof_trace.h"
#include "tmpdir.h"

#define FIXTURE "kineto/benchmark_result_2869224_1695835535_trace.json.gz"

/* Everything one pass produces, as text; NULL with *rc set on failure. */
static char *one_pass(const char *path, int *rc)
{
    opprof_trace *t = NULL;
    opprof_key_averages *ka = NULL;
    char *table = NULL, *out = NULL;
    size_t n = 0;
    FILE *f = NULL;
    opprof_avg_options opt = {0};
    opt.group_by_input_shape = 1;
    if ((*rc = opprof_trace_load(path, &t)) != OPPROF_OK) goto done;
    if ((*rc = opprof_key_averages_new(t, &opt, &ka)) != OPPROF_OK) goto done;
    if ((*rc = opprof_table_string(ka, "self_cpu_time_total", -1, &table)) != OPPROF_OK) goto done;
    f = open_memstream(&out, &n);
    assert_non_null(f);
    fputs(table, f);
    if ((*rc = opprof_write_stacks(t, f, "self_cpu_time_total", OPPROF_STACKS_OPERATORS)) != OPPROF_OK) goto done;
    *rc = opprof_key_averages_write_csv(ka, f);
done:
    if (f) fclose(f);
    if (*rc != OPPROF_OK) {
        free(out);
        out = NULL;
    }
    free(table);
    opprof_key_averages_free(ka);
    opprof_trace_free(t);
    return out;
}

/* Fails the k-th allocation for k = 0, 1, ... until a pass succeeds. */
static void sweep(const char *path)
{
    op_alloc_fail_after(-1);
    int rc;
    char *want = one_pass(path, &rc);
    assert_int_equal(rc, OPPROF_OK);
    assert_non_null(want);
    assert_true(strlen(want) > 100);
    long k = 0, failed = 0;
    for (;; k++) {
        op_alloc_fail_after(k);
        char *got = one_pass(path, &rc);
        op_alloc_fail_after(-1);
        if (rc == OPPROF_OK) {
            assert_string_equal(got, want);
            free(got);
            break;
        }
        assert_int_equal(rc, OPPROF_E_NOMEM);
        assert_null(got);
        failed++;
        assert_true(k < 100000);
    }
    print_message("%s: %ld allocations failed in turn, each cleanly\n", path, failed);
    assert_true(failed > 10); /* the sweep reached the containers */
    free(want);
}

static void json_load_table_and_stacks(void **state)
{
    (void)state;
    char path[1024];
    if (!fixture_path(path, sizeof path, FIXTURE)) {
        print_message("skipped: %s not found\n", path);
        skip();
    }
    sweep(path);
}

static void pftrace_load_table_and_stacks(void **state)
{
    (void)state;
    char src[1024], dir[] = "/tmp/opprof_oom_XXXXXX", path[1100];
    if (!fixture_path(src, sizeof src, FIXTURE)) {
        print_message("skipped: %s not found\n", src);
        skip();
    }
    assert_int_equal(tmpdir_make(dir), 0);
    opprof_trace *t;
    assert_int_equal(opprof_trace_load(src, &t), OPPROF_OK);
    snprintf(path, sizeof path, "%s/t.pftrace", dir);
    assert_int_equal(opprof_export_chrome_trace(t, path), OPPROF_OK);
    opprof_trace_free(t);
    sweep(path);
    tmpdir_remove(dir);
}

/* A string table whose index cannot grow adds nothing half-way: the ids it
 * gave stay, and the next intern after memory is back gets the next id. */
static void strtab_keeps_its_ids(void **state)
{
    (void)state;
    op_strtab t;
    assert_int_equal(op_strtab_init(&t), 0);
    char s[32];
    uint32_t n = 0;
    for (;; n++) {
        snprintf(s, sizeof s, "name%u", n);
        if (t.ix.n + 1 > t.ix.cap / 2) break; /* the next new string grows the index */
        assert_int_equal(op_strtab_intern(&t, s, strlen(s)), n + 1);
    }
    op_alloc_fail_after(0);
    assert_int_equal(op_strtab_intern(&t, s, strlen(s)), UINT32_MAX);
    assert_int_equal(op_strtab_intern(&t, "name0", 5), 1); /* known: no growth needed */
    op_alloc_fail_after(-1);
    assert_int_equal(t.count, n + 1);
    assert_int_equal(op_strtab_find(&t, s, strlen(s)), UINT32_MAX);
    assert_int_equal(op_strtab_intern(&t, s, strlen(s)), n + 1);
    for (uint32_t i = 0; i <= n; i++) {
        snprintf(s, sizeof s, "name%u", i);
        assert_int_equal(op_strtab_find(&t, s, strlen(s)), i + 1);
        assert_string_equal(op_strtab_get(&t, i + 1), s);
    }
    op_strtab_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(json_load_table_and_stacks),
        cmocka_unit_test(pftrace_load_table_and_stacks),
        cmocka_unit_test(strtab_keeps_its_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

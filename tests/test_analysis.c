/* Key averages on synthetic event models: what is grouped with what, the
 * order of groups, the [memory] row, device rows, top-level filtering, the
 * stable sort and its keys, and the errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/model.h"

static op_event *add(opprof_trace *t, uint32_t th, const char *name, int cat, int64_t s, int64_t d)
{
    op_event *e = op_trace_add_event(t, th, op_trace_intern(t, name, strlen(name)), cat, s, d);
    assert_non_null(e);
    return e;
}

static opprof_key_averages *averages(opprof_trace *t, const opprof_avg_options *opt)
{
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    opprof_key_averages *ka = NULL;
    assert_int_equal(opprof_key_averages(t, opt, &ka), OPPROF_OK);
    return ka;
}

static opprof_avg_row row(const opprof_key_averages *ka, size_t i)
{
    opprof_avg_row r;
    assert_int_equal(opprof_key_averages_row(ka, i, &r), OPPROF_OK);
    return r;
}

static void test_groups_by_name_in_first_occurrence_order(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    uint32_t a = (uint32_t)op_trace_thread(t, 1, 1), b = (uint32_t)op_trace_thread(t, 1, 2);
    add(t, a, "ProfilerStep#7", OPPROF_CAT_USER_ANNOTATION, 0, 1000);
    op_evx_add(t, add(t, a, "mm", OPPROF_CAT_CPU_OP, 100, 300))->flops = 10;
    add(t, a, "add", OPPROF_CAT_CPU_OP, 150, 50);
    add(t, b, "add", OPPROF_CAT_CPU_OP, 50, 20); /* other thread, earliest add */
    add(t, a, "ProfilerStep#8", OPPROF_CAT_USER_ANNOTATION, 1000, 500);
    op_evx_add(t, add(t, a, "mm", OPPROF_CAT_CPU_OP, 1100, 100))->flops = 5;
    add(t, a, "ProfilerStepX", OPPROF_CAT_CPU_OP, 1300, 10); /* no '#': not a step */
    opprof_key_averages *ka = averages(t, NULL);
    opprof_trace_free(t);
    assert_int_equal(opprof_key_averages_count(ka), 4);
    const char *names[] = {"ProfilerStep*", "add", "mm", "ProfilerStepX"};
    for (size_t i = 0; i < 4; i++) assert_string_equal(row(ka, i).name, names[i]);
    opprof_avg_row r = row(ka, 0);
    assert_int_equal(r.count, 2);
    assert_int_equal(r.cpu_time_total_ns, 1500);
    assert_int_equal(r.self_cpu_time_total_ns, 1500 - 300 - 100 - 10);
    r = row(ka, 1);
    assert_int_equal(r.count, 2);
    assert_int_equal(r.cpu_time_total_ns, 70);
    assert_string_equal(r.input_shapes, "");
    assert_string_equal(r.stack, "");
    r = row(ka, 2);
    assert_int_equal(r.self_cpu_time_total_ns, 250 + 100);
    assert_int_equal(r.flops, 15);
    opprof_key_averages_free(ka);
}

static void test_device_rows_and_device_time(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    uint32_t h = (uint32_t)op_trace_thread(t, 1, 1), s = (uint32_t)op_trace_thread(t, 1, 7);
    add(t, h, "gemm", OPPROF_CAT_CPU_OP, 0, 100);
    op_event *l = add(t, h, "cudaLaunchKernel", OPPROF_CAT_CUDA_RUNTIME, 10, 10);
    op_evx_add(t, l)->correlation = 1;
    l->flags |= OP_EV_HAS_CORR;
    op_event *k = add(t, s, "gemm", OPPROF_CAT_KERNEL, 30, 400); /* same name as the op */
    op_evx_add(t, k)->correlation = 1;
    k->flags |= OP_EV_HAS_CORR;
    opprof_key_averages *ka = averages(t, NULL);
    opprof_trace_free(t);
    assert_int_equal(opprof_key_averages_count(ka), 3);
    opprof_avg_row op = row(ka, 0), launch = row(ka, 1), kern = row(ka, 2);
    assert_string_equal(op.name, "gemm");
    assert_int_equal(op.self_device_time_total_ns, 400);
    assert_int_equal(op.device_time_total_ns, 400);
    assert_int_equal(op.cpu_time_total_ns, 100);
    assert_string_equal(launch.name, "cudaLaunchKernel");
    assert_string_equal(kern.name, "gemm"); /* a row of its own: CPU times 0 */
    assert_int_equal(kern.cpu_time_total_ns, 0);
    assert_int_equal(kern.self_cpu_time_total_ns, 0);
    assert_int_equal(kern.self_device_time_total_ns, 400);
    assert_int_equal(kern.count, 1);
    opprof_key_averages_free(ka);
}

static void test_memory_row_counts_free_standing_events(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    uint32_t h = (uint32_t)op_trace_thread(t, 1, 1);
    t->options |= OP_TRACE_MEMORY;
    add(t, h, "first", OPPROF_CAT_CPU_OP, 0, 10);
    add(t, h, "alloc", OPPROF_CAT_CPU_OP, 100, 10);
    add(t, h, "late", OPPROF_CAT_CPU_OP, 500, 10);
    assert_non_null(op_trace_add_mem(t, h, 105, 1, 4096));  /* inside alloc */
    assert_non_null(op_trace_add_mem(t, h, 50, 2, 1000));   /* outside: [memory] */
    assert_non_null(op_trace_add_mem(t, h, 600, 2, -300));  /* outside: [memory] */
    op_mem_event *dev = op_trace_add_mem(t, h, 700, 3, 777); /* device bytes: counted, not CPU */
    dev->device_type = 1;
    dev->device_id = 0;
    opprof_key_averages *ka = averages(t, NULL);
    opprof_trace_free(t);
    assert_int_equal(opprof_key_averages_count(ka), 4);
    assert_string_equal(row(ka, 0).name, "first");
    opprof_avg_row m = row(ka, 1); /* its first event (50) comes after first's start (0) */
    assert_string_equal(m.name, "[memory]");
    assert_int_equal(m.count, 3);
    assert_int_equal(m.cpu_memory_usage, 700);
    assert_int_equal(m.self_cpu_memory_usage, 700);
    assert_int_equal(m.cpu_time_total_ns, 0);
    assert_int_equal(row(ka, 2).self_cpu_memory_usage, 4096);
    opprof_key_averages_free(ka);
}

static void test_memory_row_after_events_starting_with_it(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    uint32_t h = (uint32_t)op_trace_thread(t, 1, 1), o = (uint32_t)op_trace_thread(t, 1, 2);
    add(t, o, "other_thread", OPPROF_CAT_CPU_OP, 20, 10);
    assert_non_null(op_trace_add_mem(t, h, 20, 1, 8)); /* same time, another thread: free */
    add(t, h, "after", OPPROF_CAT_CPU_OP, 21, 1);
    opprof_key_averages *ka = averages(t, NULL);
    opprof_trace_free(t);
    assert_int_equal(opprof_key_averages_count(ka), 3);
    assert_string_equal(row(ka, 0).name, "other_thread");
    assert_string_equal(row(ka, 1).name, "[memory]");
    assert_string_equal(row(ka, 2).name, "after");
    opprof_key_averages_free(ka);
}

static void test_group_by_input_shape(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    uint32_t h = (uint32_t)op_trace_thread(t, 1, 1);
    const char *shapes[] = {"[[2, 3]]", "[[4]]", "[[2, 3]]", "[]", NULL};
    for (int i = 0; i < 5; i++) {
        op_event *e = add(t, h, "add", OPPROF_CAT_CPU_OP, i * 10, 5);
        if (shapes[i]) op_evx_add(t, e)->shapes = op_trace_intern(t, shapes[i], strlen(shapes[i]));
    }
    opprof_avg_options opt = {.group_by_input_shape = 1};
    opprof_key_averages *ka = averages(t, &opt);
    assert_int_equal(opprof_key_averages_count(ka), 3);
    assert_string_equal(row(ka, 0).input_shapes, "[[2, 3]]");
    assert_int_equal(row(ka, 0).count, 2);
    assert_string_equal(row(ka, 1).input_shapes, "[[4]]");
    assert_string_equal(row(ka, 2).input_shapes, "[]"); /* "[]" and no shapes: one group */
    assert_int_equal(row(ka, 2).count, 2);
    opprof_key_averages_free(ka);
    assert_int_equal(opprof_key_averages(t, NULL, &ka), OPPROF_OK);
    assert_int_equal(opprof_key_averages_count(ka), 1);
    assert_string_equal(row(ka, 0).input_shapes, "");
    opprof_key_averages_free(ka);
    opprof_trace_free(t);
}

static uint32_t stack(opprof_trace *t, const char *a, const char *b, const char *c)
{
    uint32_t f[3] = {op_trace_intern(t, a, strlen(a)), op_trace_intern(t, b, strlen(b)),
                     op_trace_intern(t, c, strlen(c))};
    return op_trace_add_stack(t, f, 3);
}

static void test_group_by_top_stack_frames(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    uint32_t h = (uint32_t)op_trace_thread(t, 1, 1);
    uint32_t s1 = stack(t, "f.py(1): f", "g.py(2): g", "main.py(3): <module>");
    uint32_t s2 = stack(t, "f.py(1): f", "g.py(2): g", "main.py(9): <module>"); /* same top two */
    uint32_t s3 = stack(t, "f.py(1): f", "h.py(5): h", "main.py(3): <module>");
    uint32_t st[] = {s1, s2, s3, 0};
    for (int i = 0; i < 4; i++) op_evx_add(t, add(t, h, "mm", OPPROF_CAT_CPU_OP, i * 10, 5))->stack = st[i];
    opprof_avg_options opt = {.group_by_stack_n = 2};
    opprof_key_averages *ka = averages(t, &opt);
    assert_int_equal(opprof_key_averages_count(ka), 3);
    assert_string_equal(row(ka, 0).stack, "f.py(1): f\ng.py(2): g");
    assert_int_equal(row(ka, 0).count, 2);
    assert_string_equal(row(ka, 1).stack, "f.py(1): f\nh.py(5): h");
    assert_string_equal(row(ka, 2).stack, "");
    opprof_key_averages_free(ka);
    opt.group_by_stack_n = 1; /* one frame: all three stacks agree */
    assert_int_equal(opprof_key_averages(t, &opt, &ka), OPPROF_OK);
    assert_int_equal(opprof_key_averages_count(ka), 2);
    assert_int_equal(row(ka, 0).count, 3);
    assert_string_equal(row(ka, 0).stack, "f.py(1): f");
    opprof_key_averages_free(ka);
    opprof_trace_free(t);
}

static void test_top_level_only(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    uint32_t h = (uint32_t)op_trace_thread(t, 1, 1);
    add(t, h, "outer", OPPROF_CAT_CPU_OP, 0, 100);
    add(t, h, "inner", OPPROF_CAT_CPU_OP, 10, 20);
    add(t, h, "inner", OPPROF_CAT_CPU_OP, 200, 20); /* top level this time */
    opprof_avg_options opt = {.top_level_only = 1};
    opprof_key_averages *ka = averages(t, &opt);
    opprof_trace_free(t);
    assert_int_equal(opprof_key_averages_count(ka), 2);
    assert_string_equal(row(ka, 1).name, "inner");
    assert_int_equal(row(ka, 1).count, 1);
    /* percentages stay shares of every event's self time, as in PyTorch */
    char *text;
    assert_int_equal(opprof_table_string(ka, NULL, -1, &text), OPPROF_OK);
    assert_non_null(strstr(text, "\nThis report only display top-level ops statistics\n"));
    assert_true(text[0] == '=');
    assert_non_null(strstr(text, "Self CPU time total: 0.120us\n"));
    assert_non_null(strstr(text, "66.67%")); /* outer's 80 of 120 */
    free(text);
    opprof_key_averages_free(ka);
}

/* Rows a..e in first-occurrence order: b and d tie on total time (30),
 * c, d and e on count (2); averages b 30, a 25, d 15, c 5, e 1.5. */
static opprof_key_averages *ties(void)
{
    opprof_trace *t = op_trace_new();
    uint32_t h = (uint32_t)op_trace_thread(t, 1, 1);
    static const struct {
        const char *name;
        int64_t start, dur;
    } ev[] = {{"a", 0, 25},  {"b", 100, 30}, {"c", 200, 5}, {"c", 210, 5},
              {"d", 300, 10}, {"d", 320, 20}, {"e", 400, 1}, {"e", 410, 2}};
    for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++) add(t, h, ev[i].name, OPPROF_CAT_CPU_OP, ev[i].start, ev[i].dur);
    opprof_key_averages *ka = averages(t, NULL);
    opprof_trace_free(t);
    return ka;
}

static void test_sort_is_stable_and_descending(void **state)
{
    (void)state;
    static const struct {
        const char *key, *order;
    } cases[] = {
        {"cpu_time_total", "bdace"}, {"self_cpu_time_total", "bdace"}, {"count", "cdeab"},
        {"cpu_time", "badce"},       {"flops", "abcde"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        opprof_key_averages *ka = ties();
        assert_int_equal(opprof_key_averages_sort(ka, cases[c].key), OPPROF_OK);
        for (size_t i = 0; i < 5; i++) assert_int_equal(row(ka, i).name[0], cases[c].order[i]);
        opprof_key_averages_free(ka);
    }
}

static void test_table_sorts_a_copy(void **state)
{
    (void)state;
    opprof_key_averages *ka = ties();
    char *s;
    assert_int_equal(opprof_table_string(ka, "count", 1, &s), OPPROF_OK);
    assert_non_null(strstr(s, "  c  ")); /* the one row printed is c ... */
    assert_null(strstr(s, "  a  "));
    free(s);
    assert_int_equal(row(ka, 0).name[0], 'a'); /* ... and ka keeps its order */
    opprof_key_averages_free(ka);
}

static void test_every_sort_key_and_unknown_key(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    add(t, (uint32_t)op_trace_thread(t, 1, 1), "x", OPPROF_CAT_CPU_OP, 0, 1);
    opprof_key_averages *ka = averages(t, NULL);
    opprof_trace_free(t);
    const char *keys[] = {"cpu_time", "cpu_time_total", "self_cpu_time_total", "cpu_memory_usage",
                          "self_cpu_memory_usage", "flops", "count", "cuda_time", "cuda_time_total",
                          "self_cuda_time_total", "device_time", "device_time_total", "self_device_time_total"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        assert_int_equal(opprof_key_averages_sort(ka, keys[i]), OPPROF_OK);
        char *s;
        assert_int_equal(opprof_table_string(ka, keys[i], -1, &s), OPPROF_OK);
        free(s);
    }
    assert_int_equal(opprof_key_averages_sort(ka, "cpu_tme"), OPPROF_E_INVAL);
    const char *err = opprof_last_error();
    assert_non_null(strstr(err, "cpu_tme"));
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) assert_non_null(strstr(err, keys[i]));
    char *s = (char *)"untouched";
    assert_int_equal(opprof_table_string(ka, "bogus", -1, &s), OPPROF_E_INVAL);
    assert_null(s);
    assert_int_equal(opprof_table_write(ka, "bogus", -1, stdout), OPPROF_E_INVAL);
    opprof_key_averages_free(ka);
}

static void test_errors(void **state)
{
    (void)state;
    opprof_key_averages *ka = (opprof_key_averages *)1;
    assert_int_equal(opprof_key_averages(NULL, NULL, &ka), OPPROF_E_INVAL);
    opprof_trace *t = op_trace_new();
    assert_int_equal(opprof_key_averages(t, NULL, NULL), OPPROF_E_INVAL);
    assert_int_equal(opprof_key_averages(t, NULL, &ka), OPPROF_E_INVAL); /* not finished */
    assert_null(ka);
    assert_non_null(strstr(opprof_last_error(), "not finished"));
    ka = averages(t, NULL);
    assert_int_equal(opprof_key_averages_count(ka), 0);
    opprof_avg_row r;
    assert_int_equal(opprof_key_averages_row(ka, 0, &r), OPPROF_E_RANGE);
    assert_int_equal(opprof_key_averages_row(ka, 0, NULL), OPPROF_E_INVAL);
    assert_int_equal(opprof_key_averages_sort(NULL, "count"), OPPROF_E_INVAL);
    assert_int_equal(opprof_key_averages_count(NULL), 0);
    assert_int_equal(opprof_table_string(NULL, NULL, -1, (char **)&r.name), OPPROF_E_INVAL);
    assert_int_equal(opprof_table_write(ka, NULL, -1, NULL), OPPROF_E_INVAL);
    assert_int_equal(opprof_key_averages_write_csv(NULL, stdout), OPPROF_E_INVAL);
    assert_int_equal(opprof_key_averages_write_json(ka, NULL), OPPROF_E_INVAL);
    opprof_key_averages_free(ka);
    opprof_key_averages_free(NULL);
    opprof_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_groups_by_name_in_first_occurrence_order),
        cmocka_unit_test(test_device_rows_and_device_time),
        cmocka_unit_test(test_memory_row_counts_free_standing_events),
        cmocka_unit_test(test_memory_row_after_events_starting_with_it),
        cmocka_unit_test(test_group_by_input_shape),
        cmocka_unit_test(test_group_by_top_stack_frames),
        cmocka_unit_test(test_top_level_only),
        cmocka_unit_test(test_sort_is_stable_and_descending),
        cmocka_unit_test(test_table_sorts_a_copy),
        cmocka_unit_test(test_every_sort_key_and_unknown_key),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

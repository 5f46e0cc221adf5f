/* The table's number formats at each threshold (as Python formats them),
 * nanosecond times, the dropped-events line, and the CSV and JSON text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/pyfmt.h"
#include "model/model.h"

static void expect_time(double us, const char *want)
{
    char b[64];
    op_fmt_time(b, sizeof b, us);
    assert_string_equal(b, want);
}

static void expect_bytes(int64_t bytes, const char *want)
{
    char b[64];
    op_fmt_memory(b, sizeof b, bytes);
    assert_string_equal(b, want);
}

static void test_time_thresholds(void **state)
{
    (void)state;
    expect_time(0.0, "0.000us");
    expect_time(op_ns_to_us(999999), "999.999us");
    expect_time(op_ns_to_us(1000000), "1.000ms");
    expect_time(999999.0, "999.999ms");
    expect_time(1000000.0, "1.000s");
    expect_time(3600.0e6, "3600.000s");
    expect_time(-5.0, "-5.000us");
    expect_time(-5000.0, "-5000.000us"); /* PyTorch compares without abs() */
}

static void test_memory_thresholds(void **state)
{
    (void)state;
    expect_bytes(0, "0 b");
    expect_bytes(1023, "1023 b");
    expect_bytes(1024, "1.00 Kb");
    expect_bytes(-1023, "-1023 b");
    expect_bytes(-1024, "-1.00 Kb");
    expect_bytes(1048575, "1024.00 Kb");
    expect_bytes(1048576, "1.00 Mb");
    expect_bytes(-5000000, "-4.77 Mb");
    expect_bytes(1073741823, "1024.00 Mb");
    expect_bytes(1073741824, "1.00 Gb");
    expect_bytes(INT64_MIN, "-8589934592.00 Gb");
}

static void test_share_and_flops_scale(void **state)
{
    (void)state;
    char b[64];
    op_fmt_share(b, sizeof b, 1.0, 3.0);
    assert_string_equal(b, "33.33%");
    op_fmt_share(b, sizeof b, 0.0, 0.0);
    assert_string_equal(b, "NaN");
    static const struct {
        uint64_t min;
        const char *head;
        double scale;
    } cases[] = {{1, "FLOPs", 1.0},         {999, "FLOPs", 1.0},   {1000, "KFLOPs", 1e-3},
                 {999999, "KFLOPs", 1e-3},  {1000000, "MFLOPs", 1e-6}, {1000000000000000ull, "PFLOPs", 1e-15},
                 {UINT64_MAX, "PFLOPs", 1e-15}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *h = NULL;
        double s = op_flops_scale(cases[i].min, &h);
        assert_string_equal(h, cases[i].head);
        assert_true(s == cases[i].scale);
    }
}

static void test_utf8_counts_code_points(void **state)
{
    (void)state;
    const char *s = "op\xc3\xa9ration"; /* "opération" */
    assert_int_equal(op_utf8_len(s, strlen(s)), 9);
    assert_int_equal(op_utf8_offset(s, strlen(s), 3), 4);
    assert_int_equal(op_utf8_offset(s, strlen(s), 99), strlen(s));
}

static opprof_trace *two_ops(int64_t a_ns, int64_t b_ns)
{
    opprof_trace *t = op_trace_new();
    uint32_t h = (uint32_t)op_trace_thread(t, 1, 1);
    assert_non_null(op_trace_add_event(t, h, op_trace_intern(t, "a", 1), OPPROF_CAT_CPU_OP, 0, a_ns));
    assert_non_null(op_trace_add_event(t, h, op_trace_intern(t, "b", 1), OPPROF_CAT_CPU_OP, a_ns, b_ns));
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    return t;
}

static char *table(const opprof_trace *t, const char *sort_by, int limit)
{
    opprof_key_averages *ka;
    char *s = NULL;
    assert_int_equal(opprof_key_averages(t, NULL, &ka), OPPROF_OK);
    assert_int_equal(opprof_table_string(ka, sort_by, limit, &s), OPPROF_OK);
    opprof_key_averages_free(ka);
    return s;
}

#define RULE "-----  ------------  ------------  ------------  ------------  ------------  ------------  \n"

static void test_nanosecond_times_and_dropped_line(void **state)
{
    (void)state;
    opprof_trace *t = two_ops(999999, 1000000);
    static const char body[] =
        RULE
        " Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  \n"
        RULE
        "    a        50.00%     999.999us        50.00%     999.999us     999.999us             1  \n"
        "    b        50.00%       1.000ms        50.00%       1.000ms       1.000ms             1  \n"
        RULE
        "Self CPU time total: 2.000ms\n";
    char *s = table(t, NULL, -1);
    assert_string_equal(s, body); /* nothing dropped: PyTorch's text exactly */
    free(s);
    t->dropped = 3;
    s = table(t, NULL, -1);
    assert_int_equal(strncmp(s, body, sizeof body - 1), 0);
    assert_string_equal(s + sizeof body - 1, "Dropped events: 3 (not recorded: the figures above leave them out)\n");
    free(s);
    t->attempted = 5;
    s = table(t, NULL, -1);
    assert_string_equal(s + sizeof body - 1,
                        "Dropped events: 3 of 5 (not recorded: the figures above leave them out)\n");
    free(s);
    opprof_trace_free(t);
}

static void test_empty_table(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    char *s = table(t, "count", -1);
    assert_string_equal(s, ""); /* PyTorch prints nothing for no events */
    free(s);
    t->dropped = 7;
    s = table(t, NULL, -1);
    assert_string_equal(s, "Dropped events: 7 (not recorded: the figures above leave them out)\n");
    free(s);
    opprof_trace_free(t);
}

static void test_table_write_matches_string(void **state)
{
    (void)state;
    opprof_trace *t = two_ops(10, 20);
    opprof_key_averages *ka;
    assert_int_equal(opprof_key_averages(t, NULL, &ka), OPPROF_OK);
    char *want, *got = NULL;
    size_t n = 0;
    assert_int_equal(opprof_table_string(ka, "cpu_time_total", 1, &want), OPPROF_OK);
    FILE *f = open_memstream(&got, &n);
    assert_int_equal(opprof_table_write(ka, "cpu_time_total", 1, f), OPPROF_OK);
    fclose(f);
    assert_string_equal(got, want);
    assert_non_null(strstr(want, "    b  ")); /* the larger one, alone */
    assert_null(strstr(want, "    a  "));
    free(want);
    free(got);
    opprof_key_averages_free(ka);
    opprof_trace_free(t);
}

/* An outer op with an awkward name around an inner one that frees memory. */
static opprof_key_averages *summary_averages(void)
{
    opprof_trace *t = op_trace_new();
    uint32_t h = (uint32_t)op_trace_thread(t, 1, 1);
    const char *name = "say \"hi\",x";
    op_event *e = op_trace_add_event(t, h, op_trace_intern(t, name, strlen(name)), OPPROF_CAT_CPU_OP, 0, 2000);
    op_evx_add(t, e)->flops = 7;
    op_evx_add(t, e)->shapes = op_trace_intern(t, "[[1, 2]]", 8);
    assert_non_null(op_trace_add_event(t, h, op_trace_intern(t, "inner", 5), OPPROF_CAT_CPU_OP, 1000, 500));
    assert_non_null(op_trace_add_mem(t, h, 1200, 0x10, -512));
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    opprof_avg_options opt = {.group_by_input_shape = 1};
    opprof_key_averages *ka;
    assert_int_equal(opprof_key_averages(t, &opt, &ka), OPPROF_OK);
    opprof_trace_free(t);
    return ka;
}

static char *capture(int (*write)(const opprof_key_averages *, FILE *), const opprof_key_averages *ka)
{
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    assert_int_equal(write(ka, f), OPPROF_OK);
    fclose(f);
    return s;
}

static void test_csv(void **state)
{
    (void)state;
    opprof_key_averages *ka = summary_averages();
    char *s = capture(opprof_key_averages_write_csv, ka);
    assert_string_equal(s, "name,count,self_cpu_time_total_us,cpu_time_total_us,self_device_time_total_us,"
                           "device_time_total_us,cpu_memory_usage,self_cpu_memory_usage,flops,input_shapes\n"
                           "\"say \"\"hi\"\",x\",1,1.500,2.000,0.000,0.000,-512,0,7,\"[[1, 2]]\"\n"
                           "inner,1,0.500,0.500,0.000,0.000,-512,-512,0,[]\n");
    free(s);
    opprof_key_averages_free(ka);
}

static void test_json(void **state)
{
    (void)state;
    opprof_key_averages *ka = summary_averages();
    char *s = capture(opprof_key_averages_write_json, ka);
    assert_string_equal(s, "[\n"
                           "  {\"name\": \"say \\\"hi\\\",x\", \"count\": 1, \"self_cpu_time_total_us\": 1.500, "
                           "\"cpu_time_total_us\": 2.000, \"self_device_time_total_us\": 0.000, "
                           "\"device_time_total_us\": 0.000, \"cpu_memory_usage\": -512, "
                           "\"self_cpu_memory_usage\": 0, \"flops\": 7, \"input_shapes\": \"[[1, 2]]\"},\n"
                           "  {\"name\": \"inner\", \"count\": 1, \"self_cpu_time_total_us\": 0.500, "
                           "\"cpu_time_total_us\": 0.500, \"self_device_time_total_us\": 0.000, "
                           "\"device_time_total_us\": 0.000, \"cpu_memory_usage\": -512, "
                           "\"self_cpu_memory_usage\": -512, \"flops\": 0, \"input_shapes\": \"[]\"}\n"
                           "]\n");
    free(s);
    opprof_key_averages_free(ka);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_thresholds),
        cmocka_unit_test(test_memory_thresholds),
        cmocka_unit_test(test_share_and_flops_scale),
        cmocka_unit_test(test_utf8_counts_code_points),
        cmocka_unit_test(test_nanosecond_times_and_dropped_line),
        cmocka_unit_test(test_empty_table),
        cmocka_unit_test(test_table_write_matches_string),
        cmocka_unit_test(test_csv),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Range args (opprof_begin_args / opprof_end_args) from capture to the event
 * model, through the Chrome trace and back; distributedInfo the same way. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "opprof_trace.h"
#include "slurp.h"

OPPROF_SITE(site_coll, "mpi:all_reduce");
OPPROF_SITE(site_plain, "plain");
OPPROF_SITE(site_recv, "mpi:recv");

static const char *const k_name = "Collective name", *const k_in = "In msg nelems", *const k_group = "Group size",
                         *const k_dtype = "dtype", *const k_ratio = "ratio", *const k_src = "Src Rank",
                         *const k_done = "Completed";

static opprof_trace *stop_trace(void)
{
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_non_null(t);
    return t;
}

static long find(const opprof_trace *t, const char *name, opprof_event *out)
{
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        assert_int_equal(opprof_trace_event(t, i, out), OPPROF_OK);
        if (strcmp(out->name, name) == 0) return (long)i;
    }
    return -1;
}

static void record_collective(void)
{
    opprof_arg a[5] = {
        opprof_arg_str(k_name, "allreduce"), opprof_arg_int(k_in, 1024), opprof_arg_int(k_group, 4),
        opprof_arg_str(k_dtype, "Float \"quoted\"\n"), opprof_arg_double(k_ratio, 0.25),
    };
    opprof_begin_args(&site_coll, a, 5);
    opprof_begin(&site_plain);
    opprof_end(&site_plain);
    opprof_end(&site_coll);
}

static const char *const k_expect = "\"Collective name\": \"allreduce\", \"In msg nelems\": 1024, \"Group size\": 4, "
                                    "\"dtype\": \"Float \\\"quoted\\\"\\n\", \"ratio\": 0.25";

static void test_args_recorded_in_every_session(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    for (int opts = 0; opts < 3; opts++) {
        cfg.record_shapes = opts == 1;
        cfg.with_flops = opts == 2;
        assert_int_equal(opprof_start(&cfg), OPPROF_OK);
        record_collective();
        opprof_trace *t = stop_trace();
        opprof_event e;
        assert_true(find(t, "mpi:all_reduce", &e) >= 0);
        assert_string_equal(e.args, k_expect);
        assert_true(find(t, "plain", &e) >= 0);
        assert_string_equal(e.args, "");
        assert_int_equal(e.depth, 1); /* nesting is unchanged by the extension */
        opprof_trace_free(t);
    }
}

static void test_args_beside_inputs_and_stack(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.record_shapes = 1;
    cfg.with_stack = 1;
    cfg.with_flops = 1;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    opprof_input in[1] = {{OPPROF_DTYPE_FLOAT, 1, {1024}}};
    opprof_arg a[1] = {opprof_arg_int(k_in, 1024)};
    opprof_begin_inputs_args(&site_coll, in, 1, a, 1);
    opprof_end_flops(&site_coll, 77);
    opprof_trace *t = stop_trace();
    opprof_event e;
    assert_true(find(t, "mpi:all_reduce", &e) >= 0);
    assert_string_equal(e.args, "\"In msg nelems\": 1024");
    assert_string_equal(e.input_shapes, "[[1024]]");
    assert_string_equal(e.input_types, "[\"float\"]");
    assert_int_equal(e.flops, 77);
    assert_true(opprof_trace_event_stack_depth(t, 0) > 0);
    opprof_trace_free(t);
}

static void test_end_args_replace_matching_values_only(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    opprof_arg a[2] = {opprof_arg_int(k_src, -1), opprof_arg_int(k_done, 0)};
    opprof_begin_args(&site_recv, a, 2);
    /* Src Rank matches; Completed with another type and an unknown key do not. */
    opprof_arg e2[3] = {opprof_arg_int(k_src, 3), opprof_arg_str(k_done, "yes"), opprof_arg_int(k_name, 9)};
    assert_int_equal(opprof_end_args(&site_recv, e2, 3), OPPROF_OK);
    /* Unbalanced, as opprof_end would be. */
    assert_int_equal(opprof_end_args(&site_recv, e2, 1), OPPROF_E_UNBALANCED);
    opprof_trace *t = stop_trace();
    opprof_event e;
    assert_true(find(t, "mpi:recv", &e) >= 0);
    assert_string_equal(e.args, "\"Src Rank\": 3, \"Completed\": 0");
    opprof_trace_free(t);
}

static void test_more_args_than_the_limit_keep_the_first(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    static const char *const keys[OPPROF_MAX_ARGS + 2] = {"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8",
                                                          "k9", "k10", "k11", "k12", "k13", "k14", "k15", "k16",
                                                          "k17"};
    opprof_arg a[OPPROF_MAX_ARGS + 2];
    for (int i = 0; i < OPPROF_MAX_ARGS + 2; i++) a[i] = opprof_arg_int(keys[i], i);
    opprof_begin_args(&site_coll, a, OPPROF_MAX_ARGS + 2);
    opprof_end(&site_coll);
    opprof_trace *t = stop_trace();
    opprof_event e;
    assert_true(find(t, "mpi:all_reduce", &e) >= 0);
    assert_non_null(strstr(e.args, "\"k15\": 15"));
    assert_null(strstr(e.args, "k16"));
    opprof_trace_free(t);
}

static void test_outside_a_session_args_cost_nothing(void **state)
{
    (void)state;
    opprof_arg a[1] = {opprof_arg_int(k_in, 1)};
    opprof_begin_args(&site_coll, a, 1);
    assert_int_equal(opprof_end_args(&site_coll, a, 1), OPPROF_OK);
    assert_int_equal(opprof_is_active(), 0);
}

static char *export_text(const opprof_trace *t, const char *path)
{
    opprof_export_options o;
    opprof_export_options_init(&o);
    o.fsync = 0;
    assert_int_equal(opprof_export_chrome_trace_ex(t, path, &o), OPPROF_OK);
    char *s = slurp(path);
    assert_non_null(s);
    return s;
}

static void test_args_and_distributed_info_round_trip(void **state)
{
    (void)state;
    opprof_distributed_info d;
    opprof_distributed_info_init(&d);
    d.backend = "mpi";
    d.rank = 2;
    d.world_size = 4;
    d.clock_start = (opprof_clock_sync){1, 1700000000000000000, -1500, 400};
    d.clock_end = (opprof_clock_sync){1, 1700000001000000000, -1400, 300};
    assert_int_equal(opprof_set_distributed_info(&d), OPPROF_OK);
    opprof_config cfg;
    opprof_config_init(&cfg);
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    record_collective();
    opprof_trace *t = stop_trace();
    opprof_set_distributed_info(NULL);

    opprof_distributed_info got;
    assert_int_equal(opprof_trace_distributed_info(t, &got), OPPROF_OK);
    assert_string_equal(got.backend, "mpi");
    assert_int_equal(got.rank, 2);
    assert_int_equal(got.world_size, 4);
    assert_int_equal(got.clock_end.offset_ns, -1400);

    char path[] = "/tmp/opprof_test_args_XXXXXX.json";
    int fd = mkstemps(path, 5);
    assert_true(fd >= 0);
    close(fd);
    char *text = export_text(t, path);
    assert_non_null(strstr(text, "\"distributedInfo\": {\"backend\": \"mpi\", \"rank\": 2, \"world_size\": 4, "
                                 "\"clock_offset_ns\": -1500, \"clock_uncertainty_ns\": 400, "
                                 "\"clock_sync_at_ns\": 1700000000000000000, \"clock_offset_end_ns\": -1400, "
                                 "\"clock_uncertainty_end_ns\": 300, \"clock_sync_end_at_ns\": 1700000001000000000, "
                                 "\"clock_drift_ppm\": 0.100}"));
    assert_non_null(strstr(text, k_expect));

    opprof_trace *back = NULL;
    assert_int_equal(opprof_trace_load(path, &back), OPPROF_OK);
    opprof_event e;
    assert_true(find(back, "mpi:all_reduce", &e) >= 0);
    /* "ratio" is no collective arg the reader keeps; the rest come back. */
    assert_string_equal(e.args, "\"Collective name\": \"allreduce\", \"In msg nelems\": 1024, \"Group size\": 4, "
                                "\"dtype\": \"Float \\\"quoted\\\"\\n\"");
    opprof_distributed_info rd;
    assert_int_equal(opprof_trace_distributed_info(back, &rd), OPPROF_OK);
    assert_string_equal(rd.backend, "mpi");
    assert_int_equal(rd.rank, 2);
    assert_int_equal(rd.world_size, 4);
    assert_memory_equal(&rd.clock_start, &d.clock_start, sizeof d.clock_start);
    assert_memory_equal(&rd.clock_end, &d.clock_end, sizeof d.clock_end);

    /* Exported again, the args come out once (no duplicate "Ev Idx"). */
    char *again = export_text(back, path);
    const char *ev = strstr(again, "\"name\": \"mpi:all_reduce\"");
    assert_non_null(ev);
    const char *eol = strchr(ev, '\n');
    int n_idx = 0;
    for (const char *p = strstr(ev, "\"Ev Idx\""); p && p < eol; p = strstr(p + 1, "\"Ev Idx\"")) n_idx++;
    assert_int_equal(n_idx, 1);
    assert_non_null(strstr(ev, "\"Collective name\": \"allreduce\""));
    free(again);
    free(text);
    unlink(path);
    opprof_trace_free(back);
    opprof_trace_free(t);
}

static void test_without_distributed_info_none_is_found(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    opprof_trace *t = stop_trace();
    opprof_distributed_info d;
    assert_int_equal(opprof_trace_distributed_info(t, &d), OPPROF_E_NOT_FOUND);
    assert_int_equal(d.rank, -1);
    opprof_trace_free(t);
}

static void test_clock_offset_interpolates_drift(void **state)
{
    (void)state;
    opprof_distributed_info d;
    opprof_distributed_info_init(&d);
    assert_int_equal(opprof_clock_offset_at(&d, 5), 0);
    d.clock_start = (opprof_clock_sync){1, 1000, 100, 1};
    assert_int_equal(opprof_clock_offset_at(&d, 99999), 100);
    d.clock_end = (opprof_clock_sync){1, 2000, 300, 1};
    assert_int_equal(opprof_clock_offset_at(&d, 1500), 200);
    assert_int_equal(opprof_clock_offset_at(&d, 3000), 500); /* extrapolated */
    d.clock_start.valid = 0;
    assert_int_equal(opprof_clock_offset_at(&d, 0), 300);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_args_recorded_in_every_session),
        cmocka_unit_test(test_args_beside_inputs_and_stack),
        cmocka_unit_test(test_end_args_replace_matching_values_only),
        cmocka_unit_test(test_more_args_than_the_limit_keep_the_first),
        cmocka_unit_test(test_outside_a_session_args_cost_nothing),
        cmocka_unit_test(test_args_and_distributed_info_round_trip),
        cmocka_unit_test(test_without_distributed_info_none_is_found),
        cmocka_unit_test(test_clock_offset_interpolates_drift),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

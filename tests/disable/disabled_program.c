/* A program instrumented for opprof, compiled with -DOPPROF_DISABLE and
 * linked without any opprof library (tests/disable/CMakeLists.txt): that it
 * links at all is half the test; running it checks that the calls are
 * empty, evaluate nothing that matters, and that no session starts, and
 * that what reads traces (opprof_trace.h) finds none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "opprof_trace.h"

OPPROF_SITE(site_work, "work");

static int g_calls;

static int work(void)
{
    OPPROF_SCOPE("scoped");
    g_calls++;
    return g_calls;
}

static void test_everything_compiled_out(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.record_shapes = 1;
    assert_int_equal(opprof_start(&cfg), OPPROF_E_UNSUPPORTED);
    assert_int_equal(opprof_is_active(), 0);
    opprof_input in[1] = {{OPPROF_DTYPE_FLOAT, 1, {4}}};
    opprof_arg args[1] = {opprof_arg_int("k", 1)};
    opprof_begin(&site_work);
    opprof_begin_inputs(&site_work, in, 1);
    opprof_begin_args(&site_work, args, 1);
    opprof_begin_inputs_args(&site_work, in, 1, args, 1);
    assert_int_equal(work(), 1);
    void *p = malloc(16);
    opprof_record_alloc(p, 16);
    opprof_record_memory(p, 16);
    opprof_record_realloc(p, p, 32);
    opprof_record_free(p);
    free(p);
    assert_null(opprof_annotation_begin("user"));
    assert_int_equal(opprof_end_args(&site_work, args, 1), OPPROF_OK);
    assert_int_equal(opprof_end_flops(&site_work, 10), OPPROF_OK);
    assert_int_equal(opprof_end(&site_work), OPPROF_OK);
    assert_int_equal(opprof_step(), OPPROF_E_NO_SESSION);
    opprof_trace *t = (opprof_trace *)&t;
    assert_int_equal(opprof_stop(&t), OPPROF_E_NO_SESSION);
    assert_null(t);
    assert_string_equal(OPPROF_VERSION_STRING, "1.0.0");
}

static void test_reading_finds_nothing(void **state)
{
    (void)state;
    opprof_trace_handler h;
    assert_int_equal(opprof_trace_handler_init(&h, "log", NULL, 0), OPPROF_OK);
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.on_trace_ready = opprof_trace_handler_ready; /* a function's address, compiled out too */
    cfg.user = &h;
    assert_int_equal(opprof_start(&cfg), OPPROF_E_UNSUPPORTED);
    cfg.on_trace_ready(NULL, &h);
    assert_int_equal(opprof_trace_handler_traces_written(&h), 0);
    opprof_env env;
    assert_int_equal(opprof_config_from_env(&cfg, &env), OPPROF_OK);
    assert_int_equal(env.enabled, 0);
    opprof_trace *t = (opprof_trace *)&t;
    assert_int_equal(opprof_trace_load("trace.json", &t), OPPROF_E_UNSUPPORTED);
    assert_null(t);
    assert_int_equal(opprof_trace_event_count(t), 0);
    opprof_key_averages *ka = (opprof_key_averages *)&ka;
    assert_int_not_equal(opprof_key_averages(t, NULL, &ka), OPPROF_OK);
    assert_null(ka);
    opprof_export_options eo;
    opprof_export_options_init(&eo);
    assert_int_equal(eo.struct_size, sizeof eo);
    assert_int_equal(opprof_export_chrome_trace_ex(t, "t.json", &eo), OPPROF_E_UNSUPPORTED);
    int64_t ns = 1;
    assert_int_not_equal(opprof_parse_duration("5s", &ns), OPPROF_OK);
    opprof_flight_config fc;
    opprof_flight_config_init(&fc);
    assert_int_equal(opprof_flight_start(&fc), OPPROF_E_UNSUPPORTED);
    assert_non_null(strstr(opprof_version(), "disabled"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_everything_compiled_out),
        cmocka_unit_test(test_reading_finds_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* with_stack on live sessions: frames taken at begin (libunwind), kept once
 * per distinct stack, named after the session (libdw) down to the line of
 * each call; sites of functions known by address and their exclusion. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/model.h"
#include "opprof_trace.h"

OPPROF_SITE(site_inner, "inner_op");
OPPROF_SITE(site_other, "other_op");

static volatile int g_sink;
static int g_line_inner, g_line_middle, g_line_outer, g_line_site2;

#define NOINLINE __attribute__((noinline))

/* Each function does work after its call, so none of them is a tail call
 * that would take its frame away. The lines are stored atomically: several
 * threads run these at once (test_threads_share_model_stacks). */
static NOINLINE void inner(void)
{
    opprof_begin(&site_inner); __atomic_store_n(&g_line_inner, __LINE__, __ATOMIC_RELAXED);
    opprof_end(&site_inner);
    __atomic_fetch_add(&g_sink, 1, __ATOMIC_RELAXED);
}

static NOINLINE void middle(void)
{
    inner(); __atomic_store_n(&g_line_middle, __LINE__, __ATOMIC_RELAXED);
    __atomic_fetch_add(&g_sink, 1, __ATOMIC_RELAXED);
}

static NOINLINE void outer(void)
{
    middle(); __atomic_store_n(&g_line_outer, __LINE__, __ATOMIC_RELAXED);
    __atomic_fetch_add(&g_sink, 1, __ATOMIC_RELAXED);
}

static NOINLINE void other_site(int second)
{
    if (second) {
        opprof_begin(&site_other); g_line_site2 = __LINE__;
    } else {
        opprof_begin(&site_other);
    }
    opprof_end(&site_other);
    __atomic_fetch_add(&g_sink, 1, __ATOMIC_RELAXED);
}

static void start(unsigned depth)
{
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.with_stack = 1;
    cfg.max_stack_depth = depth;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
}

static opprof_trace *stop(void)
{
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_non_null(t);
    return t;
}

static size_t find(const opprof_trace *t, const char *name, int nth)
{
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        opprof_trace_event(t, i, &e);
        if (!strcmp(e.name, name) && nth-- == 0) return i;
    }
    fail_msg("no event %s", name);
    return 0;
}

/* "…/tests/test_stacks_capture.c(LINE): FUNC" */
static void expect_frame(const opprof_trace *t, size_t ev, unsigned k, int line, const char *func)
{
    const char *f = opprof_trace_event_frame(t, ev, k);
    assert_non_null(f);
    char want[128];
    snprintf(want, sizeof want, "test_stacks_capture.c(%d): %s", line, func);
    if (!strstr(f, want) || strcmp(f + strlen(f) - strlen(want), want) != 0)
        fail_msg("frame %u is '%s', want '...%s'", k, f, want);
    assert_true(f[0] == '/'); /* the full path, as DWARF records it */
}

static void test_frames_name_function_and_line(void **state)
{
    (void)state;
    start(0);
    outer();
    opprof_trace *t = stop();
    size_t i = find(t, "inner_op", 0);
    assert_true(opprof_trace_event_stack_depth(t, i) >= 4);
    expect_frame(t, i, 0, g_line_inner, "inner");
    expect_frame(t, i, 1, g_line_middle, "middle");
    expect_frame(t, i, 2, g_line_outer, "outer");
    assert_non_null(strstr(opprof_trace_event_frame(t, i, 3), "test_frames_name_function_and_line"));
    assert_null(opprof_trace_event_frame(t, i, opprof_trace_event_stack_depth(t, i)));
    opprof_trace_free(t);
}

static void test_equal_stacks_are_kept_once(void **state)
{
    (void)state;
    start(0);
    for (int k = 0; k < 100; k++) outer();
    other_site(0);
    other_site(1);
    opprof_trace *t = stop();
    uint32_t s0 = op_evx_of(t, &t->ev[find(t, "inner_op", 0)])->stack;
    assert_true(s0 != 0);
    for (int k = 1; k < 100; k++) assert_int_equal(op_evx_of(t, &t->ev[find(t, "inner_op", k)])->stack, s0);
    size_t a = find(t, "other_op", 0), b = find(t, "other_op", 1);
    assert_true(op_evx_of(t, &t->ev[a])->stack != op_evx_of(t, &t->ev[b])->stack); /* two call sites */
    expect_frame(t, b, 0, g_line_site2, "other_site");
    assert_int_equal(t->nstacks, 3);
    opprof_trace_free(t);
}

static void test_depth_limit(void **state)
{
    (void)state;
    start(2);
    outer();
    opprof_trace *t = stop();
    size_t i = find(t, "inner_op", 0);
    assert_int_equal(opprof_trace_event_stack_depth(t, i), 2);
    expect_frame(t, i, 0, g_line_inner, "inner");
    expect_frame(t, i, 1, g_line_middle, "middle");
    opprof_trace_free(t);
}

static void *thread_main(void *arg)
{
    (void)arg;
    for (int k = 0; k < 10; k++) outer();
    return NULL;
}

/* Each thread has its own stack table; equal stacks of two threads still
 * become one stack of the trace. */
static void test_threads_share_model_stacks(void **state)
{
    (void)state;
    start(0);
    pthread_t th[2];
    for (int k = 0; k < 2; k++) assert_int_equal(pthread_create(&th[k], NULL, thread_main, NULL), 0);
    for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
    opprof_trace *t = stop();
    assert_int_equal(opprof_trace_event_count(t), 20);
    opprof_event e0, e1;
    size_t i0 = find(t, "inner_op", 0);
    opprof_trace_event(t, i0, &e0);
    int other = 0;
    for (int k = 1; k < 20; k++) {
        size_t i = find(t, "inner_op", k);
        opprof_trace_event(t, i, &e1);
        assert_int_equal(op_evx_of(t, &t->ev[i])->stack, op_evx_of(t, &t->ev[i0])->stack);
        other |= e1.tid != e0.tid;
    }
    assert_true(other);
    assert_int_equal(t->nstacks, 1);
    opprof_trace_free(t);
}

/* group_by_stack_n splits rows by call site; the table gets its Source
 * Location column. */
static void test_key_averages_by_call_site(void **state)
{
    (void)state;
    start(0);
    for (int k = 0; k < 3; k++) other_site(0);
    other_site(1);
    opprof_trace *t = stop();
    opprof_avg_options opt = {.group_by_stack_n = 1};
    opprof_key_averages *ka;
    assert_int_equal(opprof_key_averages(t, &opt, &ka), OPPROF_OK);
    assert_int_equal(opprof_key_averages_count(ka), 2);
    opprof_avg_row r0, r1;
    opprof_key_averages_row(ka, 0, &r0);
    opprof_key_averages_row(ka, 1, &r1);
    assert_int_equal(r0.count, 3);
    assert_int_equal(r1.count, 1);
    char want[64];
    snprintf(want, sizeof want, "(%d): other_site", g_line_site2);
    assert_non_null(strstr(r1.stack, want));
    assert_null(strchr(r1.stack, '\n')); /* one frame */
    char *text;
    assert_int_equal(opprof_table_string(ka, NULL, -1, &text), OPPROF_OK);
    assert_non_null(strstr(text, "Source Location"));
    assert_non_null(strstr(text, want));
    free(text);
    opprof_key_averages_free(ka);
    opprof_trace_free(t);
}

static int64_t g_fake_ns;

/* Each read is 2 us after the one before. */
static int64_t fake_clock(void *ctx)
{
    (void)ctx;
    return g_fake_ns += 2000;
}

/* The folded line of a live session: the captured frames root first, then
 * the operator, the self time in whole microseconds. */
static void test_export_stacks_of_a_live_session(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.with_stack = 1;
    cfg.max_stack_depth = 3;
    cfg.clock = fake_clock;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    outer();
    opprof_trace *t = stop();
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(opprof_write_stacks(t, f, "self_cpu_time_total", OPPROF_STACKS_CALLS), OPPROF_OK);
    fclose(f);
    char want[2048];
    snprintf(want, sizeof want, "%s(%d):_outer;%s(%d):_middle;%s(%d):_inner;inner_op 2\n", __FILE__, g_line_outer,
             __FILE__, g_line_middle, __FILE__, g_line_inner);
    assert_string_equal(buf, want);
    free(buf);
    opprof_trace_free(t);
}

static int g_line_inputs;

static NOINLINE void with_inputs(void)
{
    opprof_input in[2] = {{OPPROF_DTYPE_FLOAT, 2, {3, 4}}, {OPPROF_DTYPE_INT64, 1, {7}}};
    opprof_begin_inputs(&site_inner, in, 2); g_line_inputs = __LINE__;
    opprof_end_flops(&site_inner, 99);
    __atomic_fetch_add(&g_sink, 1, __ATOMIC_RELAXED);
}

/* The stack slot sits between the FLOPs slot and the inputs: all three
 * come back. */
static void test_stack_with_shapes_and_flops(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.with_stack = cfg.record_shapes = cfg.with_flops = 1;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    with_inputs();
    opprof_trace *t = stop();
    opprof_event e;
    assert_int_equal(opprof_trace_event(t, 0, &e), OPPROF_OK);
    assert_string_equal(e.input_shapes, "[[3, 4], [7]]");
    assert_int_equal(e.flops, 99);
    expect_frame(t, 0, 0, g_line_inputs, "with_inputs");
    opprof_trace_free(t);
}

/* Functions known by address. */
static NOINLINE int fn_a(int x) { return x * 3 + g_sink; }
static NOINLINE int fn_b(int x) { return x * 5 + g_sink; }
static NOINLINE int tiny_add(int x) { return x + 1 + g_sink; }

static void test_function_sites_and_exclusion(void **state)
{
    (void)state;
    assert_int_equal(opprof_function_exclude("nothing_matches, tiny_*"), OPPROF_OK);
    const opprof_site *a = opprof_function_site((const void *)fn_a);
    assert_non_null(a);
    assert_string_equal(a->name, "fn_a");
    assert_non_null(strstr(a->file, "test_stacks_capture.c"));
    assert_true(a->line > 0);
    assert_int_equal(a->category, OPPROF_CAT_CPU_OP);
    assert_ptr_equal(opprof_function_site((const void *)fn_a), a); /* made once */
    assert_null(opprof_function_site((const void *)tiny_add));
    assert_null(opprof_function_site(NULL));

    /* A new list applies to functions not decided yet. */
    assert_int_equal(opprof_function_exclude("file:test_stacks_*.c"), OPPROF_OK);
    assert_null(opprof_function_site((const void *)fn_b));
    assert_ptr_equal(opprof_function_site((const void *)fn_a), a);
    assert_null(opprof_function_site((const void *)tiny_add));

    opprof_config cfg;
    opprof_config_init(&cfg);
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    opprof_begin(a);
    g_sink += fn_a(2);
    opprof_end(a);
    opprof_trace *t = stop();
    opprof_event e;
    opprof_trace_event(t, 0, &e);
    assert_string_equal(e.name, "fn_a");
    opprof_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frames_name_function_and_line),
        cmocka_unit_test(test_equal_stacks_are_kept_once),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_threads_share_model_stacks),
        cmocka_unit_test(test_key_averages_by_call_site),
        cmocka_unit_test(test_export_stacks_of_a_live_session),
        cmocka_unit_test(test_stack_with_shapes_and_flops),
        cmocka_unit_test(test_function_sites_and_exclusion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

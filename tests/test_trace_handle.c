/* The trace handle across the two libraries: with the analysis library's
 * collector lent (always, in a program that reads traces) a session hands
 * out models; without it, bare handles that the callback still receives,
 * that free cleanly and that every reader refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "opprof_trace.h"
#include "session/handle.h"

OPPROF_SITE(k_op, "op");

static int g_ready;

static void on_ready(const opprof_trace *t, void *user)
{
    (void)user;
    if (t) g_ready++;
}

/* Steps 0-3 under wait=1, active=1: step 1 is recorded and ready when
 * step 2 begins; step 3 is being recorded at the stop, which hands it to
 * the callback and the caller: two calls. */
static int run_steps(opprof_trace **last)
{
    opprof_config c;
    opprof_config_init(&c);
    c.schedule = (opprof_schedule){.enabled = 1, .wait = 1, .active = 1};
    c.on_trace_ready = on_ready;
    g_ready = 0;
    assert_int_equal(opprof_start(&c), OPPROF_OK);
    for (int i = 0; i < 3; i++) {
        opprof_begin(&k_op);
        opprof_end(&k_op);
        assert_int_equal(opprof_step(), OPPROF_OK);
    }
    opprof_begin(&k_op);
    opprof_end(&k_op);
    assert_int_equal(opprof_stop(last), OPPROF_OK);
    return g_ready;
}

static void test_collector_is_lent(void **state)
{
    (void)state;
    assert_non_null(op_session_collector());
    opprof_trace *t = NULL;
    assert_int_equal(run_steps(&t), 2);
    assert_non_null(t);
    assert_true(opprof_trace_event_count(t) > 0);
    opprof_trace_free(t);
}

static void test_without_collector_bare_handles(void **state)
{
    (void)state;
    const op_collector *lent = op_session_collector();
    op_session_lend(NULL);
    opprof_trace *t = NULL;
    int ready = run_steps(&t);
    op_session_lend(lent);
    assert_int_equal(ready, 2); /* the callback is called as often */
    assert_non_null(t);
    assert_int_equal(opprof_trace_event_count(t), 0);
    assert_int_equal(opprof_trace_step_num(t), -1);
    opprof_key_averages *ka = NULL;
    assert_int_equal(opprof_key_averages_new(t, NULL, &ka), OPPROF_E_INVAL);
    assert_null(ka);
    assert_non_null(strstr(opprof_last_error(), "holds no events"));
    assert_int_equal(opprof_export_chrome_trace(t, "/nonexistent/never.json"), OPPROF_E_INVAL);
    opprof_event e;
    assert_int_not_equal(opprof_trace_event(t, 0, &e), OPPROF_OK);
    opprof_trace_free(t); /* one allocation: ASan checks it goes */
    /* Lent again, the next session builds models. */
    assert_int_equal(run_steps(&t), 2);
    assert_true(opprof_trace_event_count(t) > 0);
    opprof_trace_free(t);
}

static void test_incomplete_without_collector(void **state)
{
    (void)state;
    const op_collector *lent = op_session_collector();
    op_session_lend(NULL);
    opprof_config c;
    opprof_config_init(&c);
    assert_int_equal(opprof_start(&c), OPPROF_OK);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop_incomplete(&t), OPPROF_OK);
    op_session_lend(lent);
    assert_non_null(t);
    assert_int_equal(opprof_trace_incomplete(t), 0); /* a bare handle says nothing */
    opprof_trace_free(t);
    assert_int_equal(opprof_start(&c), OPPROF_OK);
    assert_int_equal(opprof_stop_incomplete(&t), OPPROF_OK);
    assert_int_equal(opprof_trace_incomplete(t), 1);
    opprof_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_collector_is_lent),
        cmocka_unit_test(test_without_collector_bare_handles),
        cmocka_unit_test(test_incomplete_without_collector),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

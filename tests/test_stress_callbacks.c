/* on_trace_ready callbacks that misbehave while other threads keep
 * recording: slow ones, ones that export the trace they are given, ones that
 * call back into the API (step, stop, start), and a stop that cuts the
 * session short (opprof_stop_incomplete, what a signal does). Each must
 * leave every trace whole, lose nothing that was recorded, and neither
 * deadlock nor crash; the sanitizer builds check the rest. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "opprof_trace.h"

OPPROF_SITE(site_work, "cb::work");
OPPROF_SITE(site_inner, "cb::inner");
OPPROF_SITE(site_main, "cb::main");

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Threads that record until told to stop, whatever the session does. */
typedef struct recorders {
    pthread_t th[4];
    int n;
    atomic_int stop;
    atomic_long ranges;
} recorders;

static void *record_loop(void *p)
{
    recorders *r = p;
    while (!atomic_load(&r->stop)) {
        opprof_begin(&site_work);
        opprof_begin(&site_inner);
        opprof_end(&site_inner);
        opprof_end(&site_work);
        atomic_fetch_add(&r->ranges, 1);
    }
    return NULL;
}

static void recorders_start(recorders *r, int n)
{
    memset(r, 0, sizeof *r);
    r->n = n;
    for (int i = 0; i < n; i++) assert_int_equal(pthread_create(&r->th[i], NULL, record_loop, r), 0);
}

static void recorders_stop(recorders *r)
{
    atomic_store(&r->stop, 1);
    for (int i = 0; i < r->n; i++) pthread_join(r->th[i], NULL);
}

/* Every event of a trace is whole: inside the trace, and an inner range
 * sits in a work range of its own thread (or at top level, when its work
 * range began before the recording did). */
static int trace_whole(const opprof_trace *t)
{
    size_t n = opprof_trace_event_count(t);
    for (size_t i = 0; i < n; i++) {
        opprof_event e;
        if (opprof_trace_event(t, i, &e) != OPPROF_OK || e.dur_ns < 0 || e.start_ns < 0) return 0;
        if (!strcmp(e.name, "cb::inner") && e.parent >= 0) {
            opprof_event p;
            if (opprof_trace_event(t, (size_t)e.parent, &p) != OPPROF_OK) return 0;
            if (strcmp(p.name, "cb::work") != 0 || p.tid != e.tid) return 0;
        }
    }
    return 1;
}

static void step_main(void)
{
    opprof_begin(&site_main);
    sleep_ms(2);
    opprof_end(&site_main);
}

/* A session with schedule `text` and callback `ready`: `steps` steps of the
 * main thread while two other threads record throughout. Returns how many
 * ranges the recorders attempted; *last gets the trace stop hands out. */
static opprof_config g_cfg; /* the session's: a callback may start another like it */

static long run_steps(const char *text, uint64_t max_events, opprof_trace_ready_fn ready, int steps,
                      opprof_trace **last)
{
    opprof_config cfg;
    opprof_config_init(&cfg);
    assert_int_equal(opprof_schedule_parse(text, &cfg.schedule), OPPROF_OK);
    cfg.max_events = max_events;
    cfg.on_trace_ready = ready;
    g_cfg = cfg;
    recorders r;
    recorders_start(&r, 2);
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    for (int s = 0; s < steps; s++) {
        step_main();
        assert_int_equal(opprof_step(), OPPROF_OK);
    }
    assert_int_equal(opprof_stop(last), OPPROF_OK);
    recorders_stop(&r);
    return atomic_load(&r.ranges);
}

/* ---- slow ---- */

static struct {
    int calls, whole;
    size_t work_events;
} g_slow;

static void slow_ready(const opprof_trace *t, void *user)
{
    (void)user;
    g_slow.calls++;
    g_slow.whole += trace_whole(t);
    size_t n = opprof_trace_event_count(t);
    for (size_t i = 0; i < n; i++) {
        opprof_event e;
        opprof_trace_event(t, i, &e);
        if (!strcmp(e.name, "cb::work")) g_slow.work_events++;
    }
    sleep_ms(40); /* while other threads keep recording */
}

static void test_slow_callback_while_threads_record(void **state)
{
    (void)state;
    memset(&g_slow, 0, sizeof g_slow);
    long ranges = run_steps("wait=1,warmup=1,active=1", 50000, slow_ready, 15, NULL);
    print_message("slow: %d traces, %zu work events, %ld ranges attempted\n", g_slow.calls, g_slow.work_events,
                  ranges);
    assert_int_equal(g_slow.calls, 5); /* steps 2, 5, 8, 11, 14 are active */
    assert_int_equal(g_slow.whole, 5);
    assert_true(g_slow.work_events > 0);
}

/* ---- exporting ---- */

static struct {
    char dir[64];
    int calls, bad;
} g_exp;

static void export_ready(const opprof_trace *t, void *user)
{
    (void)user;
    char path[128];
    snprintf(path, sizeof path, "%s/cycle%d.json%s", g_exp.dir, g_exp.calls, g_exp.calls % 2 ? ".gz" : "");
    g_exp.calls++;
    if (opprof_export_chrome_trace(t, path) != OPPROF_OK) {
        print_message("export: %s\n", opprof_last_error());
        g_exp.bad++;
        return;
    }
    opprof_trace *back = NULL;
    if (opprof_trace_load(path, &back) != OPPROF_OK || opprof_trace_event_count(back) != opprof_trace_event_count(t) ||
        opprof_trace_dropped(back) != opprof_trace_dropped(t))
        g_exp.bad++;
    opprof_trace_free(back);
    unlink(path);
}

static void test_callback_that_exports_while_threads_record(void **state)
{
    (void)state;
    memset(&g_exp, 0, sizeof g_exp);
    snprintf(g_exp.dir, sizeof g_exp.dir, "/tmp/opprof_cb_XXXXXX");
    assert_non_null(mkdtemp(g_exp.dir));
    run_steps("wait=0,warmup=1,active=2", 20000 /* reached: dropped counts travel too */, export_ready, 12, NULL);
    assert_int_equal(g_exp.calls, 4);
    assert_int_equal(g_exp.bad, 0);
    assert_int_equal(rmdir(g_exp.dir), 0); /* nothing left behind */
}

/* ---- calling back into the API ---- */

static struct {
    int calls, whole;
    int rc[8];
    int active;
} g_api;

static void api_ready(const opprof_trace *t, void *user)
{
    (void)user;
    int k = g_api.calls++;
    g_api.whole += trace_whole(t); /* no cmocka assert here: it would jump out through the session */
    switch (k) {
    case 0: /* inside a step: still active; a range recorded now goes nowhere */
        g_api.active = opprof_is_active();
        opprof_begin(&site_inner);
        g_api.rc[0] = opprof_end(&site_inner);
        break;
    case 1: /* a step from inside a step */
        g_api.rc[1] = opprof_step();
        break;
    case 2: { /* stop the session from inside its step, start another */
        opprof_trace *inner = NULL;
        g_api.rc[2] = opprof_stop(&inner);
        opprof_trace_free(inner);
        g_api.rc[3] = opprof_start(&g_cfg);
        break;
    }
    default: break;
    }
}

static void test_callback_that_steps_stops_and_starts(void **state)
{
    (void)state;
    memset(&g_api, 0, sizeof g_api);
    opprof_trace *last = NULL;
    run_steps("wait=0,warmup=1,active=1", 50000, api_ready, 16, &last);
    opprof_trace_free(last);
    print_message("api: %d traces\n", g_api.calls);
    assert_int_equal(g_api.active, 1);
    assert_int_equal(g_api.rc[0], OPPROF_OK);
    assert_int_equal(g_api.rc[1], OPPROF_OK);
    assert_int_equal(g_api.rc[2], OPPROF_OK);
    assert_int_equal(g_api.rc[3], OPPROF_OK);
    assert_true(g_api.calls >= 6); /* the restarted session went on producing traces */
    assert_int_equal(g_api.whole, g_api.calls);
    assert_int_equal(opprof_is_active(), 0);
}

/* ---- cut short ---- */

static struct {
    int calls, incomplete;
} g_cut;

static void cut_ready(const opprof_trace *t, void *user)
{
    (void)user;
    g_cut.calls++;
    g_cut.incomplete = opprof_trace_incomplete(t);
}

/* What a signal does under the environment's session: a stop from another
 * thread while the recorders go on, before and after it. */
static void test_stop_incomplete_while_threads_record(void **state)
{
    (void)state;
    memset(&g_cut, 0, sizeof g_cut);
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.max_events = 30000;
    cfg.on_trace_ready = cut_ready;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    recorders r;
    recorders_start(&r, 2);
    sleep_ms(20);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop_incomplete(&t), OPPROF_OK);
    sleep_ms(5); /* recording on, with no session */
    recorders_stop(&r);
    assert_int_equal(g_cut.calls, 1);
    assert_int_equal(g_cut.incomplete, 1);
    assert_int_equal(opprof_trace_incomplete(t), 1);
    assert_true(trace_whole(t));
    size_t n = opprof_trace_event_count(t);
    assert_true(n > 0);
    print_message("cut: %zu events kept, %llu dropped\n", n, (unsigned long long)opprof_trace_dropped(t));

    /* The mark and the dropped count survive the file. */
    char path[] = "/tmp/opprof_cut_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(opprof_export_chrome_trace(t, path), OPPROF_OK);
    opprof_trace *back = NULL;
    assert_int_equal(opprof_trace_load(path, &back), OPPROF_OK);
    assert_int_equal(opprof_trace_incomplete(back), 1);
    assert_int_equal(opprof_trace_event_count(back), n);
    assert_int_equal(opprof_trace_dropped(back), opprof_trace_dropped(t));
    opprof_trace_free(back);
    unlink(path);
    opprof_trace_free(t);

    /* A plain stop is complete. */
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    step_main();
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_int_equal(opprof_trace_incomplete(t), 0);
    opprof_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slow_callback_while_threads_record),
        cmocka_unit_test(test_callback_that_exports_while_threads_record),
        cmocka_unit_test(test_callback_that_steps_stops_and_starts),
        cmocka_unit_test(test_stop_incomplete_while_threads_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

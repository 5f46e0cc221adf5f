/* NVTX injection: a program built against the NVTX 3 headers only (no NVTX
 * library), linked with libopprof.so, run with NVTX_INJECTION64_PATH naming
 * libopprof.so. Its ranges must come back as user annotations. */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include <cmocka.h>

#include "opprof_trace.h"

static opprof_trace *record(void (*body)(void))
{
    opprof_config cfg;
    opprof_config_init(&cfg);
    assert_int_equal(opprof_start(&cfg), 0);
    body();
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), 0);
    assert_non_null(t);
    return t;
}

/* The index of the first event named `name`, -1 when none. */
static int64_t find(const opprof_trace *t, const char *name, opprof_event *out)
{
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        assert_int_equal(opprof_trace_event(t, i, &e), 0);
        if (strcmp(e.name, name) == 0) {
            if (out) *out = e;
            return (int64_t)i;
        }
    }
    return -1;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

OPPROF_SITE(site_work, "mylib::work");

static void body_push_pop(void)
{
    assert_int_equal(nvtxRangePushA("outer"), 0);
    assert_int_equal(nvtxRangePushA("inner"), 1);
    opprof_begin(&site_work);
    opprof_end(&site_work);
    assert_int_equal(nvtxRangePop(), 1);
    assert_int_equal(nvtxRangePop(), 0);
}

static void test_push_pop_nest_as_annotations(void **state)
{
    (void)state;
    opprof_trace *t = record(body_push_pop);
    opprof_event outer, inner, work;
    int64_t io = find(t, "outer", &outer);
    int64_t ii = find(t, "inner", &inner);
    assert_true(io >= 0);
    assert_true(ii >= 0);
    assert_true(find(t, "mylib::work", &work) >= 0);
    assert_int_equal(outer.category, OPPROF_CAT_USER_ANNOTATION);
    assert_int_equal(inner.category, OPPROF_CAT_USER_ANNOTATION);
    assert_int_equal(outer.parent, -1);
    assert_int_equal(inner.parent, io);
    assert_int_equal(work.parent, ii);
    assert_int_equal(outer.flags & OPPROF_EVENT_FORCED_END, 0);
    opprof_trace_free(t);
}

static void body_attributes(void)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "ex ascii";
    nvtxRangePushEx(&a);
    nvtxRangePop();
    a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
    a.message.unicode = L"ex w\u00e9de";
    nvtxRangePushEx(&a);
    nvtxRangePop();
    nvtxRangePushW(L"plain wide");
    nvtxRangePop();

    nvtxDomainHandle_t d = nvtxDomainCreateA("my domain");
    assert_non_null(d);
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = nvtxDomainRegisterStringA(d, "registered");
    nvtxDomainRangePushEx(d, &a);
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "domain inner";
    nvtxDomainRangePushEx(d, &a);
    nvtxRangePushA("default inside domain"); /* another domain's stack */
    nvtxRangePop();
    assert_int_equal(nvtxDomainRangePop(d), 1);
    assert_int_equal(nvtxDomainRangePop(d), 0);
    assert_int_equal(nvtxDomainRangePop(d), -1); /* nothing left in d */
    nvtxDomainDestroy(d);
}

static void test_attributes_unicode_registered_and_domains(void **state)
{
    (void)state;
    opprof_trace *t = record(body_attributes);
    opprof_event e, reg;
    assert_true(find(t, "ex ascii", &e) >= 0);
    assert_true(find(t, "ex w\xc3\xa9" "de", &e) >= 0);
    assert_true(find(t, "plain wide", &e) >= 0);
    int64_t ir = find(t, "registered", &reg);
    assert_true(ir >= 0);
    assert_int_equal(reg.category, OPPROF_CAT_USER_ANNOTATION);
    int64_t in = find(t, "domain inner", &e);
    assert_int_equal(e.parent, ir);
    assert_true(find(t, "default inside domain", &e) >= 0);
    assert_int_equal(e.parent, in);
    opprof_trace_free(t);
}

static nvtxRangeId_t g_id;
static void *end_elsewhere(void *arg)
{
    (void)arg;
    nvtxRangeEnd(g_id);
    return NULL;
}

static void body_start_end(void)
{
    g_id = nvtxRangeStartA("async");
    assert_true(g_id != 0);
    nvtxRangeId_t open = nvtxRangeStartA("never ended");
    (void)open;
    nvtxRangeId_t overlap = nvtxRangeStartA("overlapping");
    opprof_begin(&site_work);
    sleep_ms(20);
    nvtxRangeEnd(overlap); /* ends inside an operator that began after it */
    opprof_end(&site_work);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, end_elsewhere, NULL), 0);
    pthread_join(th, NULL);
    sleep_ms(5);
}

static void test_start_end_ranges_may_end_on_another_thread(void **state)
{
    (void)state;
    opprof_trace *t = record(body_start_end);
    opprof_event a, n, o, w;
    assert_true(find(t, "async", &a) >= 0);
    assert_true(find(t, "never ended", &n) >= 0);
    assert_true(find(t, "overlapping", &o) >= 0);
    assert_true(find(t, "mylib::work", &w) >= 0);
    assert_int_equal(a.category, OPPROF_CAT_USER_ANNOTATION);
    assert_int_equal(a.flags & OPPROF_EVENT_FORCED_END, 0);
    assert_int_equal(a.tid, w.tid); /* on the thread that started it */
    assert_true(a.dur_ns >= 20000000);
    assert_true(n.flags & OPPROF_EVENT_FORCED_END);
    assert_true(n.start_ns + n.dur_ns >= a.start_ns + a.dur_ns + 4000000); /* closed at stop */
    assert_int_equal(o.flags & OPPROF_EVENT_FORCED_END, 0);
    assert_true(o.start_ns + o.dur_ns <= w.start_ns + w.dur_ns);
    assert_true(o.dur_ns >= 20000000);
    opprof_trace_free(t);
    /* An id of a finished session ends nothing and does not crash. */
    nvtxRangeEnd(g_id);
}

static void body_empty(void)
{
    assert_int_equal(nvtxRangePop(), 0); /* pushed before the session */
    nvtxRangePushA("inside");
    nvtxRangePop();
}

static void test_ranges_outside_a_session_stay_balanced(void **state)
{
    (void)state;
    nvtxRangePushA("before");
    opprof_trace *t = record(body_empty);
    assert_int_equal(find(t, "before", NULL), -1);
    assert_true(find(t, "inside", NULL) >= 0);
    opprof_trace_free(t);
    nvtxRangeId_t id = nvtxRangeStartA("unrecorded");
    assert_true(id != 0);
    nvtxRangeEnd(id);
    assert_int_equal(nvtxRangePushA("after"), 0);
    assert_int_equal(nvtxRangePop(), 0);
}

int main(void)
{
    /* Without the injection every range above is a no-op and the tests fail:
     * say why instead. */
    if (!getenv("NVTX_INJECTION64_PATH")) {
        fprintf(stderr, "test_nvtx: NVTX_INJECTION64_PATH must name libopprof.so (ctest sets it)\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_push_pop_nest_as_annotations),
        cmocka_unit_test(test_attributes_unicode_registered_and_domains),
        cmocka_unit_test(test_start_end_ranges_may_end_on_another_thread),
        cmocka_unit_test(test_ranges_outside_a_session_stay_balanced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

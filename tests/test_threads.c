/* Many threads recording at once: counts exact, per-thread order kept,
 * threads that exit before stop keep their events. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "capture/pool.h"
#include "opprof_trace.h"

OPPROF_SITE(site_outer, "outer");
OPPROF_SITE(site_inner, "inner");

enum { NTHREADS = 8, PER_THREAD = 100000 };

static void *worker(void *arg)
{
    long n = (long)arg;
    for (long i = 0; i < n / 2; i++) {
        opprof_begin(&site_outer);
        opprof_begin(&site_inner);
        opprof_end(&site_inner);
        opprof_end(&site_outer);
    }
    return NULL;
}

static void count_by_thread(const opprof_trace *t, int64_t *tids, size_t *counts, size_t *nthreads)
{
    *nthreads = 0;
    int64_t last_start[64];
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        assert_int_equal(opprof_trace_event(t, i, &e), OPPROF_OK);
        size_t k;
        for (k = 0; k < *nthreads && tids[k] != e.tid; k++) {
        }
        if (k == *nthreads) {
            assert_true(k < 64);
            tids[k] = e.tid;
            counts[k] = 0;
            last_start[k] = INT64_MIN;
            (*nthreads)++;
        }
        counts[k]++;
        /* per thread, events come in start order, each inner inside an outer */
        assert_true(e.start_ns >= last_start[k]);
        last_start[k] = e.start_ns;
        if (!strcmp(e.name, "inner")) {
            assert_int_equal(e.depth, 1);
            opprof_event p;
            assert_int_equal(opprof_trace_event(t, (size_t)e.parent, &p), OPPROF_OK);
            assert_string_equal(p.name, "outer");
            assert_int_equal(p.tid, e.tid);
            assert_true(p.start_ns <= e.start_ns && p.start_ns + p.dur_ns >= e.start_ns + e.dur_ns);
        } else {
            assert_int_equal(e.depth, 0);
        }
        assert_int_equal(e.flags, 0);
    }
}

static void test_eight_threads_counts_exact_and_ordered(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) assert_int_equal(pthread_create(&th[i], NULL, worker, (void *)(long)PER_THREAD), 0);
    for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_int_equal(opprof_trace_event_count(t), NTHREADS * PER_THREAD);
    assert_int_equal(opprof_trace_dropped(t), 0);
    int64_t tids[64];
    size_t counts[64], n;
    count_by_thread(t, tids, counts, &n);
    assert_int_equal(n, NTHREADS);
    for (size_t k = 0; k < n; k++) assert_int_equal(counts[k], PER_THREAD);
    opprof_trace_free(t);
}

static void *opens_and_exits(void *arg)
{
    (void)arg;
    worker((void *)1000L);
    opprof_begin(&site_outer); /* left open: closed at the thread's exit */
    return NULL;
}

static void test_thread_exit_before_stop_keeps_events(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, opens_and_exits, NULL), 0);
    pthread_join(th, NULL);
    worker((void *)10L);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_int_equal(opprof_trace_event_count(t), 1000 + 1 + 10);
    size_t forced = 0;
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        opprof_trace_event(t, i, &e);
        if (e.flags & OPPROF_EVENT_FORCED_END) forced++;
    }
    assert_int_equal(forced, 1);
    opprof_trace_free(t);
}

static void test_cap_shared_by_threads_counts_every_event(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.max_events = 50000;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    pthread_t th[4];
    for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&th[i], NULL, worker, (void *)40000L), 0);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    size_t kept = opprof_trace_event_count(t);
    assert_true(kept <= 50000);
    assert_true(kept >= 50000 - 4 * 64); /* idle grants near the cap are small */
    assert_int_equal(kept + opprof_trace_dropped(t), 4 * 40000);
    opprof_trace_free(t);
}

static void *two_events(void *arg)
{
    (void)arg;
    opprof_begin(&site_outer);
    opprof_end(&site_outer);
    opprof_begin(&site_inner);
    opprof_end(&site_inner);
    return NULL;
}

/* Threads that exit while the session records give their chunks back for
 * the next thread (their records move to the retired-data arena), so 300
 * threads one after another map no chunk of their own; every record stays,
 * including a left-open range and one that spans a thread's chunks. */
static void test_short_threads_reuse_chunks_and_keep_events(void **state)
{
    (void)state;
    enum { SHORT = 300, LONG_EVENTS = 6000 };
    opprof_config cfg;
    opprof_config_init(&cfg);
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    uint64_t mapped = op_capture_chunks_mapped();
    for (int i = 0; i < SHORT; i++) {
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, two_events, NULL), 0);
        pthread_join(th, NULL);
    }
    /* 6000 ranges outgrow the 64 KiB first chunk: the tail moved at exit
     * follows a full chunk. */
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, worker, (void *)(long)LONG_EVENTS), 0);
    pthread_join(th, NULL);
    assert_int_equal(pthread_create(&th, NULL, opens_and_exits, NULL), 0);
    pthread_join(th, NULL);
    assert_true(op_capture_chunks_mapped() - mapped <= 1);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_int_equal(opprof_trace_event_count(t), 2 * SHORT + LONG_EVENTS + 1001);
    assert_int_equal(opprof_trace_dropped(t), 0);
    int64_t tids[SHORT + 2];
    size_t counts[SHORT + 2], n = 0, forced = 0;
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        assert_int_equal(opprof_trace_event(t, i, &e), OPPROF_OK);
        assert_true(!strcmp(e.name, "outer") || !strcmp(e.name, "inner"));
        assert_true(e.dur_ns >= 0);
        if (e.flags & OPPROF_EVENT_FORCED_END) forced++;
        size_t k;
        for (k = 0; k < n && tids[k] != e.tid; k++) {
        }
        if (k == n) {
            assert_true(n < SHORT + 2);
            tids[n] = e.tid;
            counts[n++] = 0;
        }
        counts[k]++;
    }
    assert_int_equal(forced, 1);
    /* Thread ids may be reused by the kernel: count events, not threads. */
    size_t total = 0, largest = 0;
    for (size_t k = 0; k < n; k++) {
        total += counts[k];
        if (counts[k] > largest) largest = counts[k];
    }
    assert_int_equal(total, 2 * SHORT + LONG_EVENTS + 1001);
    assert_true(largest >= LONG_EVENTS);
    opprof_trace_free(t);
    /* A second session reuses the same pool. */
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    mapped = op_capture_chunks_mapped();
    for (int i = 0; i < 50; i++) {
        assert_int_equal(pthread_create(&th, NULL, two_events, NULL), 0);
        pthread_join(th, NULL);
    }
    assert_int_equal(op_capture_chunks_mapped(), mapped);
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_int_equal(opprof_trace_event_count(t), 100);
    opprof_trace_free(t);
}

static void *record_during_stop(void *arg)
{
    volatile int *stop = arg;
    while (!__atomic_load_n(stop, __ATOMIC_RELAXED)) worker((void *)2L);
    return NULL;
}

static void test_stop_while_threads_record(void **state)
{
    (void)state;
    for (int round = 0; round < 20; round++) {
        opprof_config cfg;
        opprof_config_init(&cfg);
        assert_int_equal(opprof_start(&cfg), OPPROF_OK);
        volatile int stop = 0;
        pthread_t th[2];
        for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, record_during_stop, (void *)&stop);
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
        opprof_trace *t = NULL;
        assert_int_equal(opprof_stop(&t), OPPROF_OK);
        __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
        for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
        assert_non_null(t);
        for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
            opprof_event e;
            opprof_trace_event(t, i, &e);
            assert_true(e.dur_ns >= 0);
            assert_true(!strcmp(e.name, "outer") || !strcmp(e.name, "inner"));
        }
        opprof_trace_free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eight_threads_counts_exact_and_ordered),
        cmocka_unit_test(test_thread_exit_before_stop_keeps_events),
        cmocka_unit_test(test_cap_shared_by_threads_counts_every_event),
        cmocka_unit_test(test_stop_while_threads_record),
        cmocka_unit_test(test_short_threads_reuse_chunks_and_keep_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

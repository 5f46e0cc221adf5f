/* Memory profiling with exact figures: attribution to the innermost open
 * operator of the allocating thread, frees elsewhere, unknown and double
 * frees, realloc, concurrent threads, the peak and the timeline. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "opprof_trace.h"

static int64_t g_now, g_step = 10;

static int64_t fake_clock(void *ctx)
{
    (void)ctx;
    /* threads share it; a step of 0 stops it, as a coarse clock does */
    return __atomic_add_fetch(&g_now, __atomic_load_n(&g_step, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}

static void start_memory(void)
{
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.profile_memory = 1;
    cfg.clock = fake_clock;
    g_now = 0;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
}

static opprof_trace *stop_trace(void)
{
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_non_null(t);
    return t;
}

static opprof_event get(const opprof_trace *t, const char *name)
{
    opprof_event e;
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_trace_event(t, i, &e);
        if (!strcmp(e.name, name)) return e;
    }
    fail_msg("no event %s", name);
    return e;
}

OPPROF_SITE(site_outer, "outer");
OPPROF_SITE(site_inner, "inner");
OPPROF_SITE(site_other, "other");

#define P(x) ((const void *)(uintptr_t)(x))

static void test_nested_and_freed_elsewhere(void **state)
{
    (void)state;
    start_memory();
    opprof_begin(&site_outer);
    opprof_record_alloc(P(0x1000), 100);
    opprof_begin(&site_inner);
    opprof_record_alloc(P(0x2000), 1000);
    opprof_record_alloc(P(0x3000), 30);
    opprof_record_free(P(0x3000));
    opprof_end(&site_inner);
    opprof_end(&site_outer);
    opprof_begin(&site_other);
    opprof_record_free(P(0x2000)); /* freed in a different operator */
    opprof_end(&site_other);
    opprof_record_free(P(0x1000)); /* freed outside any operator */
    opprof_trace *t = stop_trace();
    opprof_event outer = get(t, "outer"), inner = get(t, "inner"), other = get(t, "other");
    assert_int_equal(inner.self_cpu_memory_usage, 1000);
    assert_int_equal(inner.cpu_memory_usage, 1000);
    assert_int_equal(outer.self_cpu_memory_usage, 100);
    assert_int_equal(outer.cpu_memory_usage, 1100);
    assert_int_equal(other.self_cpu_memory_usage, -1000);
    assert_int_equal(other.cpu_memory_usage, -1000);
    opprof_memory_stats st;
    assert_int_equal(opprof_trace_memory_stats(t, &st), OPPROF_OK);
    assert_int_equal(st.allocations, 3);
    assert_int_equal(st.frees, 3);
    assert_int_equal(st.bytes_allocated, 1130);
    assert_int_equal(st.bytes_freed, 1130);
    assert_int_equal(st.peak_bytes, 1130);
    assert_string_equal(st.peak_op, "inner");
    assert_int_equal(st.final_bytes, 0);
    assert_int_equal(st.unknown_frees, 0);
    assert_int_equal(st.double_frees, 0);
    opprof_trace_free(t);
}

/* An allocation that reads the same time as the begin right after it is
 * still its caller's: the order in which they happened decides, not the
 * time (a tie that the model, working from times alone, gives the new
 * operator). */
static void test_order_decides_a_tie_with_the_next_begin(void **state)
{
    (void)state;
    start_memory();
    opprof_begin(&site_outer);
    opprof_begin(&site_inner);
    opprof_record_alloc(P(0x1000), 1);
    opprof_end(&site_inner);
    opprof_record_alloc(P(0x2000), 200); /* t = 50 */
    __atomic_store_n(&g_step, 0, __ATOMIC_RELAXED);
    opprof_begin(&site_other); /* also t = 50 */
    __atomic_store_n(&g_step, 10, __ATOMIC_RELAXED);
    opprof_record_alloc(P(0x3000), 3000);
    opprof_end(&site_other);
    opprof_end(&site_outer);
    opprof_record_free(P(0x1000));
    opprof_record_free(P(0x2000));
    opprof_record_free(P(0x3000));
    opprof_trace *t = stop_trace();
    opprof_event outer = get(t, "outer"), inner = get(t, "inner"), other = get(t, "other");
    assert_int_equal(other.start_ns, outer.start_ns + 40); /* the tie did happen */
    assert_int_equal(inner.self_cpu_memory_usage, 1);
    assert_int_equal(other.self_cpu_memory_usage, 3000);
    assert_int_equal(outer.self_cpu_memory_usage, 200);
    assert_int_equal(outer.cpu_memory_usage, 3201);
    opprof_trace_free(t);
}

static void test_unknown_and_double_frees_counted_not_recorded(void **state)
{
    (void)state;
    start_memory();
    opprof_begin(&site_outer);
    opprof_record_free(P(0x9999));   /* never allocated in the session */
    opprof_record_alloc(P(0x4000), 64);
    opprof_record_free(P(0x4000));
    opprof_record_free(P(0x4000));   /* double free */
    opprof_record_free(NULL);        /* free(NULL) is nothing */
    opprof_end(&site_outer);
    opprof_trace *t = stop_trace();
    opprof_memory_stats st;
    opprof_trace_memory_stats(t, &st);
    assert_int_equal(st.unknown_frees, 1);
    assert_int_equal(st.double_frees, 1);
    assert_int_equal(st.allocations, 1);
    assert_int_equal(st.frees, 1);
    assert_int_equal(get(t, "outer").cpu_memory_usage, 0);
    opprof_trace_free(t);
}

static void test_address_reused_after_free_is_tracked_again(void **state)
{
    (void)state;
    start_memory();
    opprof_begin(&site_outer);
    for (int i = 0; i < 1000; i++) {
        opprof_record_alloc(P(0x5000), (uint64_t)i + 1);
        opprof_record_free(P(0x5000));
    }
    opprof_record_alloc(P(0x5000), 77);
    opprof_end(&site_outer);
    opprof_trace *t = stop_trace();
    opprof_memory_stats st;
    opprof_trace_memory_stats(t, &st);
    assert_int_equal(st.double_frees, 0);
    assert_int_equal(st.unknown_frees, 0);
    assert_int_equal(st.final_bytes, 77);
    assert_int_equal(get(t, "outer").self_cpu_memory_usage, 77);
    opprof_trace_free(t);
}

static void test_realloc_growth_and_shrink(void **state)
{
    (void)state;
    start_memory();
    opprof_begin(&site_outer);
    opprof_record_realloc(NULL, P(0x6000), 100);       /* realloc(NULL, 100) */
    opprof_record_realloc(P(0x6000), P(0x7000), 400);  /* grows and moves */
    opprof_end(&site_outer);
    opprof_begin(&site_inner);
    opprof_record_realloc(P(0x7000), P(0x7000), 50);   /* shrinks in place */
    opprof_end(&site_inner);
    opprof_begin(&site_other);
    opprof_record_realloc(P(0x7000), NULL, 0);         /* realloc(p, 0) frees */
    opprof_end(&site_other);
    opprof_trace *t = stop_trace();
    assert_int_equal(get(t, "outer").self_cpu_memory_usage, 400);
    assert_int_equal(get(t, "inner").self_cpu_memory_usage, 50 - 400);
    assert_int_equal(get(t, "other").self_cpu_memory_usage, -50);
    opprof_memory_stats st;
    opprof_trace_memory_stats(t, &st);
    assert_int_equal(st.reallocs, 4);
    assert_int_equal(st.peak_bytes, 500);
    assert_int_equal(st.final_bytes, 0);
    opprof_trace_free(t);
}

enum { PER_THREAD = 20000 };

static void *alloc_worker(void *arg)
{
    uintptr_t base = (uintptr_t)arg;
    opprof_begin(&site_inner);
    for (uintptr_t i = 0; i < PER_THREAD; i++) opprof_record_alloc(P(base + i * 16), 8);
    for (uintptr_t i = 0; i < PER_THREAD; i += 2) opprof_record_free(P(base + i * 16));
    opprof_end(&site_inner);
    return NULL;
}

static void test_threads_keep_their_own_allocations(void **state)
{
    (void)state;
    start_memory();
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, alloc_worker, (void *)(uintptr_t)(0x100000 * (i + 1) * 16)), 0);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    opprof_trace *t = stop_trace();
    int seen = 0;
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        opprof_trace_event(t, i, &e);
        assert_string_equal(e.name, "inner");
        /* each thread's op holds exactly its own net bytes */
        assert_int_equal(e.self_cpu_memory_usage, (PER_THREAD / 2) * 8);
        seen++;
    }
    assert_int_equal(seen, 2);
    opprof_memory_stats st;
    opprof_trace_memory_stats(t, &st);
    assert_int_equal(st.allocations, 2 * PER_THREAD);
    assert_int_equal(st.frees, PER_THREAD);
    assert_int_equal(st.final_bytes, PER_THREAD * 8);
    assert_int_equal(st.unknown_frees, 0);
    opprof_trace_free(t);
}

static void test_timeline_csv_and_json(void **state)
{
    (void)state;
    start_memory();
    opprof_begin(&site_outer);
    opprof_record_alloc(P(0x10), 2048);
    opprof_end(&site_outer);
    opprof_record_free(P(0x10));
    opprof_trace *t = stop_trace();
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(opprof_memory_timeline_write(t, f, OPPROF_FORMAT_CSV), OPPROF_OK);
    fclose(f);
    assert_non_null(strstr(buf, "ts_us,addr,bytes,total_allocated,tid,op\n"));
    assert_non_null(strstr(buf, ",0x10,2048,2048,"));
    assert_non_null(strstr(buf, ",0x10,-2048,0,"));
    assert_non_null(strstr(buf, ",outer\n"));
    assert_non_null(strstr(buf, ",[memory]\n"));
    free(buf);
    f = open_memstream(&buf, &len);
    assert_int_equal(opprof_memory_timeline_write(t, f, OPPROF_FORMAT_JSON), OPPROF_OK);
    fclose(f);
    assert_non_null(strstr(buf, "\"peak_bytes\": 2048"));
    assert_non_null(strstr(buf, "\"peak_op\": \"outer\""));
    free(buf);
    assert_int_equal(opprof_memory_timeline_write(t, stdout, 7), OPPROF_E_INVAL);
    opprof_trace_free(t);
}

static void test_nothing_tracked_without_profile_memory(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    opprof_begin(&site_outer);
    opprof_record_alloc(P(0x10), 2048);
    opprof_record_free(P(0x10));
    opprof_end(&site_outer);
    opprof_trace *t = stop_trace();
    opprof_memory_stats st;
    opprof_trace_memory_stats(t, &st);
    assert_int_equal(st.allocations + st.frees + st.unknown_frees, 0);
    opprof_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nested_and_freed_elsewhere),
        cmocka_unit_test(test_unknown_and_double_frees_counted_not_recorded),
        cmocka_unit_test(test_address_reused_after_free_is_tracked_again),
        cmocka_unit_test(test_realloc_growth_and_shrink),
        cmocka_unit_test(test_threads_keep_their_own_allocations),
        cmocka_unit_test(test_order_decides_a_tie_with_the_next_begin),
        cmocka_unit_test(test_timeline_csv_and_json),
        cmocka_unit_test(test_nothing_tracked_without_profile_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

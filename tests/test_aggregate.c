/* Online key averages (opprof_config.aggregate): the tables of a session
 * that sums by name (by input shapes, by call stack) as it records equal
 * those of the same session keeping events, byte for byte under an injected
 * clock; no cap applies; options that need events keep them. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "opprof_trace.h"

#include "agg_script.h"

enum { NTHREADS = 4, PER_THREAD = 20000 };

static int g_memory_flops; /* record() profiles memory and FLOPs */
static int g_shapes;       /* record() records input shapes */
static int g_stack;        /* record() captures stacks, and runs stacked() after script() */

/* One site reached through two callers, and at two depths: the same name
 * on four call stacks. */
static __attribute__((noinline)) void leaf(int k)
{
    g_now += 3 + k; opprof_begin(&site_c);
    g_now += 5; opprof_end(&site_c);
    __asm__ volatile("" ::: "memory"); /* no tail call: leaf stays a frame of its own */
}

static __attribute__((noinline)) void via_one(int k)
{
    g_now += 2; opprof_begin(&site_b);
    leaf(k);
    g_now += 1; opprof_end(&site_b);
    leaf(k + 1);
    __asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void via_two(int k)
{
    g_now += 4; opprof_begin(&site_b);
    leaf(k);
    g_now += 2; opprof_end(&site_b);
    __asm__ volatile("" ::: "memory");
}

static void stacked(void)
{
    for (int i = 0; i < 5; i++) {
        g_now += 1; opprof_begin(&site_a);
        via_one(i);
        if (i % 2) via_two(i);
        g_now += 1; opprof_end(&site_a);
    }
}

static opprof_trace *record(int aggregate, uint64_t max_events)
{
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.profile_memory = cfg.with_flops = g_memory_flops;
    cfg.record_shapes = g_shapes;
    cfg.with_stack = g_stack;
    cfg.aggregate = aggregate;
    cfg.max_events = max_events;
    g_after_script = g_stack ? stacked : NULL;
    return script_session(&cfg);
}

static void test_tables_equal_the_event_path(void **state)
{
    (void)state;
    opprof_trace *ev = record(0, 0), *sums = record(1, 0);
    assert_int_equal(opprof_trace_aggregated(ev), 0);
    assert_int_equal(opprof_trace_event_count(sums), 0);
    assert_int_equal(opprof_trace_aggregated(sums), opprof_trace_event_count(ev));
    assert_int_equal(opprof_trace_dropped(sums), 0);
    const char *sorts[] = {NULL, "self_cpu_time_total", "cpu_time_total", "count"};
    opprof_avg_options by_shape = {.group_by_input_shape = 1};
    for (size_t i = 0; i < sizeof sorts / sizeof sorts[0]; i++) {
        for (int shape = 0; shape < 2; shape++) {
            char *a = table_of(ev, shape ? &by_shape : NULL, sorts[i]);
            char *b = table_of(sums, shape ? &by_shape : NULL, sorts[i]);
            assert_string_equal(a, b);
            free(a);
            free(b);
        }
    }
    /* The lookup's millisecond is in no row (B's time is its own). */
    char *t = table_of(sums, NULL, NULL);
    assert_null(strstr(t, "1.0"));
    free(t);
    opprof_avg_options top = {.top_level_only = 1};
    opprof_key_averages *ka = NULL;
    assert_int_equal(opprof_key_averages(sums, &top, &ka), OPPROF_E_INVAL);
    assert_null(ka);
    opprof_trace_free(ev);
    opprof_trace_free(sums);
}

/* Memory (by range, children included, and the [memory] row) and FLOPs
 * (hook and opprof_end_flops) sum as the event path counts them. */
static void test_memory_and_flops_equal_the_event_path(void **state)
{
    (void)state;
    g_memory_flops = 1;
    opprof_trace *ev = record(0, 0), *sums = record(1, 0);
    g_memory_flops = 0;
    assert_int_equal(opprof_trace_event_count(sums), 0);
    assert_int_equal(opprof_trace_aggregated(sums), opprof_trace_event_count(ev));
    const char *sorts[] = {NULL, "cpu_memory_usage", "self_cpu_memory_usage", "flops", "count"};
    for (size_t i = 0; i < sizeof sorts / sizeof sorts[0]; i++) {
        char *a = table_of(ev, NULL, sorts[i]);
        char *b = table_of(sums, NULL, sorts[i]);
        assert_string_equal(a, b);
        if (!sorts[i]) { /* the columns are there, with what the script did */
            assert_non_null(strstr(a, "[memory]"));
            assert_non_null(strstr(a, "CPU Mem"));
            assert_non_null(strstr(a, "FLOPs"));
        }
        free(a);
        free(b);
    }
    opprof_key_averages *ka = NULL;
    assert_int_equal(opprof_key_averages(sums, NULL, &ka), OPPROF_OK);
    int seen = 0;
    for (size_t i = 0; i < opprof_key_averages_count(ka); i++) {
        opprof_avg_row r;
        opprof_key_averages_row(ka, i, &r);
        if (!strcmp(r.name, "mm")) {
            assert_int_equal(r.count, 4);
            assert_int_equal(r.flops, 2 * 4 * 8 + 12345 + 0 + 2 * 4 * 8);
            /* the first's 64 (freed in A), the last's 9 and the frees done inside it */
            assert_int_equal(r.self_cpu_memory_usage, 64 + 9 - 100 - 7 - 9);
            seen++;
        } else if (!strcmp(r.name, "[memory]")) {
            assert_int_equal(r.count, 2); /* the 100 and the free of A's 1000 */
            seen++;
        }
    }
    assert_int_equal(seen, 2);
    opprof_key_averages_free(ka);
    opprof_trace_free(ev);
    opprof_trace_free(sums);
}

/* No cap: the event path keeps 10 events, the sums count every range. */
static void test_no_cap_applies(void **state)
{
    (void)state;
    opprof_trace *ev = record(0, 10), *sums = record(1, 10);
    assert_true(opprof_trace_dropped(ev) > 0);
    assert_int_equal(opprof_trace_dropped(sums), 0);
    opprof_trace *full = record(0, 0);
    assert_int_equal(opprof_trace_aggregated(sums), opprof_trace_event_count(full));
    opprof_trace_free(full);
    opprof_trace_free(ev);
    opprof_trace_free(sums);
}

/* Grouped by input shapes too: keys of site and shapes. */
static void test_shapes_equal_the_event_path(void **state)
{
    (void)state;
    g_shapes = g_memory_flops = 1;
    opprof_trace *ev = record(0, 0), *sums = record(1, 0);
    g_shapes = g_memory_flops = 0;
    assert_int_equal(opprof_trace_event_count(sums), 0);
    opprof_avg_options by_shape = {.group_by_input_shape = 1};
    const char *sorts[] = {NULL, "count", "flops"};
    for (size_t i = 0; i < sizeof sorts / sizeof sorts[0]; i++) {
        for (int shape = 0; shape < 2; shape++) {
            char *a = table_of(ev, shape ? &by_shape : NULL, sorts[i]);
            char *b = table_of(sums, shape ? &by_shape : NULL, sorts[i]);
            assert_string_equal(a, b);
            if (shape && !sorts[i]) {
                assert_non_null(strstr(a, "[[4, 8]]"));
                assert_non_null(strstr(a, "[[2, 3, 5], []]"));
            }
            free(a);
            free(b);
        }
    }
    opprof_trace_free(ev);
    opprof_trace_free(sums);
}

/* The rows of that name, and their calls in all. */
static size_t rows_named(const opprof_trace *t, const opprof_avg_options *opt, const char *name, uint64_t *calls)
{
    opprof_key_averages *ka = NULL;
    assert_int_equal(opprof_key_averages(t, opt, &ka), OPPROF_OK);
    size_t n = 0;
    *calls = 0;
    for (size_t i = 0; i < opprof_key_averages_count(ka); i++) {
        opprof_avg_row r;
        assert_int_equal(opprof_key_averages_row(ka, i, &r), OPPROF_OK);
        if (!strcmp(r.name, name)) {
            n++;
            *calls += r.count;
        }
    }
    opprof_key_averages_free(ka);
    return n;
}

/* Grouped by call stack (with_stack): keys of site and stack, the stack
 * captured at each begin as the event path captures it; the tables by the
 * top 1, 2, 3 and 8 frames, with and without shapes, equal the event
 * path's, and a deeper grouping splits C's calls into more rows. */
static void test_stacks_equal_the_event_path(void **state)
{
    (void)state;
    g_stack = g_shapes = g_memory_flops = 1;
    opprof_trace *ev = record(0, 0), *sums = record(1, 0);
    g_stack = g_shapes = g_memory_flops = 0;
    assert_int_equal(opprof_trace_event_count(sums), 0);
    assert_int_equal(opprof_trace_aggregated(sums), opprof_trace_event_count(ev));
    const int depths[] = {1, 2, 3, 8};
    const char *sorts[] = {NULL, "count", "self_cpu_time_total"};
    for (size_t d = 0; d < sizeof depths / sizeof *depths; d++) {
        for (int shape = 0; shape < 2; shape++) {
            opprof_avg_options o = {.group_by_input_shape = shape, .group_by_stack_n = depths[d]};
            for (size_t i = 0; i < sizeof sorts / sizeof *sorts; i++) {
                char *a = table_of(ev, &o, sorts[i]);
                char *b = table_of(sums, &o, sorts[i]);
                if (strcmp(a, b) != 0) fail_msg("events:\n%s\nsums:\n%s", a, b);
                assert_non_null(strstr(a, "Source Location"));
                free(a);
                free(b);
            }
        }
    }
    uint64_t by_name, by_stack;
    opprof_avg_options deep = {.group_by_stack_n = 8};
    assert_int_equal(rows_named(sums, NULL, "C", &by_name), 1);
    size_t rows = rows_named(sums, &deep, "C", &by_stack);
    assert_int_equal(by_stack, by_name);
    assert_int_equal(by_name, 3 + 1 + 1 + 5 * 2 + 2); /* script()'s, and stacked()'s: 2 per via_one, 1 per via_two */
    assert_true(rows >= 3);                           /* leaf under via_one (two lines), under via_two */
    opprof_trace_free(ev);
    opprof_trace_free(sums);
}

/* The text opprof_write_stacks gives for t, frames as asked; NULL and
 * *rc set when it refuses. */
static char *folded_of(const opprof_trace *t, int frames, int *rc)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    *rc = opprof_write_stacks(t, f, NULL, frames);
    fclose(f);
    if (*rc != OPPROF_OK) {
        free(text);
        return NULL;
    }
    return text;
}

/* Microseconds apart, so that the folded lines have values: C under B
 * under A and under A alone, B under A, A recursing, C at the top. */
static void tree(void)
{
    for (int i = 0; i < 6; i++) {
        g_now += 1500; opprof_begin(&site_a);
        g_now += 2000; opprof_begin(&site_b);
        g_now += 3000 + 100 * i; opprof_begin(&site_c);
        g_now += 2500; opprof_end(&site_c);
        g_now += 700; opprof_end(&site_b);
        g_now += 900; opprof_begin(&site_c);
        g_now += 1200; opprof_end(&site_c);
        if (i % 3 == 0) {
            g_now += 400; opprof_begin(&site_a);
            g_now += 1900; opprof_end(&site_a);
        }
        g_now += 100; opprof_end(&site_a);
    }
    g_now += 50; opprof_begin(&site_c);
    g_now += 4000; opprof_end(&site_c);
}

/* Sums keyed by call path (OPPROF_AGGREGATE_PATHS): the tables are the
 * event path's, and so are the call tree's folded stacks, without events;
 * sums without paths refuse a call tree with the reason. */
static void test_call_paths_equal_the_event_path(void **state)
{
    (void)state;
    g_shapes = g_memory_flops = 1;
    g_after_script = tree;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.profile_memory = cfg.with_flops = cfg.record_shapes = 1;
    opprof_trace *ev = script_session(&cfg);
    cfg.aggregate = OPPROF_AGGREGATE_PATHS;
    opprof_trace *paths = script_session(&cfg);
    cfg.aggregate = 1;
    opprof_trace *plain = script_session(&cfg);
    g_after_script = NULL;
    g_shapes = g_memory_flops = 0;
    assert_int_equal(opprof_trace_event_count(paths), 0);
    assert_int_equal(opprof_trace_aggregated(paths), opprof_trace_event_count(ev));
    const char *sorts[] = {NULL, "count", "self_cpu_time_total", "flops", "cpu_memory_usage"};
    opprof_avg_options by_shape = {.group_by_input_shape = 1};
    for (size_t i = 0; i < sizeof sorts / sizeof *sorts; i++) {
        for (int shape = 0; shape < 2; shape++) {
            char *a = table_of(ev, shape ? &by_shape : NULL, sorts[i]);
            char *b = table_of(paths, shape ? &by_shape : NULL, sorts[i]);
            if (strcmp(a, b) != 0) fail_msg("events:\n%s\npaths:\n%s", a, b);
            free(a);
            free(b);
        }
    }
    int rc;
    char *a = folded_of(ev, OPPROF_STACKS_OPERATORS, &rc), *b = folded_of(paths, OPPROF_STACKS_OPERATORS, &rc);
    assert_non_null(a);
    assert_non_null(b);
    if (strcmp(a, b) != 0) fail_msg("events:\n%s\npaths:\n%s", a, b);
    assert_non_null(strstr(a, ";A;B;C 15\n")); /* C under B under A: 6 x 2.5 us (under what script() left open) */
    assert_non_null(strstr(a, ";A;A 3\n"));    /* A in A: 2 x 1.9 us */
    free(a);
    free(b);
    assert_null(folded_of(plain, OPPROF_STACKS_OPERATORS, &rc));
    assert_int_equal(rc, OPPROF_E_INVAL);
    assert_non_null(strstr(opprof_last_error(), "OPPROF_AGGREGATE_PATHS"));
    assert_null(folded_of(paths, OPPROF_STACKS_CALLS, &rc)); /* captured stacks need with_stack */
    assert_int_equal(rc, OPPROF_E_INVAL);
    opprof_trace_free(ev);
    opprof_trace_free(paths);
    opprof_trace_free(plain);
}

/* Device activity needs events: an aggregating session with CUDA keeps
 * them (with or without a device). */
static void test_options_that_need_events_keep_them(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.aggregate = 1;
    cfg.activities |= OPPROF_ACTIVITY_CUDA;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    opprof_begin(&site_a);
    opprof_end(&site_a);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_int_equal(opprof_trace_event_count(t), 1);
    assert_int_equal(opprof_trace_aggregated(t), 0);
    opprof_trace_free(t);
}

static __attribute__((noinline)) int looked_up_here(int x)
{
    return x * 7 + 3;
}

/* A function's first lookup inside an aggregating session: the ranges open
 * around it are not charged for it. */
static void test_first_call_lookup_not_charged(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.clock = fake_clock;
    cfg.aggregate = 1;
    g_now = 1000;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    g_now += 10; opprof_begin(&site_a);
    g_now += 10; opprof_begin(&site_b);
    g_now += 10;
    g_step = 1000000;
    const opprof_site *f = opprof_function_site((const void *)looked_up_here);
    g_step = 0;
    g_now = g_last;
    assert_non_null(f);
    g_now += 10; opprof_begin(f);
    g_now += 10; opprof_end(f);
    g_now += 10; opprof_end(&site_b);
    g_now += 10; opprof_end(&site_a);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_int_equal(looked_up_here(1), 10);
    opprof_key_averages *ka = NULL;
    assert_int_equal(opprof_key_averages(t, NULL, &ka), OPPROF_OK);
    int seen = 0;
    for (size_t i = 0; i < opprof_key_averages_count(ka); i++) {
        opprof_avg_row r;
        opprof_key_averages_row(ka, i, &r);
        if (!strcmp(r.name, "A")) {
            assert_int_equal(r.cpu_time_total_ns, 60);
            assert_int_equal(r.self_cpu_time_total_ns, 20);
            seen++;
        } else if (!strcmp(r.name, "B")) {
            assert_int_equal(r.cpu_time_total_ns, 40);
            assert_int_equal(r.self_cpu_time_total_ns, 30);
            seen++;
        }
    }
    assert_int_equal(seen, 2);
    opprof_key_averages_free(ka);
    opprof_trace_free(t);
}

/* API misuse in an aggregating session is refused as in the event path. */
static void test_null_site_and_unbalanced_end(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.aggregate = 1;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    opprof_begin(NULL);
    assert_int_equal(opprof_end(NULL), OPPROF_E_INVAL);
    opprof_begin(&site_a);
    assert_int_equal(opprof_end(&site_c), OPPROF_E_UNBALANCED); /* the fast path's refusal */
    assert_non_null(strstr(opprof_last_error(), "\"C\" is not open"));
    assert_int_equal(opprof_end(&site_a), OPPROF_OK);
    assert_int_equal(opprof_end(&site_a), OPPROF_E_UNBALANCED);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_int_equal(opprof_trace_aggregated(t), 1);
    opprof_trace_free(t);
}

/* Threads that record at once and exit before stop: counts exact, and each
 * parent's self time is its total less its children's. */
static void test_threads_counts_exact(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.aggregate = 1;
    g_per_thread = PER_THREAD;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) assert_int_equal(pthread_create(&th[i], NULL, worker, NULL), 0);
    for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_int_equal(count_of(t, "A"), NTHREADS * PER_THREAD);
    assert_int_equal(count_of(t, "B"), NTHREADS * PER_THREAD);
    assert_int_equal(count_of(t, "C"), NTHREADS);
    assert_int_equal(opprof_trace_aggregated(t), (2 * PER_THREAD + 1) * NTHREADS);
    opprof_key_averages *ka = NULL;
    assert_int_equal(opprof_key_averages(t, NULL, &ka), OPPROF_OK);
    int64_t a_self = -1, a_total = -1, b_total = -1;
    for (size_t i = 0; i < opprof_key_averages_count(ka); i++) {
        opprof_avg_row r;
        opprof_key_averages_row(ka, i, &r);
        if (!strcmp(r.name, "A")) a_self = r.self_cpu_time_total_ns, a_total = r.cpu_time_total_ns;
        if (!strcmp(r.name, "B")) b_total = r.cpu_time_total_ns;
    }
    assert_true(a_self >= 0 && b_total > 0);
    /* ns conversion rounds each sum, not each range: within a few ns */
    assert_true(llabs(a_total - b_total - a_self) <= 4);
    opprof_key_averages_free(ka);
    opprof_trace_free(t);
}

/* Two sites of one name, one inside the other, each a range of 4.7e18 ns:
 * the name's total passes INT64_MAX. Its rows' sums saturate as the events'
 * do, and the table says so, where they wrapped to a negative total (and
 * aborted under UBSan). */
static void test_sums_saturate_as_events_do(void **state)
{
    (void)state;
    char *tables[2];
    for (int aggregate = 0; aggregate < 2; aggregate++) {
        opprof_config cfg;
        opprof_config_init(&cfg);
        cfg.aggregate = aggregate;
        cfg.clock = fake_clock;
        g_now = 1;
        g_step = 0;
        assert_int_equal(opprof_start(&cfg), OPPROF_OK);
        opprof_begin(&site_b);
        g_now += 1;
        opprof_begin(&site_b2);
        g_now += 4700000000000000000;
        opprof_end(&site_b2);
        g_now += 1;
        opprof_end(&site_b);
        opprof_trace *t = NULL;
        assert_int_equal(opprof_stop(&t), OPPROF_OK);
        assert_int_equal(opprof_trace_aggregated(t), aggregate ? 2 : 0);
        opprof_key_averages *ka = NULL;
        assert_int_equal(opprof_key_averages(t, NULL, &ka), OPPROF_OK);
        assert_int_equal(opprof_key_averages_count(ka), 1);
        opprof_avg_row r;
        assert_int_equal(opprof_key_averages_row(ka, 0, &r), OPPROF_OK);
        assert_int_equal(r.count, 2);
        assert_true(r.cpu_time_total_ns == INT64_MAX);
        opprof_key_averages_free(ka);
        tables[aggregate] = table_of(t, NULL, NULL);
        if (!strstr(tables[aggregate], "Saturated: some sums passed the 64-bit range"))
            fail_msg("aggregate %d:\n%s", aggregate, tables[aggregate]);
        opprof_trace_free(t);
    }
    assert_string_equal(tables[0], tables[1]);
    free(tables[0]);
    free(tables[1]);
}

/* A stop while threads still record (and a second session after it): the
 * sums read beside the writers are whole enough to group, and A's calls are
 * B's to within the one pair in flight per thread. */
static void test_stop_while_threads_record(void **state)
{
    (void)state;
    for (int round = 0; round < 10; round++) {
        opprof_config cfg;
        opprof_config_init(&cfg);
        cfg.aggregate = 1;
        assert_int_equal(opprof_start(&cfg), OPPROF_OK);
        volatile int stop = 0;
        pthread_t th[2];
        for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&th[i], NULL, until_stopped, (void *)&stop), 0);
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
        opprof_trace *t = NULL;
        assert_int_equal(opprof_stop(&t), OPPROF_OK);
        __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
        for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
        uint64_t a = count_of(t, "A"), b = count_of(t, "B");
        assert_true(a + 2 >= b && b + 2 >= a);
        opprof_trace_free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables_equal_the_event_path),
        cmocka_unit_test(test_memory_and_flops_equal_the_event_path),
        cmocka_unit_test(test_shapes_equal_the_event_path),
        cmocka_unit_test(test_stacks_equal_the_event_path),
        cmocka_unit_test(test_call_paths_equal_the_event_path),
        cmocka_unit_test(test_no_cap_applies),
        cmocka_unit_test(test_options_that_need_events_keep_them),
        cmocka_unit_test(test_first_call_lookup_not_charged),
        cmocka_unit_test(test_null_site_and_unbalanced_end),
        cmocka_unit_test(test_threads_counts_exact),
        cmocka_unit_test(test_sums_saturate_as_events_do),
        cmocka_unit_test(test_stop_while_threads_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Overhead compensation (opprof_config.overhead_inside_ns and
 * overhead_outside_ns): each range's duration loses the inside part, and a
 * whole call per range begun within it, in the sums of an aggregating or
 * streamed session, never in a session that keeps events; the trace and
 * the table's footer say when it was applied. Times come from an injected
 * clock (ticks are nanoseconds), so every figure is exact. */
#include <math.h>
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

OPPROF_SITE(site_p, "P");
OPPROF_SITE(site_c1, "C1");
OPPROF_SITE(site_c2, "C2");
OPPROF_SITE(site_g, "G");

static int64_t g_now;

static int64_t fake_clock(void *ctx)
{
    (void)ctx;
    return g_now;
}

static void config(opprof_config *cfg, int aggregate, double inside, double outside)
{
    opprof_config_init(cfg);
    cfg->clock = fake_clock;
    cfg->aggregate = aggregate;
    cfg->overhead_inside_ns = inside;
    cfg->overhead_outside_ns = outside;
}

/* P [0, 100] holds C1 [10, 20] and C2 [30, 70], which holds G [50, 60]. */
static opprof_trace *record(const opprof_config *cfg)
{
    g_now = 0;
    assert_int_equal(opprof_start(cfg), OPPROF_OK);
    opprof_begin(&site_p);
    g_now = 10;
    opprof_begin(&site_c1);
    g_now = 20;
    opprof_end(&site_c1);
    g_now = 30;
    opprof_begin(&site_c2);
    g_now = 50;
    opprof_begin(&site_g);
    g_now = 60;
    opprof_end(&site_g);
    g_now = 70;
    opprof_end(&site_c2);
    g_now = 100;
    opprof_end(&site_p);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    return t;
}

/* Name's total and self time, ns. */
static void times_of(const opprof_trace *t, const char *name, int64_t *total, int64_t *self)
{
    opprof_key_averages *ka = NULL;
    assert_int_equal(opprof_key_averages(t, NULL, &ka), OPPROF_OK);
    int found = 0;
    for (size_t i = 0; i < opprof_key_averages_count(ka); i++) {
        opprof_avg_row r;
        assert_int_equal(opprof_key_averages_row(ka, i, &r), OPPROF_OK);
        if (strcmp(r.name, name)) continue;
        *total = r.cpu_time_total_ns;
        *self = r.self_cpu_time_total_ns;
        found = 1;
    }
    opprof_key_averages_free(ka);
    assert_true(found);
}

static char *table_of(const opprof_trace *t)
{
    opprof_key_averages *ka = NULL;
    assert_int_equal(opprof_key_averages(t, NULL, &ka), OPPROF_OK);
    char *s = NULL;
    assert_int_equal(opprof_table_string(ka, "cpu_time_total", -1, &s), OPPROF_OK);
    opprof_key_averages_free(ka);
    return s;
}

static void expect(const opprof_trace *t, const char *name, int64_t total, int64_t self)
{
    int64_t tt = -1, ss = -1;
    times_of(t, name, &tt, &ss);
    assert_int_equal(tt, total);
    assert_int_equal(ss, self);
}

static void test_sums_lose_the_inside_part_and_a_call_per_range_within(void **state)
{
    (void)state;
    opprof_config cfg;
    config(&cfg, 1, 2, 3); /* a call: 5 ns */
    opprof_trace *t = record(&cfg);
    /* C1 10-2, G 10-2, C2 40-2-5 (G within), P 100-2-3*5 (three within) */
    expect(t, "C1", 8, 8);
    expect(t, "G", 8, 8);
    expect(t, "C2", 33, 25);
    expect(t, "P", 83, 83 - 8 - 33);
    double in = -1, out = -1;
    assert_int_equal(opprof_trace_overhead_compensation(t, &in, &out), 1);
    assert_true(in == 2 && out == 3);
    char *s = table_of(t);
    assert_non_null(strstr(s, "Overhead compensation: 5.0 ns per recorded call taken out (2.0 ns of each range's own "
                              "time, 3.0 ns of its caller's)\n"));
    free(s);
    opprof_trace_free(t);
}

static void test_a_range_open_at_stop_is_compensated_too(void **state)
{
    (void)state;
    opprof_config cfg;
    config(&cfg, 1, 1, 1);
    g_now = 0;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    opprof_begin(&site_p);
    for (int i = 0; i < 4; i++) {
        g_now += 10;
        opprof_begin(&site_c1);
        g_now += 10;
        opprof_end(&site_c1);
    }
    g_now = 100; /* P still open: closed at stop */
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    expect(t, "C1", 4 * 9, 4 * 9);
    expect(t, "P", 100 - 1 - 4 * 2, 100 - 1 - 4 * 2 - 36);
    opprof_trace_free(t);
}

/* A streamed trace's tables are the same records summed: compensated the
 * same way (the file keeps the times as recorded). */
static void test_a_streamed_sessions_tables_are_compensated(void **state)
{
    (void)state;
    char dir[] = "/tmp/opprof_comp_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/t.json", dir);
    opprof_config cfg;
    config(&cfg, 0, 2, 3);
    cfg.stream_trace = path;
    opprof_trace *t = record(&cfg);
    assert_int_equal(opprof_trace_streamed(t), 1);
    expect(t, "C2", 33, 25);
    expect(t, "P", 83, 42);
    assert_int_equal(opprof_trace_overhead_compensation(t, NULL, NULL), 1);
    opprof_trace_free(t);
    assert_int_equal(opprof_trace_load(path, &t), OPPROF_OK);
    expect(t, "C2", 40, 30);
    opprof_trace_free(t);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

static void test_never_below_zero(void **state)
{
    (void)state;
    opprof_config cfg;
    config(&cfg, 1, 50, 50);
    opprof_trace *t = record(&cfg);
    expect(t, "C1", 0, 0);
    expect(t, "P", 0, 0);
    opprof_trace_free(t);
}

/* A calibration that takes out more per call than the calls cost leaves a
 * caller's children longer than the caller: its self time is 0, not a
 * wrapped negative (the table printed -61 ms for a 1000-call function). */
static void test_self_time_never_below_zero(void **state)
{
    (void)state;
    opprof_config cfg;
    config(&cfg, 1, 0, 28);
    opprof_trace *t = record(&cfg);
    /* C1 10, G 10, C2 40-28 = 12 (self 2), P 100-3*28 = 16 < C1 + C2 */
    expect(t, "C1", 10, 10);
    expect(t, "G", 10, 10);
    expect(t, "C2", 12, 2);
    expect(t, "P", 16, 0);
    char *s = table_of(t);
    for (const char *p = s; *p; p++) /* no negative number anywhere in it */
        if (p[0] == '-' && p[1] >= '0' && p[1] <= '9') fail_msg("a negative figure in the table:\n%s", s);
    free(s);
    opprof_trace_free(t);
}

/* The default, and a session that keeps events: the recorded times. */
static void test_api_sessions_and_events_keep_their_times(void **state)
{
    (void)state;
    opprof_config cfg;
    config(&cfg, 1, 0, 0);
    opprof_trace *t = record(&cfg);
    expect(t, "C2", 40, 30);
    expect(t, "P", 100, 50);
    assert_int_equal(opprof_trace_overhead_compensation(t, NULL, NULL), 0);
    char *s = table_of(t);
    assert_null(strstr(s, "Overhead compensation"));
    free(s);
    opprof_trace_free(t);

    config(&cfg, 0, 2, 3);
    t = record(&cfg);
    expect(t, "C2", 40, 30);
    expect(t, "P", 100, 50);
    assert_int_equal(opprof_trace_overhead_compensation(t, NULL, NULL), 0);
    opprof_trace_free(t);
}

static void test_bad_figures_are_refused(void **state)
{
    (void)state;
    opprof_config cfg;
    config(&cfg, 1, -1, 0);
    assert_int_equal(opprof_start(&cfg), OPPROF_E_INVAL);
    assert_non_null(strstr(opprof_last_error(), "overhead_inside_ns"));
    config(&cfg, 1, 0, NAN);
    assert_int_equal(opprof_start(&cfg), OPPROF_E_INVAL);
}

static volatile int g_sink;

static void bare(void *ctx)
{
    (void)ctx;
    g_sink++;
}

static void call(void *ctx)
{
    opprof_begin((const opprof_site *)ctx);
    g_sink++;
    opprof_end((const opprof_site *)ctx);
}

static void nothing(void *ctx)
{
    (void)ctx;
}

static void test_calibration_measures_a_call(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.aggregate = 1;
    double in = -1, out = -1;
    assert_int_equal(opprof_calibrate_overhead(&cfg, call, bare, (void *)&site_c1, &in, &out), OPPROF_OK);
    assert_true(in >= 0 && out >= 0);
    assert_true(in + out > 0);     /* two clock reads at least */
    assert_true(in + out < 100000); /* and not a preempted block's worth */
    cfg.aggregate = 0;             /* records, as a streamed session makes */
    assert_int_equal(opprof_calibrate_overhead(&cfg, call, bare, (void *)&site_c1, &in, &out), OPPROF_OK);
    assert_true(in + out > 0);
    /* A call that records nothing cannot be measured. */
    assert_int_equal(opprof_calibrate_overhead(&cfg, nothing, bare, NULL, &in, &out), OPPROF_E_INVAL);
    /* Not during a session. */
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    assert_int_equal(opprof_calibrate_overhead(&cfg, call, bare, (void *)&site_c1, &in, &out), OPPROF_E_ACTIVE);
    assert_int_equal(opprof_stop(NULL), OPPROF_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sums_lose_the_inside_part_and_a_call_per_range_within),
        cmocka_unit_test(test_a_range_open_at_stop_is_compensated_too),
        cmocka_unit_test(test_a_streamed_sessions_tables_are_compensated),
        cmocka_unit_test(test_never_below_zero),
        cmocka_unit_test(test_self_time_never_below_zero),
        cmocka_unit_test(test_api_sessions_and_events_keep_their_times),
        cmocka_unit_test(test_bad_figures_are_refused),
        cmocka_unit_test(test_calibration_measures_a_call),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Capture and session behaviour on one thread, with an injected clock so
 * that every duration is exact. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "opprof_trace.h"

static int64_t g_now;

static int64_t g_step, g_last; /* g_step: each read moves time on by that much */

static int64_t fake_clock(void *ctx)
{
    (void)ctx;
    int64_t v = g_now;
    g_now += g_step;
    g_last = v;
    return v;
}

static void start_fake(opprof_config *cfg)
{
    g_now = 1000;
    cfg->clock = fake_clock;
    assert_int_equal(opprof_start(cfg), OPPROF_OK);
}

static void start_plain(void)
{
    opprof_config cfg;
    opprof_config_init(&cfg);
    start_fake(&cfg);
}

static opprof_trace *stop_trace(void)
{
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_non_null(t);
    return t;
}

/* The index of the n-th event (0-based) with that name, -1 if absent. */
static long find(const opprof_trace *t, const char *name, int nth, opprof_event *out)
{
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        assert_int_equal(opprof_trace_event(t, i, &e), OPPROF_OK);
        if (strcmp(e.name, name) == 0 && nth-- == 0) {
            if (out) *out = e;
            return (long)i;
        }
    }
    return -1;
}

OPPROF_SITE(site_a, "A");
OPPROF_SITE(site_b, "B");
OPPROF_SITE(site_c, "C");
OPPROF_SITE(site_d, "D");

static void test_nesting_and_self_time_exact(void **state)
{
    (void)state;
    start_plain();
    g_now = 1000; opprof_begin(&site_a);
    g_now = 1010; opprof_begin(&site_b);
    g_now = 1040; assert_int_equal(opprof_end(&site_b), OPPROF_OK);
    g_now = 1050; opprof_begin(&site_c);
    g_now = 1060; opprof_begin(&site_d);
    g_now = 1065; assert_int_equal(opprof_end(&site_d), OPPROF_OK);
    g_now = 1070; assert_int_equal(opprof_end(&site_c), OPPROF_OK);
    g_now = 1100; assert_int_equal(opprof_end(&site_a), OPPROF_OK);
    g_now = 1200;
    opprof_trace *t = stop_trace();
    assert_int_equal(opprof_trace_event_count(t), 4);
    opprof_event a, b, c, d;
    long ia = find(t, "A", 0, &a), ic = find(t, "C", 0, &c);
    find(t, "B", 0, &b);
    find(t, "D", 0, &d);
    assert_int_equal(a.start_ns, 0);
    assert_int_equal(a.dur_ns, 100);
    assert_int_equal(a.self_ns, 100 - 30 - 20);
    assert_int_equal(a.parent, -1);
    assert_int_equal(a.depth, 0);
    assert_int_equal(b.start_ns, 10);
    assert_int_equal(b.dur_ns, 30);
    assert_int_equal(b.self_ns, 30);
    assert_int_equal(b.parent, ia);
    assert_int_equal(c.dur_ns, 20);
    assert_int_equal(c.self_ns, 15);
    assert_int_equal(c.parent, ia);
    assert_int_equal(d.parent, ic);
    assert_int_equal(d.depth, 2);
    assert_int_equal(d.self_ns, 5);
    assert_int_equal(a.category, OPPROF_CAT_CPU_OP);
    assert_int_equal(a.flags, 0);
    assert_int_equal(opprof_trace_dropped(t), 0);
    assert_string_equal(a.input_shapes, "");
    opprof_trace_free(t);
}

static void test_disabled_path_records_nothing(void **state)
{
    (void)state;
    assert_int_equal(opprof_is_active(), 0);
    opprof_begin(&site_a);
    opprof_record_memory((void *)0x10, 64);
    assert_int_equal(opprof_end(&site_a), OPPROF_OK);
    start_plain();
    g_now = 2000;
    opprof_trace *t = stop_trace();
    assert_int_equal(opprof_trace_event_count(t), 0);
    assert_int_equal(opprof_trace_dropped(t), 0);
    opprof_trace_free(t);
    /* after stop, recording is off again */
    opprof_begin(&site_a);
    assert_int_equal(opprof_end(&site_a), OPPROF_OK);
}

static void test_misuse_returns_documented_status(void **state)
{
    (void)state;
    opprof_trace *t = (opprof_trace *)&t;
    assert_int_equal(opprof_stop(&t), OPPROF_E_NO_SESSION);
    assert_null(t);
    assert_int_equal(opprof_step(), OPPROF_E_NO_SESSION);
    assert_int_equal(opprof_start(NULL), OPPROF_E_INVAL);
    assert_true(strlen(opprof_last_error()) > 0);

    opprof_config bad;
    opprof_config_init(&bad);
    bad.activities = 1u << 7;
    assert_int_equal(opprof_start(&bad), OPPROF_E_INVAL);
    assert_int_equal(opprof_is_active(), 0);

    start_plain();
    g_now = 1010; opprof_begin(&site_a);
    opprof_config again;
    opprof_config_init(&again);
    assert_int_equal(opprof_start(&again), OPPROF_E_ACTIVE);
    /* end without begin: an error, and nothing else changes */
    assert_int_equal(opprof_end(&site_b), OPPROF_E_UNBALANCED);
    g_now = 1020; assert_int_equal(opprof_end(&site_a), OPPROF_OK);
    assert_int_equal(opprof_end(&site_a), OPPROF_E_UNBALANCED);
    opprof_trace *tr = stop_trace();
    assert_int_equal(opprof_trace_event_count(tr), 1);
    opprof_event a;
    find(tr, "A", 0, &a);
    assert_int_equal(a.dur_ns, 10);
    assert_int_equal(a.flags, 0);
    opprof_trace_free(tr);

    /* the library's version is the header's (one build) */
    assert_string_equal(opprof_version(), OPPROF_VERSION_STRING);

    static const int codes[] = {OPPROF_E_INVAL, OPPROF_E_ACTIVE, OPPROF_E_NO_SESSION, OPPROF_E_NOMEM,
                                OPPROF_E_UNBALANCED, OPPROF_E_IO, OPPROF_E_PARSE, OPPROF_E_NODEV,
                                OPPROF_E_UNSUPPORTED, OPPROF_E_NOT_FOUND, OPPROF_E_RANGE};
    for (size_t i = 0; i < sizeof codes / sizeof *codes; i++) {
        assert_string_not_equal(opprof_strerror(codes[i]), opprof_strerror(9999));
        for (size_t j = 0; j < i; j++) assert_string_not_equal(opprof_strerror(codes[i]), opprof_strerror(codes[j]));
    }
}

static void test_ranges_open_at_stop_are_closed_and_flagged(void **state)
{
    (void)state;
    start_plain();
    g_now = 1100; opprof_begin(&site_a);
    g_now = 1200; opprof_begin(&site_b);
    g_now = 1500;
    opprof_trace *t = stop_trace();
    opprof_event a, b;
    assert_true(find(t, "A", 0, &a) >= 0);
    assert_true(find(t, "B", 0, &b) >= 0);
    assert_int_equal(a.dur_ns, 400);
    assert_int_equal(b.dur_ns, 300);
    assert_true(a.flags & OPPROF_EVENT_FORCED_END);
    assert_true(b.flags & OPPROF_EVENT_FORCED_END);
    opprof_trace_free(t);
    /* the next session starts clean on this thread */
    start_plain();
    g_now = 1001; opprof_begin(&site_c);
    g_now = 1003; assert_int_equal(opprof_end(&site_c), OPPROF_OK);
    assert_int_equal(opprof_end(&site_a), OPPROF_E_UNBALANCED);
    t = stop_trace();
    assert_int_equal(opprof_trace_event_count(t), 1);
    opprof_trace_free(t);
}

static void test_end_of_outer_range_closes_inner_ones(void **state)
{
    (void)state;
    start_plain();
    g_now = 1000; opprof_begin(&site_a);
    g_now = 1010; opprof_begin(&site_b);
    g_now = 1020; opprof_begin(&site_c);
    g_now = 1050; assert_int_equal(opprof_end(&site_a), OPPROF_OK);
    g_now = 1060; opprof_begin(&site_d);
    g_now = 1070; assert_int_equal(opprof_end(&site_d), OPPROF_OK);
    opprof_trace *t = stop_trace();
    opprof_event a, b, c, d;
    find(t, "A", 0, &a);
    find(t, "B", 0, &b);
    find(t, "C", 0, &c);
    find(t, "D", 0, &d);
    assert_int_equal(a.dur_ns, 50);
    assert_int_equal(a.flags, 0);
    assert_int_equal(b.dur_ns, 40);
    assert_int_equal(c.dur_ns, 30);
    assert_true(b.flags & OPPROF_EVENT_FORCED_END);
    assert_true(c.flags & OPPROF_EVENT_FORCED_END);
    assert_int_equal(d.parent, -1);
    assert_int_equal(d.flags, 0);
    opprof_trace_free(t);
}

static void test_cap_drops_and_counts_exactly(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.max_events = 100;
    start_fake(&cfg);
    for (int i = 0; i < 250; i++) {
        g_now += 2; opprof_begin(&site_a);
        g_now += 1; opprof_begin(&site_b);
        g_now += 1; assert_int_equal(opprof_end(&site_b), OPPROF_OK);
        g_now += 1; assert_int_equal(opprof_end(&site_a), OPPROF_OK);
    }
    opprof_trace *t = stop_trace();
    assert_int_equal(opprof_trace_event_count(t), 100);
    assert_int_equal(opprof_trace_dropped(t), 400);
    /* what was kept is intact: 50 A's each with one B child */
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        opprof_trace_event(t, i, &e);
        assert_int_equal(e.flags, 0);
        if (!strcmp(e.name, "A")) {
            assert_int_equal(e.dur_ns, 3);
            assert_int_equal(e.self_ns, 2);
        } else {
            assert_string_equal(e.name, "B");
            assert_int_equal(e.dur_ns, 1);
            assert_true(e.parent >= 0);
        }
    }
    opprof_trace_free(t);
}

/* At the cap, the range still open ends at the cap's time and says so: it
 * does not absorb the time of the children it could no longer record. The
 * dropped begins are counted by name. */
static void test_cap_closes_open_ranges_at_the_cap(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.max_events = 3;
    start_fake(&cfg);
    g_now = 1010; opprof_begin(&site_a);
    g_now = 1020; opprof_begin(&site_b);
    g_now = 1030; assert_int_equal(opprof_end(&site_b), OPPROF_OK);
    g_now = 1040; opprof_begin(&site_b);
    g_now = 1050; assert_int_equal(opprof_end(&site_b), OPPROF_OK);
    g_now = 1060; opprof_begin(&site_b); /* the cap: dropped, and A ends here */
    g_now = 1070; assert_int_equal(opprof_end(&site_b), OPPROF_OK);
    for (int i = 0; i < 10; i++) {
        g_now += 100; opprof_begin(&site_b);
        g_now += 100; assert_int_equal(opprof_end(&site_b), OPPROF_OK);
    }
    g_now = 5000; assert_int_equal(opprof_end(&site_a), OPPROF_OK);
    g_now = 5010; opprof_begin(&site_c);
    g_now = 5020; assert_int_equal(opprof_end(&site_c), OPPROF_OK);
    opprof_trace *t = stop_trace();
    assert_int_equal(opprof_trace_event_count(t), 3);
    assert_int_equal(opprof_trace_dropped(t), 12);
    opprof_event a;
    assert_true(find(t, "A", 0, &a) >= 0);
    assert_int_equal(a.dur_ns, 50);
    assert_int_equal(a.self_ns, 30);
    assert_int_equal(a.flags, OPPROF_EVENT_FORCED_END | OPPROF_EVENT_CAPPED);
    opprof_event b;
    assert_true(find(t, "B", 1, &b) >= 0);
    assert_int_equal(b.flags, 0);
    const char *names[4];
    uint64_t calls[4];
    assert_int_equal(opprof_trace_top_calls(t, 4, names, calls), 3);
    assert_string_equal(names[0], "B");
    assert_int_equal(calls[0], 13);
    assert_string_equal(names[1], "A");
    assert_int_equal(calls[1], 1);
    assert_string_equal(names[2], "C");
    assert_int_equal(calls[2], 1);
    assert_int_equal(opprof_trace_top_calls(t, 1, names, calls), 1);
    assert_string_equal(names[0], "B");
    char *note = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&note, &len);
    assert_int_equal(opprof_trace_drop_note(t, "x", "--max-events", "--exclude", f), OPPROF_OK);
    fclose(f);
    assert_string_equal(note, "x: 12 of 15 events were dropped: the event cap was reached (raise it with --max-events)\n"
                              "x: the most calls: B (13), A (1), C (1)\n"
                              "x: to leave them out: --exclude 'B,A,C'\n");
    free(note);
    opprof_trace_free(t);
    /* The next session starts with no cap reached and nothing dropped. */
    start_plain();
    g_now = 2000; opprof_begin(&site_a);
    g_now = 2100; assert_int_equal(opprof_end(&site_a), OPPROF_OK);
    t = stop_trace();
    assert_int_equal(opprof_trace_dropped(t), 0);
    assert_true(find(t, "A", 0, &a) >= 0);
    assert_int_equal(a.dur_ns, 100);
    assert_int_equal(a.flags, 0);
    assert_int_equal(opprof_trace_top_calls(t, 4, names, calls), 1);
    f = open_memstream(&note, &len);
    assert_int_equal(opprof_trace_drop_note(t, "x", "--max-events", "--exclude", f), OPPROF_OK);
    fclose(f);
    assert_string_equal(note, ""); /* nothing dropped, nothing said */
    free(note);
    opprof_trace_free(t);
}

static __attribute__((noinline)) int first_called(int x)
{
    return x * 3 + 1;
}

/* The first call into a function under -finstrument-functions looks its
 * symbol up (opprof_function_site, milliseconds with libdw): that time is
 * taken out of the thread's timeline, so neither the caller's self time nor
 * any enclosing range's time includes it. Here the lookup "takes" 1 ms of
 * the injected clock. */
static void test_first_call_lookup_is_not_charged_to_the_caller(void **state)
{
    (void)state;
    start_plain();
    g_now = 1000; opprof_begin(&site_a); /* left open: closed at stop */
    g_now = 1010; opprof_begin(&site_b); /* the caller */
    g_now = 1020;
    g_step = 1000000;
    const opprof_site *s = opprof_function_site((const void *)first_called);
    g_step = 0;
    g_now = g_last; /* time goes on from the lookup's end */
    assert_non_null(s);
    assert_true(g_now >= 1020 + 1000000);
    g_now += 10; opprof_begin(s);
    g_now += 10; assert_int_equal(opprof_end(s), OPPROF_OK);
    g_now += 10; assert_int_equal(opprof_end(&site_b), OPPROF_OK);
    /* A function already known: no lookup, nothing taken out. */
    g_now += 10;
    assert_true(opprof_function_site((const void *)first_called) == s);
    g_now += 10;
    opprof_trace *t = stop_trace();
    assert_int_equal(first_called(1), 4);
    opprof_event a, b, f;
    assert_true(find(t, "B", 0, &b) >= 0);
    assert_true(find(t, s->name, 0, &f) >= 0);
    assert_true(find(t, "A", 0, &a) >= 0);
    assert_int_equal(b.dur_ns, 40);
    assert_int_equal(b.self_ns, 30);
    assert_int_equal(f.dur_ns, 10);
    assert_int_equal(f.start_ns - b.start_ns, 20);
    assert_int_equal(a.dur_ns, 70);
    assert_int_equal(a.flags, OPPROF_EVENT_FORCED_END);
    opprof_trace_free(t);
}

static void test_depth_past_limit_is_dropped_and_balanced(void **state)
{
    (void)state;
    start_plain();
    for (int i = 0; i < 300; i++) {
        g_now++;
        opprof_begin(&site_a);
    }
    for (int i = 0; i < 300; i++) {
        g_now++;
        assert_int_equal(opprof_end(&site_a), OPPROF_OK);
    }
    opprof_trace *t = stop_trace();
    assert_int_equal(opprof_trace_event_count(t), 256);
    assert_int_equal(opprof_trace_dropped(t), 44);
    opprof_event e;
    find(t, "A", 0, &e);
    assert_int_equal(e.dur_ns, 599);
    assert_int_equal(e.flags, 0);
    opprof_trace_free(t);
}

static int early_return(int x)
{
    OPPROF_SCOPE("scoped");
    g_now += 7;
    if (x) return 1;
    g_now += 100;
    return 0;
}

static void test_scope_macro_ends_on_early_return(void **state)
{
    (void)state;
    start_plain();
    assert_int_equal(early_return(1), 1);
    assert_int_equal(early_return(0), 0);
    g_now += 5;
    opprof_trace *t = stop_trace();
    opprof_event e0, e1;
    assert_true(find(t, "scoped", 0, &e0) >= 0);
    assert_true(find(t, "scoped", 1, &e1) >= 0);
    assert_int_equal(e0.dur_ns, 7);
    assert_int_equal(e1.dur_ns, 107);
    assert_int_equal(e0.flags | e1.flags, 0);
    opprof_trace_free(t);
}

static uint64_t mm_flops(const opprof_input *in, unsigned n)
{
    if (n < 2 || in[0].ndim != 2 || in[1].ndim != 2) return 0;
    return 2ull * (uint64_t)in[0].dims[0] * (uint64_t)in[0].dims[1] * (uint64_t)in[1].dims[1];
}

static const opprof_site site_mm = OPPROF_SITE_INIT("aten::mm", OPPROF_CAT_CPU_OP, mm_flops);

static void record_inputs(void)
{
    opprof_input conv[3] = {
        {OPPROF_DTYPE_FLOAT, 4, {5, 3, 224, 224}},
        {OPPROF_DTYPE_FLOAT, 4, {64, 3, 7, 7}},
        {OPPROF_DTYPE_NONE, 0, {0}},
    };
    g_now += 10; opprof_begin_inputs(&site_a, conv, 3);
    g_now += 10; opprof_end(&site_a);
    opprof_input mm[2] = {{OPPROF_DTYPE_FLOAT, 2, {4, 8}}, {OPPROF_DTYPE_FLOAT, 2, {8, 16}}};
    g_now += 10; opprof_begin_inputs(&site_mm, mm, 2);
    g_now += 10; opprof_end(&site_mm);
    g_now += 10; opprof_begin_inputs(&site_mm, mm, 2);
    g_now += 10; opprof_end_flops(&site_mm, 12345);
    opprof_input sc[2] = {{OPPROF_DTYPE_INT64, 1, {3}}, {OPPROF_DTYPE_SCALAR, 0, {0}}};
    g_now += 10; opprof_begin_inputs(&site_b, sc, 2);
    g_now += 10; opprof_end(&site_b);
}

static void test_shapes_recorded_only_with_record_shapes(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.record_shapes = 1;
    start_fake(&cfg);
    record_inputs();
    opprof_trace *t = stop_trace();
    opprof_event a, mm, b;
    find(t, "A", 0, &a);
    find(t, "aten::mm", 0, &mm);
    find(t, "B", 0, &b);
    assert_string_equal(a.input_shapes, "[[5, 3, 224, 224], [64, 3, 7, 7], []]");
    assert_string_equal(a.input_types, "[\"float\", \"float\", \"\"]");
    assert_string_equal(mm.input_shapes, "[[4, 8], [8, 16]]");
    assert_string_equal(b.input_shapes, "[[3], []]");
    assert_string_equal(b.input_types, "[\"long int\", \"Scalar\"]");
    assert_int_equal(a.dur_ns, 10);
    assert_int_equal(mm.flops, 0); /* with_flops is off */
    opprof_trace_free(t);

    start_plain();
    record_inputs();
    t = stop_trace();
    find(t, "A", 0, &a);
    assert_string_equal(a.input_shapes, "");
    assert_int_equal(a.dur_ns, 10);
    opprof_trace_free(t);
}

static void test_flops_from_hook_and_from_end(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.with_flops = 1;
    start_fake(&cfg);
    record_inputs();
    g_now += 10; opprof_begin(&site_mm); /* no inputs: the hook sees none */
    g_now += 10; opprof_end(&site_mm);
    opprof_trace *t = stop_trace();
    opprof_event e;
    find(t, "aten::mm", 0, &e);
    assert_int_equal(e.flops, 2 * 4 * 8 * 16);
    assert_string_equal(e.input_shapes, ""); /* shapes were not asked for */
    find(t, "aten::mm", 1, &e);
    assert_int_equal(e.flops, 12345);
    find(t, "aten::mm", 2, &e);
    assert_int_equal(e.flops, 0);
    assert_int_equal(e.dur_ns, 10);
    find(t, "A", 0, &e);
    assert_int_equal(e.flops, 0);
    opprof_trace_free(t);
}

static void test_annotations_are_interned_user_ranges(void **state)
{
    (void)state;
    const opprof_site *s1 = opprof_intern("train_step", OPPROF_CAT_USER_ANNOTATION);
    const opprof_site *s2 = opprof_intern("train_step", OPPROF_CAT_USER_ANNOTATION);
    const opprof_site *s3 = opprof_intern("train_step", OPPROF_CAT_CPU_OP);
    assert_non_null(s1);
    assert_ptr_equal(s1, s2);
    assert_ptr_not_equal(s1, s3);
    assert_null(opprof_intern(NULL, 0));
    start_plain();
    char name[32];
    strcpy(name, "train_step");
    g_now += 1; const opprof_site *h = opprof_annotation_begin(name);
    strcpy(name, "overwritten"); /* the profiler kept its own copy */
    g_now += 3; opprof_begin(&site_a);
    g_now += 3; opprof_end(&site_a);
    g_now += 3; assert_int_equal(opprof_end(h), OPPROF_OK);
    opprof_trace *t = stop_trace();
    opprof_event e;
    assert_true(find(t, "train_step", 0, &e) >= 0);
    assert_int_equal(e.category, OPPROF_CAT_USER_ANNOTATION);
    assert_int_equal(e.dur_ns, 9);
    assert_int_equal(e.self_ns, 6);
    assert_string_equal(opprof_category_name(e.category), "user_annotation");
    opprof_trace_free(t);
}

/* A NULL site is refused where it is given, with a reason, and the session
 * goes on; stop used to crash reading the NULL site's name. A later failure
 * replaces the reason: opprof_last_error never describes an older one. */
static void test_null_site_refused_at_record_time(void **state)
{
    (void)state;
    static const opprof_input in[1] = {{OPPROF_DTYPE_FLOAT, 1, {4}}};
    static const opprof_arg args[1] = {{"k", OPPROF_ARG_INT, {.i = 1}}};
    start_plain();
    g_now = 1010; opprof_begin(&site_a);
    opprof_begin(NULL);
    assert_non_null(strstr(opprof_last_error(), "NULL site"));
    (opprof_begin)(NULL); /* the exported function too, not just the inline one */
    opprof_begin_inputs(NULL, in, 1);
    opprof_begin_args(NULL, args, 1);
    opprof_begin_inputs_args(NULL, in, 1, args, 1);
    assert_int_equal(opprof_end(NULL), OPPROF_E_INVAL);
    assert_non_null(strstr(opprof_last_error(), "NULL site"));
    assert_int_equal(opprof_end_flops(NULL, 5), OPPROF_E_INVAL);
    assert_int_equal(opprof_end_args(NULL, args, 1), OPPROF_E_INVAL);
    /* the wrong site: a fresh reason naming it, not the NULL one */
    assert_int_equal(opprof_end(&site_b), OPPROF_E_UNBALANCED);
    assert_non_null(strstr(opprof_last_error(), "\"B\" is not open"));
    g_now = 1020; assert_int_equal(opprof_end(&site_a), OPPROF_OK);
    opprof_trace *tr = stop_trace();
    assert_int_equal(opprof_trace_event_count(tr), 1);
    opprof_event a;
    find(tr, "A", 0, &a);
    assert_int_equal(a.dur_ns, 10);
    assert_int_equal(a.flags, 0);
    opprof_trace_free(tr);

    /* with shapes, flops and stacks on, begin takes its other path */
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.record_shapes = cfg.with_flops = cfg.with_stack = 1;
    start_fake(&cfg);
    opprof_begin_inputs(NULL, in, 1);
    opprof_begin(NULL);
    tr = stop_trace();
    assert_int_equal(opprof_trace_event_count(tr), 0);
    opprof_trace_free(tr);
}

/* Sizes that no allocation has are refused, not recorded as -1 or wrapped. */
static void test_memory_sizes_out_of_range_refused(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.profile_memory = 1;
    start_fake(&cfg);
    g_now += 1; opprof_begin(&site_a);
    opprof_record_memory(NULL, INT64_MIN);
    assert_non_null(strstr(opprof_last_error(), "out of range"));
    opprof_record_alloc((void *)0x1000, UINT64_MAX);
    assert_non_null(strstr(opprof_last_error(), "opprof_record_alloc"));
    opprof_record_realloc(NULL, (void *)0x2000, (uint64_t)INT64_MAX + 1);
    assert_non_null(strstr(opprof_last_error(), "opprof_record_realloc"));
    opprof_record_free((void *)0x1000); /* never recorded: an unknown free */
    opprof_record_alloc((void *)0x3000, 100);
    g_now += 1; opprof_end(&site_a);
    opprof_trace *t = stop_trace();
    opprof_event a;
    find(t, "A", 0, &a);
    assert_int_equal(a.self_cpu_memory_usage, 100);
    assert_int_equal(a.cpu_memory_usage, 100);
    opprof_trace_free(t);
}

static void test_memory_events_attributed_to_open_operator(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.profile_memory = 1;
    start_fake(&cfg);
    g_now += 1; opprof_record_memory((void *)0x100, 1000); /* outside any operator */
    g_now += 1; opprof_begin(&site_a);
    g_now += 1; opprof_record_memory((void *)0x200, 64);
    g_now += 1; opprof_begin(&site_b);
    g_now += 1; opprof_record_memory((void *)0x300, 4096);
    g_now += 1; opprof_record_memory((void *)0x200, -64);
    g_now += 1; opprof_end(&site_b);
    g_now += 1; opprof_end(&site_a);
    opprof_trace *t = stop_trace();
    assert_int_equal(opprof_trace_event_count(t), 2);
    opprof_event a, b;
    find(t, "A", 0, &a);
    find(t, "B", 0, &b);
    assert_int_equal(b.self_cpu_memory_usage, 4096 - 64);
    assert_int_equal(b.cpu_memory_usage, 4096 - 64);
    assert_int_equal(a.self_cpu_memory_usage, 64);
    assert_int_equal(a.cpu_memory_usage, 4096);
    opprof_trace_free(t);

    /* without profile_memory nothing is kept */
    start_plain();
    g_now += 1; opprof_begin(&site_a);
    opprof_record_memory((void *)0x200, 64);
    g_now += 1; opprof_end(&site_a);
    t = stop_trace();
    find(t, "A", 0, &a);
    assert_int_equal(a.cpu_memory_usage, 0);
    opprof_trace_free(t);
}

static struct {
    int calls;
    size_t events;
    void *user;
} g_ready;

static void on_ready(const opprof_trace *t, void *user)
{
    g_ready.calls++;
    g_ready.events = opprof_trace_event_count(t);
    g_ready.user = user;
}

static void test_on_trace_ready_called_at_stop(void **state)
{
    (void)state;
    memset(&g_ready, 0, sizeof g_ready);
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.on_trace_ready = on_ready;
    cfg.user = &g_ready;
    start_fake(&cfg);
    g_now += 1; opprof_begin(&site_a);
    g_now += 1; opprof_end(&site_a);
    assert_int_equal(opprof_step(), OPPROF_OK);
    assert_int_equal(opprof_step_num(), 1);
    assert_int_equal(g_ready.calls, 0);
    assert_int_equal(opprof_stop(NULL), OPPROF_OK);
    assert_int_equal(g_ready.calls, 1);
    assert_int_equal(g_ready.events, 1);
    assert_ptr_equal(g_ready.user, &g_ready);
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The built-in clock, converted after the session, agrees with
 * CLOCK_MONOTONIC read just outside the range (however long a loaded machine
 * makes the sleep). */
static void test_real_clock_measures_sleep(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    int64_t before = mono_ns();
    opprof_begin(&site_a);
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    opprof_end(&site_a);
    int64_t after = mono_ns();
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    opprof_event a;
    find(t, "A", 0, &a);
    assert_true(a.dur_ns >= 20 * 1000 * 1000);
    /* within the outer reading, allowing 0.1% for the calibration */
    assert_true(a.dur_ns <= (after - before) + (after - before) / 1000);
    assert_true(opprof_trace_base_time_ns(t) > (int64_t)1600000000 * 1000000000);
    opprof_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nesting_and_self_time_exact),
        cmocka_unit_test(test_disabled_path_records_nothing),
        cmocka_unit_test(test_misuse_returns_documented_status),
        cmocka_unit_test(test_ranges_open_at_stop_are_closed_and_flagged),
        cmocka_unit_test(test_end_of_outer_range_closes_inner_ones),
        cmocka_unit_test(test_cap_drops_and_counts_exactly),
        cmocka_unit_test(test_cap_closes_open_ranges_at_the_cap),
        cmocka_unit_test(test_first_call_lookup_is_not_charged_to_the_caller),
        cmocka_unit_test(test_depth_past_limit_is_dropped_and_balanced),
        cmocka_unit_test(test_scope_macro_ends_on_early_return),
        cmocka_unit_test(test_shapes_recorded_only_with_record_shapes),
        cmocka_unit_test(test_flops_from_hook_and_from_end),
        cmocka_unit_test(test_annotations_are_interned_user_ranges),
        cmocka_unit_test(test_null_site_refused_at_record_time),
        cmocka_unit_test(test_memory_sizes_out_of_range_refused),
        cmocka_unit_test(test_memory_events_attributed_to_open_operator),
        cmocka_unit_test(test_on_trace_ready_called_at_stop),
        cmocka_unit_test(test_real_clock_measures_sleep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* One recording script for the tests of sums (test_aggregate.c) and of
 * streamed traces (test_stream.c): every shape of nesting the event path
 * handles, under an injected clock (fake_clock) so that two sessions that
 * run it record the same times; and the threads both run, with the
 * count of a name in a trace's key averages. Include after cmocka.h. */
#ifndef OPPROF_TESTS_AGG_SCRIPT_H
#define OPPROF_TESTS_AGG_SCRIPT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opprof_trace.h"

static int64_t g_now, g_step, g_last;

static int64_t fake_clock(void *ctx)
{
    (void)ctx;
    int64_t v = g_now;
    g_now += g_step;
    g_last = v;
    return v;
}

OPPROF_SITE(site_a, "A");
OPPROF_SITE(site_b, "B");
OPPROF_SITE(site_b2, "B"); /* another site, the same name: one row */
OPPROF_SITE(site_c, "C");

/* 2 * product of the first input's dims: known for any shape. */
static uint64_t mm_flops(const opprof_input *in, unsigned n)
{
    uint64_t f = n ? 2 : 0;
    for (unsigned i = 0; n && i < in[0].ndim; i++) f *= (uint64_t)in[0].dims[i];
    return f;
}

static const opprof_site site_mm = OPPROF_SITE_INIT("mm", OPPROF_CAT_CPU_OP, mm_flops);
static char g_blocks[8][64];

static __attribute__((noinline)) int looked_up(int x)
{
    return x * 5 + 2;
}

/* Every shape of nesting the event path handles: siblings, recursion, two
 * sites of one name, an end that closes the ranges above it, args and
 * inputs (not part of a name's sums), an annotation, a first-call lookup,
 * and a range still open at stop. */
static void script(void)
{
    opprof_input in[1] = {{OPPROF_DTYPE_FLOAT, 2, {4, 8}}};
    opprof_input in2[2] = {{OPPROF_DTYPE_FLOAT, 3, {2, 3, 5}}, {OPPROF_DTYPE_INT64, 0, {0}}};
    opprof_arg args[1] = {{"k", OPPROF_ARG_INT, {.i = 3}}};
    for (int i = 0; i < 3; i++) {
        g_now += 7; opprof_begin(&site_a);
        g_now += 3; opprof_begin(&site_b);
        g_now += 5; opprof_begin(&site_c);
        g_now += 11; opprof_end(&site_c);
        g_now += 2; opprof_end(&site_b);
        g_now += 1; i % 2 ? opprof_begin_inputs(&site_b2, in, 1) : opprof_begin_inputs(&site_b2, in2, 2);
        g_now += 4; opprof_begin_args(&site_a, args, 1); /* recursion */
        g_now += 6; opprof_end(&site_a);
        g_now += 1; opprof_end(&site_b2);
        g_now += 2; opprof_end(&site_a);
    }
    /* Memory outside every range (the [memory] row), inside, freed in a
     * parent; FLOPs from the hook, from opprof_end_flops, and none. */
    g_now += 2; opprof_record_alloc(g_blocks[0], 100);
    g_now += 2; opprof_begin(&site_a);
    g_now += 2; opprof_record_alloc(g_blocks[1], 1000);
    g_now += 2; opprof_begin_inputs(&site_mm, in, 1);
    g_now += 2; opprof_record_alloc(g_blocks[2], 64);
    g_now += 2; opprof_end(&site_mm);
    g_now += 2; opprof_begin_inputs(&site_mm, in, 1);
    g_now += 2; opprof_end_flops(&site_mm, 12345);
    g_now += 2; opprof_begin(&site_mm); /* no inputs: the hook gets none */
    g_now += 2; opprof_end(&site_mm);
    g_now += 2; opprof_record_free(g_blocks[2]);
    g_now += 2; opprof_end(&site_a);
    g_now += 2; opprof_record_free(g_blocks[1]);
    const opprof_site *ann = opprof_annotation_begin("step work");
    g_now += 5; opprof_begin(&site_b);
    g_now += 5; opprof_begin(&site_c);
    g_now += 5; opprof_end(&site_b); /* closes C too, forced */
    g_now += 5; opprof_end(ann);
    /* A lookup taking 1 ms of the clock inside B: taken out of B. */
    g_now += 3; opprof_begin(&site_b);
    g_now += 3;
    g_step = 1000000;
    const opprof_site *f = opprof_function_site((const void *)looked_up);
    g_step = 0;
    g_now = g_last;
    assert_non_null(f);
    g_now += 4; opprof_begin(f);
    g_now += 4; opprof_end(f);
    g_now += 4; opprof_end(&site_b);
    g_now += 9; opprof_begin(&site_a); /* open at stop */
    g_now += 9; opprof_begin(&site_c);
    g_now += 9; opprof_record_alloc(g_blocks[3], 7);
    g_now += 9; opprof_end(&site_c);
    g_now += 9; opprof_begin_inputs(&site_mm, in, 1); /* open at stop too, with its memory and FLOPs */
    g_now += 9; opprof_record_alloc(g_blocks[4], 9);
    g_now += 9;
    opprof_record_free(g_blocks[0]);
    opprof_record_free(g_blocks[3]);
    opprof_record_free(g_blocks[4]);
}

/* A session of cfg (its clock made fake_clock) that runs the script. */
static void (*g_after_script)(void); /* run after script() by script_session, when set */

static opprof_trace *script_session(opprof_config *cfg)
{
    cfg->clock = fake_clock;
    g_now = 1000;
    g_step = 0;
    assert_int_equal(opprof_start(cfg), OPPROF_OK);
    script();
    if (g_after_script) g_after_script();
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_non_null(t);
    return t;
}

/* t's key averages as the table text, every row. */
static char *table_of(const opprof_trace *t, const opprof_avg_options *opt, const char *sort)
{
    opprof_key_averages *ka = NULL;
    assert_int_equal(opprof_key_averages(t, opt, &ka), OPPROF_OK);
    char *text = NULL;
    assert_int_equal(opprof_table_string(ka, sort, -1, &text), OPPROF_OK);
    opprof_key_averages_free(ka);
    return text;
}

static int g_per_thread = 20000; /* worker's pairs of ranges */

/* A then B inside it, g_per_thread times, then C left open at its exit. */
static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < g_per_thread; i++) {
        opprof_begin(&site_a);
        opprof_begin(&site_b);
        opprof_end(&site_b);
        opprof_end(&site_a);
    }
    opprof_begin(&site_c); /* open at exit: closed there */
    return NULL;
}

/* A then B inside it until *arg (an int) becomes nonzero. */
static void *until_stopped(void *arg)
{
    volatile int *stop = arg;
    while (!__atomic_load_n(stop, __ATOMIC_RELAXED)) {
        opprof_begin(&site_a);
        opprof_begin(&site_b);
        opprof_end(&site_b);
        opprof_end(&site_a);
    }
    return NULL;
}

static uint64_t count_of(const opprof_trace *t, const char *name)
{
    opprof_key_averages *ka = NULL;
    assert_int_equal(opprof_key_averages(t, NULL, &ka), OPPROF_OK);
    uint64_t n = 0;
    for (size_t i = 0; i < opprof_key_averages_count(ka); i++) {
        opprof_avg_row r;
        assert_int_equal(opprof_key_averages_row(ka, i, &r), OPPROF_OK);
        if (!strcmp(r.name, name)) n = r.count;
    }
    opprof_key_averages_free(ka);
    return n;
}

#endif

/* The event store's layout: a 40-byte hot event for every event, a cold
 * part only for the events that have shapes, args, stacks, FLOPs, ids or
 * memory and device sums; ordering in place; depth counted along parents;
 * the thread limit; and a live session large enough that the collector
 * gives back the pages of the chunks it has decoded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "capture/evstore.h"
#include "model/model.h"
#include "opprof_trace.h"

static op_event *add(opprof_trace *t, uint32_t th, const char *name, int64_t s, int64_t d)
{
    op_event *e = op_trace_add_event(t, th, op_trace_intern(t, name, strlen(name)), OPPROF_CAT_CPU_OP, s, d);
    assert_non_null(e);
    return e;
}

static void test_hot_event_is_40_bytes(void **state)
{
    (void)state;
    assert_int_equal(sizeof(op_event), 40);
}

/* Events with nothing beyond times and names have no cold part; memory
 * attributed to an event gives it and its parents one, nobody else. */
static void test_cold_part_only_where_set(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    uint32_t th = (uint32_t)op_trace_thread(t, 1, 1);
    add(t, th, "outer", 0, 100);
    add(t, th, "plain", 10, 10);
    op_evx *x = op_evx_add(t, add(t, th, "mm", 30, 10));
    assert_non_null(x);
    x->flops = 77;
    add(t, th, "alloc", 50, 10);
    add(t, th, "other", 200, 10);
    assert_non_null(op_trace_add_mem(t, th, 55, 0x10, 256));
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    assert_int_equal(t->nev, 5);
    assert_int_equal(t->nevx, 3); /* mm (flops), alloc (its memory), outer (memory below it) */
    const char *cold[] = {"outer", "mm", "alloc"};
    for (size_t i = 0; i < t->nev; i++) {
        const char *name = op_strtab_get(&t->str, t->ev[i].name);
        int want = 0;
        for (int k = 0; k < 3; k++) want |= !strcmp(name, cold[k]);
        assert_int_equal(t->ev[i].x != 0, want);
        opprof_event e;
        assert_int_equal(opprof_trace_event(t, i, &e), OPPROF_OK);
        if (!strcmp(name, "plain") || !strcmp(name, "other")) {
            const op_evx *none = op_evx_of(t, &t->ev[i]);
            assert_true(!none->flops && !none->mem_total && !none->shapes && !none->stack);
            assert_int_equal(e.cpu_memory_usage, 0);
            assert_string_equal(e.input_shapes, "");
        }
        if (!strcmp(name, "mm")) assert_int_equal(e.flops, 77);
        if (!strcmp(name, "alloc")) assert_int_equal(e.self_cpu_memory_usage, 256);
        if (!strcmp(name, "outer")) {
            assert_int_equal(e.cpu_memory_usage, 256);
            assert_int_equal(e.self_cpu_memory_usage, 0);
        }
    }
    opprof_trace_free(t);
}

/* Reordering in place follows every cycle of the permutation: 1000 events
 * given in a scrambled order come out by start, each with its own cold part,
 * and a memory event placed by the producer follows its event. */
static void test_scrambled_input_reordered_in_place(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    uint32_t th = (uint32_t)op_trace_thread(t, 1, 1);
    int32_t given = -1;
    for (int i = 0; i < 1000; i++) {
        int k = (i * 7919) % 1000; /* 7919 is prime: a permutation of 0..999 */
        char name[16];
        snprintf(name, sizeof name, "e%d", k);
        op_event *e = add(t, th, name, (int64_t)k * 10, 5);
        if (k % 3 == 0) op_evx_add(t, e)->flops = (uint64_t)k + 1;
        if (k == 500) given = i;
    }
    op_mem_event *m = op_trace_add_mem(t, th, 5002, 0x10, 64);
    assert_non_null(m);
    m->enclosing = given;
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    for (int j = 0; j < 1000; j++) {
        char name[16];
        snprintf(name, sizeof name, "e%d", j);
        assert_int_equal(t->ev[j].start_ns, (int64_t)j * 10);
        assert_int_equal(op_evx_of(t, &t->ev[j])->flops, j % 3 == 0 ? (uint64_t)j + 1 : 0);
        assert_string_equal(op_strtab_get(&t->str, t->ev[j].name), name);
    }
    assert_int_equal(t->mem[0].op, 500);
    assert_int_equal(op_evx_of(t, &t->ev[500])->mem_self, 64);
    opprof_trace_free(t);
}

/* A few ordered runs, as a live session of several threads gives them, are
 * merged: each thread's events interleave by start, and events equal in
 * start and length keep the order they were added in. */
static void test_ordered_runs_merged(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    enum { RUNS = 4, PER = 40000 }; /* runs long enough to give back pages while merging */
    for (int r = 0; r < RUNS; r++) {
        uint32_t th = (uint32_t)op_trace_thread(t, 1, r + 1);
        for (int i = 0; i < PER; i++) {
            char name[24];
            snprintf(name, sizeof name, "r%d_%d", r, i);
            /* run r's events start at 4i + r, so the runs interleave; every
             * 50th starts at 4i in every run: a tie across the runs */
            int64_t s = i % 50 == 0 ? (int64_t)i * 4 : (int64_t)i * 4 + r;
            op_event *e = add(t, th, name, s, 1);
            op_evx_add(t, e)->flops = (uint64_t)(r * PER + i);
        }
    }
    /* a memory event its producer placed in run 2's 123rd event follows it */
    op_mem_event *m = op_trace_add_mem(t, t->ev[2 * PER + 123].thread, t->ev[2 * PER + 123].start_ns, 0x20, 64);
    assert_non_null(m);
    m->enclosing = 2 * PER + 123;
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    assert_int_equal(t->nev, RUNS * PER);
    assert_string_equal(op_strtab_get(&t->str, t->ev[t->mem[0].op].name), "r2_123");
    assert_int_equal(op_evx_of(t, &t->ev[t->mem[0].op])->mem_self, 64);
    for (size_t j = 1; j < t->nev; j++) {
        const op_event *a = &t->ev[j - 1], *b = &t->ev[j];
        assert_true(a->start_ns <= b->start_ns);
        const op_evx *ax = op_evx_of(t, a), *bx = op_evx_of(t, b);
        if (a->start_ns == b->start_ns) assert_true(ax->flops < bx->flops); /* added earlier, placed earlier */
        /* the cold part followed its event */
        char name[24];
        snprintf(name, sizeof name, "r%d_%d", (int)(bx->flops / PER), (int)(bx->flops % PER));
        assert_string_equal(op_strtab_get(&t->str, b->name), name);
        assert_int_equal(t->threads[b->thread].tid, (int64_t)(bx->flops / PER) + 1);
    }
    opprof_trace_free(t);
}

/* Equal events keep the order they were added in (the sort is stable). */
static void test_equal_events_keep_their_order(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    uint32_t th = (uint32_t)op_trace_thread(t, 1, 1), th2 = (uint32_t)op_trace_thread(t, 1, 2);
    add(t, th, "late", 100, 5);
    add(t, th2, "second", 0, 10);
    add(t, th, "first", 0, 10);
    add(t, th2, "third", 0, 10);
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    const char *want[] = {"second", "first", "third", "late"};
    for (int i = 0; i < 4; i++) assert_string_equal(op_strtab_get(&t->str, t->ev[i].name), want[i]);
    opprof_trace_free(t);
}

static void test_depth_counted_along_parents(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    uint32_t th = (uint32_t)op_trace_thread(t, 1, 1);
    char name[8];
    for (int d = 0; d < 6; d++) {
        snprintf(name, sizeof name, "d%d", d);
        add(t, th, name, d, 100 - 2 * d);
    }
    add(t, th, "next", 200, 1);
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    for (size_t i = 0; i < t->nev; i++) {
        opprof_event e;
        assert_int_equal(opprof_trace_event(t, i, &e), OPPROF_OK);
        unsigned want = !strcmp(e.name, "next") ? 0 : (unsigned)(e.name[1] - '0');
        assert_int_equal(e.depth, want);
        assert_int_equal(op_event_depth(t, &t->ev[i]), want);
    }
    opprof_trace_free(t);
}

/* The hot event holds a thread index of 20 bits: the model refuses the
 * thread past them with a clear error instead of wrapping around. */
static void test_thread_past_the_limit_refused(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    t->threads = calloc(OP_MAX_THREADS, sizeof *t->threads);
    assert_non_null(t->threads);
    for (size_t i = 0; i < OP_MAX_THREADS; i++) t->threads[i].tid = (int64_t)i;
    t->nthreads = t->cap_threads = OP_MAX_THREADS;
    assert_int_equal(op_trace_thread(t, 0, 12345), 12345); /* one it has is still found */
    assert_int_equal(op_trace_thread(t, 0, -1), -1);
    assert_non_null(strstr(opprof_last_error(), "more than 1048576 threads"));
    opprof_trace_free(t);
}

/* A reserved block takes every event without moving: the collector
 * reserves from the records' size, so no event array is grown by doubling. */
static void test_reserved_events_never_move(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    assert_non_null(t);
    int64_t th = op_trace_thread(t, 1, 1);
    assert_true(th >= 0);
    assert_int_equal(op_trace_reserve_events(t, 100000), 0);
    const op_event *block = t->ev;
    for (int i = 0; i < 100000; i++) assert_non_null(op_trace_add_event(t, (uint32_t)th, 0, 0, i, 1));
    assert_ptr_equal(t->ev, block);
    assert_true(t->cap_ev >= 100000); /* the event store's block, whole 2 MiB pages */
    assert_int_equal(op_trace_reserve_events(t, 10), 0); /* smaller: nothing changes */
    assert_ptr_equal(t->ev, block);
    assert_int_not_equal(op_trace_reserve_events(t, SIZE_MAX / 2), 0); /* refused, the events kept */
    assert_int_equal(t->nev, 100000);
    assert_int_equal(t->ev[99999].start_ns, 99999);
    opprof_trace_free(t);
}

OPPROF_SITE(site_outer, "store::outer");
OPPROF_SITE(site_leaf, "store::leaf");

/* Past the chunks the pool keeps (64 MiB of records), the collector gives
 * back each chunk's pages once decoded: every event must still come out
 * whole, in order, with its own name and times. */
static void test_large_live_session_decoded_whole(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.max_events = 1ull << 40;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    const long groups = 1600000; /* 3.2M events, about 75 MiB of records */
    for (long g = 0; g < groups; g++) {
        opprof_begin(&site_outer);
        opprof_begin(&site_leaf);
        opprof_end(&site_leaf);
        opprof_end(&site_outer);
    }
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_int_equal(opprof_trace_event_count(t), (size_t)groups * 2);
    assert_int_equal(opprof_trace_dropped(t), 0);
    /* reserved from the records: the event store's block, whole 2 MiB pages, kept for the next session */
    assert_true(op_evstore_owns(t->ev));
    assert_true(t->cap_ev >= t->nev && (t->cap_ev - t->nev) * sizeof *t->ev < ((size_t)2 << 20));
    int64_t prev = INT64_MIN;
    for (size_t i = 0; i < t->nev; i++) {
        const op_event *e = &t->ev[i];
        assert_true(e->start_ns >= prev);
        prev = e->start_ns;
        assert_string_equal(op_strtab_get(&t->str, e->name), i % 2 ? "store::leaf" : "store::outer");
        assert_int_equal(e->parent, i % 2 ? (int32_t)i - 1 : -1);
        assert_int_equal(e->x, 0);
    }
    opprof_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hot_event_is_40_bytes),
        cmocka_unit_test(test_cold_part_only_where_set),
        cmocka_unit_test(test_scrambled_input_reordered_in_place),
        cmocka_unit_test(test_ordered_runs_merged),
        cmocka_unit_test(test_equal_events_keep_their_order),
        cmocka_unit_test(test_depth_counted_along_parents),
        cmocka_unit_test(test_thread_past_the_limit_refused),
        cmocka_unit_test(test_reserved_events_never_move),
        cmocka_unit_test(test_large_live_session_decoded_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

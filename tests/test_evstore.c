/* The event store's memory (capture/evstore.h): one block lent at a time,
 * kept between traces, written ahead by the keeper while armed, and an
 * event array that outgrows it moves to malloc with its events. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "capture/evstore.h"
#include "capture/pool.h"
#include "model/model.h"
#include "opprof.h"
#include "opprof_trace.h"

#define MIB ((size_t)1 << 20)

static void test_one_block_lent_and_kept(void **state)
{
    (void)state;
    size_t got = 1;
    assert_null(op_evstore_take(OP_EVSTORE_MIN - 1, &got)); /* small: malloc's */
    assert_int_equal(got, 0);
    void *p = op_evstore_take(3 * MIB, &got);
    assert_non_null(p);
    assert_true(got >= 3 * MIB && got % (2 * MIB) == 0);
    assert_true(op_evstore_owns(p));
    memset(p, 0x5a, got);
    size_t got2;
    assert_null(op_evstore_take(3 * MIB, &got2)); /* lent already */
    int x;
    assert_false(op_evstore_owns(&x));
    assert_int_equal(op_evstore_give(&x), -1); /* not its block: the caller's to free */
    assert_int_equal(op_evstore_give(p), 0);
    assert_false(op_evstore_owns(p));
    assert_int_equal(op_evstore_give(p), -1); /* given once */
    void *q = op_evstore_take(2 * MIB, &got2);
    assert_ptr_equal(q, p); /* the kept block again */
    assert_int_equal(got2, got);
    void *r = op_evstore_take(got + 4 * MIB, &got2);
    assert_null(r);
    assert_int_equal(op_evstore_give(q), 0);
    r = op_evstore_take(got + 4 * MIB, &got2); /* larger: the kept block grown */
    assert_non_null(r);
    assert_true(got2 >= got + 4 * MIB);
    memset(r, 1, got2);
    assert_int_equal(op_evstore_give(r), 0);
}

/* Two traces at once: the first has the block, the second malloc's; the
 * first's freeing gives the block back for the third. */
static void test_traces_share_the_block(void **state)
{
    (void)state;
    opprof_trace *a = op_trace_new(), *b = op_trace_new();
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(op_trace_reserve_events(a, 100000), 0);
    assert_int_equal(op_trace_reserve_events(b, 100000), 0);
    assert_true(op_evstore_owns(a->ev));
    assert_false(op_evstore_owns(b->ev));
    const void *block = a->ev;
    opprof_trace_free(a);
    opprof_trace_free(b);
    opprof_trace *c = op_trace_new();
    assert_int_equal(op_trace_reserve_events(c, 60000), 0);
    assert_ptr_equal(c->ev, block);
    opprof_trace_free(c);
}

/* Past the block's capacity the events move to malloc, all kept, and the
 * block goes back to the store. */
static void test_outgrown_block_moves_out(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    int64_t th = op_trace_thread(t, 1, 1);
    assert_true(th >= 0);
    assert_int_equal(op_trace_reserve_events(t, 100000), 0);
    const void *block = t->ev;
    assert_true(op_evstore_owns(block));
    size_t cap = t->cap_ev, n = cap + 10;
    for (size_t i = 0; i < n; i++) assert_non_null(op_trace_add_event(t, (uint32_t)th, 0, 0, (int64_t)i, 1));
    assert_ptr_not_equal(t->ev, block);
    assert_false(op_evstore_owns(t->ev));
    assert_int_equal(t->nev, n);
    for (size_t i = 0; i < n; i++) assert_int_equal(t->ev[i].start_ns, (int64_t)i);
    size_t got;
    void *p = op_evstore_take(2 * MIB, &got); /* given back when the events left it */
    assert_ptr_equal(p, block);
    assert_int_equal(op_evstore_give(p), 0);
    op_trace_fit_events(t);
    assert_int_equal(t->cap_ev, n);
    opprof_trace_free(t);
}

/* Pages of [p, p + bytes) that are resident. */
static size_t resident_pages(void *p, size_t bytes)
{
    size_t ps = (size_t)sysconf(_SC_PAGESIZE), n = bytes / ps, in = 0;
    unsigned char *v = malloc(n);
    assert_non_null(v);
    assert_int_equal(mincore(p, bytes, v), 0);
    for (size_t i = 0; i < n; i++) in += v[i] & 1;
    free(v);
    return in;
}

/* Armed, the keeper's call writes a block for the events of the chunks
 * handed out; disarmed, it does nothing. First of the file: nothing is
 * kept yet. */
static void test_keep_up_writes_ahead(void **state)
{
    (void)state;
    op_chunk *chunks = NULL;
    for (int i = 0; i < 6; i++) {
        op_chunk *c = op_chunk_new();
        assert_non_null(c);
        atomic_store(&c->next, chunks);
        chunks = c;
    }
    assert_true(op_pool_full_out() >= 6);
    size_t want = 6 * (op_chunk_full_words() / OP_EVSTORE_WORDS_PER_EVENT) * OP_EVSTORE_EVENT_BYTES;
    size_t got, ps = (size_t)sysconf(_SC_PAGESIZE);
    op_evstore_keep_up(); /* not armed */
    void *p = op_evstore_take(2 * MIB, &got);
    assert_non_null(p);
    assert_int_equal(got, 2 * MIB); /* nothing was written ahead: a fresh block of the size asked */
    assert_int_equal(resident_pages(p, got), 0);
    assert_int_equal(op_evstore_give(p), 0);
    op_evstore_arm(1);
    op_evstore_keep_up();
    op_evstore_arm(0);
    p = op_evstore_take(want, &got);
    assert_non_null(p);
    assert_true(got >= want);
    /* the first 2 MiB were the given block's (never written); the rest the keeper's */
    assert_true(resident_pages(p, got) * ps >= want - 2 * MIB - ps);
    assert_int_equal(op_evstore_give(p), 0);
    op_chunks_free(chunks);
}

/* Two sessions that keep events: the second's event array is the block
 * the first's trace gave back, and both hold every range. */
static void test_sessions_reuse_the_block(void **state)
{
    (void)state;
    OPPROF_SITE(site, "evstore::op");
    const void *prev = NULL;
    for (int round = 0; round < 2; round++) {
        opprof_config cfg;
        opprof_config_init(&cfg);
        cfg.max_events = 1u << 20;
        assert_int_equal(opprof_start(&cfg), OPPROF_OK);
        for (int i = 0; i < 200000; i++) {
            opprof_begin(&site);
            opprof_end(&site);
        }
        opprof_trace *t = NULL;
        assert_int_equal(opprof_stop(&t), OPPROF_OK);
        assert_int_equal(opprof_trace_event_count(t), 200000);
        assert_true(op_evstore_owns(t->ev));
        if (prev) assert_ptr_equal(t->ev, prev);
        prev = t->ev;
        opprof_trace_free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keep_up_writes_ahead),
        cmocka_unit_test(test_one_block_lent_and_kept),
        cmocka_unit_test(test_traces_share_the_block),
        cmocka_unit_test(test_outgrown_block_moves_out),
        cmocka_unit_test(test_sessions_reuse_the_block),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

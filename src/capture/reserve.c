/* Room in a thread's buffer and the event cap (reserve.h). */
#include "capture/agg.h"
#include "capture/pool.h"
#include "capture/reserve.h"
#include "capture/ring.h"
#include "capture/spill.h"

/* Budget granted per request: large enough to keep the shared counter off
 * the hot path, small near the cap so that idle threads hold little of it. */
#define BUDGET_BLOCK 4096

static int take_budget(op_tstate *t)
{
    int64_t left = atomic_load_explicit(&op_g.remaining, memory_order_relaxed);
    for (;;) {
        if (left <= 0) return -1;
        int64_t want = left / 64;
        if (want > BUDGET_BLOCK) want = BUDGET_BLOCK;
        if (want < 1) want = 1;
        if (atomic_compare_exchange_weak_explicit(&op_g.remaining, &left, left - want, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            t->budget += want;
            return 0;
        }
    }
}

/* The cap reached: the ranges open on this thread end now, so that none of
 * them absorbs the time of the children it can no longer record. */
static void cap_close(op_tstate *t)
{
    uint64_t ts = op_now(t);
    OP_STORE(&t->cap_ticks, ts ? ts : 1); /* a collector may read it beside us */
    for (uint32_t i = 0; i < t->depth; i++) {
        op_word *rec = t->stack[i].rec;
        if (!rec) continue;
        OP_STORE(&rec[0], OP_LOAD(&rec[0]) | OP_REC_FORCED);
        OP_STORE_END(&rec[2], ts);
        t->stack[i].rec = NULL; /* its end stores nothing */
    }
}

/* Room for `words` more words in the current chunk, moving to a new one
 * when needed (in a flight session, the ring's next); 0 or -1. */
static int make_room(op_tstate *t, uint32_t words)
{
    op_word *cur = atomic_load_explicit(&t->cur, memory_order_relaxed);
    if (cur + words <= t->lim) return 0;
    if (t->ring_max) return op_ring_advance(t, cur);
    if (t->opts & OP_OPT_STREAM) return op_spill_advance(t, cur);
    op_chunk *c = op_chunk_new();
    if (!c) return -1;
    op_chunk_link(t, cur, c);
    return 0;
}

void op_thread_gap(op_tstate *t, uint64_t from)
{
    if (t->opts & OP_OPT_AGG) {
        op_agg_gap(t, from, op_now(t));
        return;
    }
    if (make_room(t, OP_REC_GAP_WORDS) != 0) return;
    op_word *c = atomic_load_explicit(&t->cur, memory_order_relaxed);
    c[0] = OP_REC_GAP;
    c[1] = from;
    c[2] = op_now(t);
    OP_STORE(&t->has_gaps, 1);
    op_publish(t, c + OP_REC_GAP_WORDS);
}

int op_thread_reserve(op_tstate *t, uint32_t words)
{
    if (OP_UNLIKELY(t->cap_ticks)) goto drop;
    if (t->budget <= 0 && take_budget(t) != 0) {
        cap_close(t);
        goto drop;
    }
    if (make_room(t, words) != 0) goto drop;
    return 0;
drop:
    atomic_store_explicit(&t->dropped, atomic_load_explicit(&t->dropped, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    return -1;
}

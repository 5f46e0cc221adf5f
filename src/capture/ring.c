/* The flight recorder's per-thread rings: the capture's chunk list, where
 * the oldest chunk is taken back and written over once the thread holds
 * its share of chunks. Off the hot path: this runs once per full chunk
 * (1 MiB, some 40,000 plain ranges).
 *
 * Two things make overwriting safe:
 *  - A range still open whose record is in the chunk taken back forgets
 *    its record (its stack entry's rec becomes NULL, as for a dropped
 *    begin), so its end writes nothing into what is now someone else's
 *    record, and the range is simply not in the ring any more.
 *  - A collector reading the rings (a dump, while the program records on)
 *    first freezes them: a thread that needs a chunk while frozen links a
 *    new one instead of overwriting its oldest, and the ring shrinks back
 *    once thawed. The hand-shake is Dekker's: the thread marks itself busy,
 *    then looks at the freeze count; the collector raises the count, then
 *    waits for each busy thread to finish. With sequentially consistent
 *    operations at least one of them sees the other, so no chunk is ever
 *    overwritten while it is read, and no recording thread ever waits. */
#include <sched.h>

#include "capture/pool.h"
#include "capture/ring.h"
#include "capture/thread.h"

/* The open ranges whose record lies in chunk c forget it. */
static void forget_open(op_tstate *t, const op_chunk *c)
{
    const op_word *lo = c->words, *hi = c->words + c->nwords;
    for (uint32_t i = 0; i < t->depth && i < OP_MAX_DEPTH; i++)
        if (t->stack[i].rec >= lo && t->stack[i].rec < hi) t->stack[i].rec = NULL;
}

/* Unlinks the ring's oldest chunk; the caller holds ring_busy. ring_n
 * counts the full-size chunks only: the thread's small first chunk is
 * extra until the ring first wraps, then given back. */
static op_chunk *take_oldest(op_tstate *t)
{
    op_chunk *c = t->head;
    t->head = atomic_load_explicit(&c->next, memory_order_relaxed);
    forget_open(t, c);
    atomic_store_explicit(&c->next, NULL, memory_order_relaxed);
    atomic_store_explicit(&c->end, NULL, memory_order_relaxed);
    if (op_chunk_is_full(c)) t->ring_n--;
    return c;
}

int op_ring_advance(op_tstate *t, op_word *cur)
{
    op_chunk *c = NULL;
    atomic_store_explicit(&t->ring_busy, 1, memory_order_seq_cst);
    if (t->ring_n >= t->ring_max && t->head != t->tail &&
        atomic_load_explicit(&op_g.ring_freeze, memory_order_seq_cst) == 0) {
        /* Chunks added while frozen, and the small first chunk, go back to
         * the pool first: the ring is ring_max full-size chunks. */
        while (atomic_load_explicit(&t->head->next, memory_order_relaxed) != t->tail &&
               (t->ring_n > t->ring_max || !op_chunk_is_full(t->head)))
            op_chunks_free(take_oldest(t));
        if (t->ring_n >= t->ring_max && op_chunk_is_full(t->head)) c = take_oldest(t);
    }
    atomic_store_explicit(&t->ring_busy, 0, memory_order_release);
    if (!c && !(c = op_chunk_new())) return -1;
    t->ring_n++;
    /* When the thread left this chunk: the exited threads' oldest go first. */
    t->tail->left = op_now(t);
    op_chunk_link(t, cur, c);
    return 0;
}

void op_ring_freeze(void)
{
    atomic_fetch_add_explicit(&op_g.ring_freeze, 1, memory_order_seq_cst);
    op_registry_lock();
    for (op_tstate *t = op_registry_first(); t; t = t->next) {
        while (atomic_load_explicit(&t->ring_busy, memory_order_seq_cst)) sched_yield();
        /* The collector stops here: threads that record on faster than it
         * reads would otherwise keep it reading, and their rings growing. */
        t->ring_until = atomic_load_explicit(&t->cur, memory_order_acquire);
    }
    op_registry_unlock();
}

void op_ring_thaw(void)
{
    op_registry_lock();
    for (op_tstate *t = op_registry_first(); t; t = t->next) t->ring_until = NULL;
    op_registry_unlock();
    atomic_fetch_sub_explicit(&op_g.ring_freeze, 1, memory_order_seq_cst);
}

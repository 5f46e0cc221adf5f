/* Streamed sessions: full chunks leave their thread for a writer.
 *
 * In a session that streams its trace (OP_OPT_STREAM), a thread whose chunk
 * is full hands its chunks to a queue instead of linking a new one after
 * them, and records on in a fresh chunk; a writer thread (export/stream.c)
 * takes them from the queue, writes their records out and gives the chunks
 * back to the pool. Memory is then the queue plus each thread's current
 * chunk, for any length of run.
 *
 * The hand-off runs on the chunk-full slow path, which already takes the
 * pool's lock: it takes the registry lock too (a collector at stop reads
 * the threads' chunk lists under it) and the queue's. A recording thread
 * never waits for the writer: when the queue holds more than its limit
 * (the writer's disk fell behind), the full chunk stays linked in the
 * thread's own list, as without streaming, and the thread's next hand-off
 * hands the whole list over; such deferred hand-offs are counted. */
#ifndef OPPROF_CAPTURE_SPILL_H
#define OPPROF_CAPTURE_SPILL_H

#include <stddef.h>
#include <stdint.h>

#include "capture/state.h"
#include "common/compiler.h"

/* One hand-off: a thread's chunks in order, each with its end published. */
typedef struct op_spill_item {
    op_tstate *t;
    op_chunk *chunks;
} op_spill_item;

/* Opens the queue for generation gen, holding at most max_bytes of chunks
 * before hand-offs are deferred (0: the default, 64 MiB, or
 * op_spill_limit's). */
OP_SEAM void op_spill_open(uint64_t gen, size_t max_bytes);

/* The default limit of the next queues (0: 64 MiB), for tests that make a
 * run many times larger than it. */
void op_spill_limit(size_t max_bytes);

/* Called by reserve.c for a streaming thread whose chunk is full (its data
 * ends at cur): hands the chunks over (or, the queue being full, keeps
 * them linked) and moves the thread to a fresh one. Never waits. 0; -1
 * when no chunk is left (the record is dropped). */
int op_spill_advance(op_tstate *t, op_word *cur);

/* A chunk for a reader of records written out (export/spool.c): the
 * pool's, given back with op_spill_free; NULL when no memory is left. */
OP_SEAM op_chunk *op_spill_chunk(void);

/* The writer's side: the next item, waiting for one. 0 with an item, 1
 * once the queue is closed and empty. */
OP_SEAM int op_spill_take(op_spill_item *out);

/* Closes the queue (no more hand-offs; waiting threads go on) and wakes
 * the writer, which takes what is left and then gets 1. Call with the
 * registry lock held, after the generation is closed. */
OP_SEAM void op_spill_close(void);

/* Gives chunks the writer is done with back to the pool. */
OP_SEAM void op_spill_free(op_chunk *chunks);

/* Chunks whose records a late end may still write (ranges open at stop go
 * back to their thread, whose next session or exit frees them). Registry
 * lock held. */
OP_SEAM void op_spill_return(op_tstate *t, op_chunk *chunks);

/* Statistics, for tests: chunks in the queue now and at most so far, the
 * hand-offs, and those deferred because the queue was full. */
typedef struct op_spill_stats {
    uint64_t queued, peak_queued, handed, deferred;
} op_spill_stats;
OP_SEAM void op_spill_stats_get(op_spill_stats *s);

#endif

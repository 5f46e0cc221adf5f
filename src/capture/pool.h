/* The chunk pool: chunks given back by exited threads and earlier sessions,
 * already faulted in, handed to the threads that record (thread.c), the
 * flight recorder's rings (ring.c) and the streamed hand-offs (spill.c).
 * Reusing them keeps page faults off the recording of new threads, later
 * sessions and schedule cycles. One pool per chunk size (a thread's first
 * chunk is small, the rest full-size), each bounded so that one large
 * session does not pin memory forever. Off the hot path: one lock. */
#ifndef OPPROF_CAPTURE_POOL_H
#define OPPROF_CAPTURE_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "capture/format.h"
#include "common/compiler.h"

#define OP_CHUNK_BYTES ((size_t)1 << 20) /* 1 MiB per chunk */
#define OP_PREFILL_CHUNKS 4              /* mapped at start: ~175k events without a page fault */
/* A thread's first chunk is small: a program that starts many threads which
 * record a little each pays 64 KiB per live thread, not 1 MiB; a thread that
 * records more moves on to full-size chunks. */
#define OP_FIRST_CHUNK_BYTES ((size_t)64 << 10)
#define OP_PREFILL_FIRST_CHUNKS 16
/* Full-size chunks the pool should hold ahead of the threads: below it, a
 * taker calls the low-water hook (the keeper, keeper.h). */
#define OP_KEEP_AHEAD_CHUNKS 8

/* The record words a full-size chunk holds. */
static inline size_t op_chunk_full_words(void)
{
    return (OP_CHUNK_BYTES - sizeof(op_chunk)) / sizeof(op_word);
}

/* A full-size chunk of the pool's, not a first one or an arena copy. */
static inline int op_chunk_is_full(const op_chunk *c)
{
    return !c->arena && c->nwords == op_chunk_full_words();
}

/* A full-size chunk, and a thread's small first one: from the pool, or
 * newly mapped; NULL when no memory is left. */
op_chunk *op_chunk_new(void);
op_chunk *op_chunk_first(void);

/* Gives a list of chunks back (linked by next): to their pool, or to the
 * retired-data arena a copy lives in (arena.h). */
void op_chunks_free(op_chunk *c);

/* The collector has decoded chunk c of a closed generation (nothing writes
 * it again before it is given back). When the pool will not keep it, its
 * pages go back to the system now rather than at the end of the collection,
 * so that records and the model built from them are never both resident.
 * *seen counts the full-size chunks decoded so far in this collection. */
OP_SEAM void op_chunk_decoded(op_chunk *c, unsigned *seen);

/* Maps chunks into the pool until it holds nchunks full-size ones (and
 * OP_PREFILL_FIRST_CHUNKS first ones): at session start, so that a
 * session's first events do not pay for page faults. */
void op_capture_prefill(unsigned nchunks);

/* Full-size chunks handed out of the pool (to recording threads, rings,
 * hand-offs) and not given back yet: what a live session's records hold. */
size_t op_pool_full_out(void);

/* Called (outside the pool's lock) when a taker leaves fewer than
 * OP_KEEP_AHEAD_CHUNKS full-size chunks; NULL: nothing. */
void op_pool_on_low(void (*fn)(void));

/* Chunks recording threads have mapped themselves (the pool was empty),
 * for tests of reuse; chunks mapped into the pool are not counted. */
uint64_t op_capture_chunks_mapped(void);

/* Full-size chunks in the pool now, for tests of the keeper. */
unsigned op_capture_pool_full(void);

#endif

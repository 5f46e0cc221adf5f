/* The event store's memory: one large block for the model's event array,
 * kept between sessions and written ahead by the pool keeper.
 *
 * opprof_stop of a session that keeps events builds one op_event (40
 * bytes) per range. Taken from malloc, that array is fresh memory each
 * time, and on this project's VMs (Firecracker, free page reporting) the
 * first store to each 4 KiB page costs the host's fault, 15-40 us (a
 * 200k-event stop: 42-47 ns per event on malloc's array, 16-17 on the kept
 * block; bench_overhead, README). So the collector takes the array from
 * here instead: the block the last trace gave back (its pages still
 * written), or one the keeper wrote during the session, on its own core,
 * as the session's chunks filled (op_evstore_keep_up). A block given back
 * stays (at most OP_EVSTORE_KEEP bytes) with its pages marked MADV_FREE:
 * the kernel may take them back under memory pressure, and until then
 * the next session reuses them without a fault.
 *
 * One block is lent at a time; a second trace alive at once takes its
 * array from malloc as before. The block is identified by its address, so
 * that an array moved between traces (the streamed reader swaps them) is
 * still given back here. */
#ifndef OPPROF_CAPTURE_EVSTORE_H
#define OPPROF_CAPTURE_EVSTORE_H

#include <stddef.h>

#include "common/compiler.h"

/* The model's bytes per event (sizeof(op_event), checked in model/trace.c)
 * and record words per range (a range's record is three words): what the
 * keeper writes ahead per word of a live session's chunks. */
#define OP_EVSTORE_EVENT_BYTES 40
#define OP_EVSTORE_WORDS_PER_EVENT 3
/* The largest block kept once given back: 3.3M events. */
#define OP_EVSTORE_KEEP ((size_t)128 << 20)
/* Arrays smaller than this come from malloc: a fault or two is not worth a block. */
#define OP_EVSTORE_MIN ((size_t)2 << 20)

/* A block of at least bytes for the caller's event array, its size in
 * *got; NULL (nothing lent) when one is lent already, bytes is below
 * OP_EVSTORE_MIN or no memory is left: the caller then uses malloc. */
OP_SEAM void *op_evstore_take(size_t bytes, size_t *got);

/* Whether p is the block lent now. */
OP_SEAM int op_evstore_owns(const void *p);

/* Gives the lent block p back: kept for the next take, or unmapped.
 * Returns -1, doing nothing, when p is not the lent block (p is then the
 * caller's to free). */
OP_SEAM int op_evstore_give(void *p);

/* A session whose stop builds events is live (on: 1) or has stopped (0):
 * while on, op_evstore_keep_up writes ahead. */
void op_evstore_arm(int on);

/* The keeper's call after it has filled the pool: while armed, grows the
 * kept block to hold the events of every full-size chunk handed out and
 * writes its new pages, so that the stop's collector finds them faulted. */
void op_evstore_keep_up(void);

#endif

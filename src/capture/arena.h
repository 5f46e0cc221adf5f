/* The retired-data arena. A thread that exits while its session records
 * keeps its records until the collector has read them, but not the chunk
 * they are in: its last, part-filled chunk is copied here, exactly sized,
 * and the chunk goes back to the pool for the next thread (thread.c).
 * Blocks are faulted in as they fill and unmapped when no copy in them is
 * left (each counts its live copies); the block being filled is emptied
 * instead. */
#ifndef OPPROF_CAPTURE_ARENA_H
#define OPPROF_CAPTURE_ARENA_H

#include <stddef.h>

#include "capture/format.h"

/* A chunk holding a copy of the nwords words at src (its end published),
 * whose arena is set; NULL when out of memory. */
op_chunk *op_arena_copy(const op_word *src, size_t nwords);

/* Gives back c, a copy op_arena_copy made (c->arena is set). */
void op_arena_release(op_chunk *c);

#endif

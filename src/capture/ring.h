/* The flight recorder's per-thread rings (ring.c): the thread's chunk list,
 * whose oldest chunk is taken back and written over once the thread holds
 * its share. */
#ifndef OPPROF_CAPTURE_RING_H
#define OPPROF_CAPTURE_RING_H

#include "capture/state.h"

/* The thread's chunk is full: link the next one, the ring's oldest when it
 * is full and no collector reads, a new one otherwise. cur is where the
 * full chunk's data ends. 0, or -1 when no memory is left. */
int op_ring_advance(op_tstate *t, op_word *cur);

/* While frozen no ring overwrites a chunk (threads grow their rings
 * instead), so that a collector may read every thread's records while the
 * threads record on. Nests. */
void op_ring_freeze(void);
void op_ring_thaw(void);

/* The rings of threads that exit while the recorder runs, under one budget
 * (ring_exited.c); each with the registry lock held. A thread attached
 * to a ring generation; a thread of one exited (its tail retired, its
 * exit_ticks set); generation g's exited states were reaped. */
void op_ring_attached(op_tstate *t);
void op_ring_exited(op_tstate *t);
void op_ring_reaped(uint64_t g);

#endif

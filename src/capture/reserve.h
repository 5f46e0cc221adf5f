/* Room in a thread's buffer, and the event cap: what a record asks for
 * before it is written, off the fast path (the fast path checks its room
 * and budget inline and comes here when either runs out). */
#ifndef OPPROF_CAPTURE_RESERVE_H
#define OPPROF_CAPTURE_RESERVE_H

#include <stdint.h>

#include "capture/state.h"

/* Ensures room for `words` more words and one more event under the cap.
 * Returns 0, or -1 after counting a drop. The first time the cap stops the
 * thread, its open ranges are closed then and flagged forced, and their
 * ends will store nothing (state.h: cap_ticks). A full chunk is followed
 * by the ring's next (ring.h), handed to a streamed trace's writer
 * (spill.h), or followed by a new one from the pool. */
int op_thread_reserve(op_tstate *t, uint32_t words);

/* Writes a gap record [from, now] into t's buffer: the profiler worked on
 * this thread meanwhile, and the collector takes that time out. Not an
 * event: no cap budget. */
void op_thread_gap(op_tstate *t, uint64_t from);

#endif

/* Turning one session generation's capture buffers into a trace. */
#ifndef OPPROF_MODEL_COLLECT_H
#define OPPROF_MODEL_COLLECT_H

#include <stdint.h>

#include "capture/clock.h"
#include "opprof.h"

/* Collects every thread's records of generation gen (which must no longer be
 * active). Ranges still open are closed at stop_ticks, or at their thread's
 * exit. opts are the session's OP_OPT_* bits. The trace is not finished:
 * the caller adds what it knows and calls op_trace_finish. */
int op_collect(uint64_t gen, const op_timebase *tb, uint64_t stop_ticks, uint32_t opts, opprof_trace **out);

/* The trace's options and counts as op_collect sets them, for a trace
 * made from a session's records another way (model/stream.c). */
void op_collect_options(opprof_trace *tr, const op_timebase *tb, uint32_t opts, uint64_t recorded);

#endif

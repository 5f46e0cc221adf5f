/* Collecting an aggregating session: sums instead of events. */
#ifndef OPPROF_MODEL_COLLECT_AGG_H
#define OPPROF_MODEL_COLLECT_AGG_H

#include "capture/clock.h"
#include "capture/state.h"
#include "model/model.h"

/* The shape string id of n inputs in the event path's encoding of nwords
 * words; UINT32_MAX when out of memory. */
typedef uint32_t (*op_shapes_fn)(void *ctx, const uint64_t *enc, unsigned n, uint32_t nwords);

/* The model stack (index + 1) of a stack entry of the thread's stack
 * table; UINT32_MAX when out of memory. */
typedef uint32_t (*op_stack_fn)(void *ctx, uint64_t entry);

/* Adds thread t's rows to tr, its open ranges closed at close_ticks, their
 * shapes named by shapes_of and stacks by stack_of. 0 or -1. */
int op_collect_agg_thread(opprof_trace *tr, op_tstate *t, const op_timebase *tb, uint64_t close_ticks,
                          op_shapes_fn shapes_of, op_stack_fn stack_of, void *ctx);

/* Orders the rows by their first range, as the event path orders events
 * (start, then the longer first), so that tables list groups alike. */
void op_collect_agg_sort(opprof_trace *tr);

#endif

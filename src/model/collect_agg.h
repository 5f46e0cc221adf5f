/* Collecting an aggregating session: sums instead of events. */
#ifndef OPPROF_MODEL_COLLECT_AGG_H
#define OPPROF_MODEL_COLLECT_AGG_H

#include "capture/clock.h"
#include "capture/state.h"
#include "model/model.h"

/* Adds thread t's rows to tr, its open ranges closed at close_ticks. 0 or -1. */
int op_collect_agg_thread(opprof_trace *tr, op_tstate *t, const op_timebase *tb, uint64_t close_ticks);

/* Orders the rows by their first range, as the event path orders events
 * (start, then the longer first), so that tables list groups alike. */
void op_collect_agg_sort(opprof_trace *tr);

#endif

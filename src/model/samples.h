/* A sampling session's samples into the model: the sampler's per-thread
 * samples of the generation (capture/sample.h), their stacks symbolized
 * once each, as with_stack's are (model/stacks.h). */
#ifndef OPPROF_MODEL_SAMPLES_H
#define OPPROF_MODEL_SAMPLES_H

#include "capture/clock.h"
#include "model/model.h"

/* Adds the samples taken between the generation's start (tb) and stop
 * (ticks) to tr; nothing when the session did not sample. A status. */
int op_samples_take(opprof_trace *tr, const op_timebase *tb, uint64_t stop_ticks);

/* Each sample's CPU time to the innermost range of its thread open at its
 * instant and to that range's ancestors (op_evx.oncpu_*); a thread that
 * records no range (a pool) counts as the thread that does, when exactly
 * one does. Called by op_trace_finish once the call tree is built. 0, or
 * -1 out of memory. */
int op_samples_attribute(opprof_trace *tr);

#endif

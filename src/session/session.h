/* What the flight recorder (src/live, in the analysis library) needs of the
 * session, exported to it (OP_SEAM, common/compiler.h). */
#ifndef OPPROF_SESSION_SESSION_H
#define OPPROF_SESSION_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "capture/clock.h"
#include "common/compiler.h"
#include "opprof.h"

/* opprof_start for the flight recorder: every thread records into a ring of
 * ring_chunks chunks, the event cap does not apply, and each step is a
 * ProfilerStep range whose number is the arg op_step_arg_key (named after
 * collection: a site per step would pile up for the life of the job).
 * on_step is called by opprof_step, outside the session lock, with the
 * step that just ended. */
OP_SEAM int op_session_start_ring(const opprof_config *cfg, uint32_t ring_chunks, void (*on_step)(int64_t step));

/* opprof_start for a triggered session (live/ondemand.c): each trace its
 * schedule makes ready at a step is handed to take, which owns it (and is
 * called on the stepping thread, outside the session lock), instead of to
 * on_trace_ready, so the files are written on the listener's thread. */
OP_SEAM int op_session_start_taking(const opprof_config *cfg, void (*take)(opprof_trace *tr));

/* How many times opprof_step was called in this process, with a session or
 * not: a program that never calls it has no steps to wait for. */
OP_SEAM int64_t op_session_steps_seen(void);

/* The program's config (any struct_size, include/opprof.h) as the
 * library's full struct: its fields, defaults for those it does not have;
 * fn names the caller in a refusal. */
OP_SEAM int op_config_in(opprof_config *out, const opprof_config *user, const char *fn);

OP_SEAM extern const char op_step_arg_key[];
OP_SEAM extern const opprof_site op_ring_step_site;

/* Ends of ranges named `name` are reported to fn (the flight recorder's
 * slow "step" that is a named range); set before the session starts, as
 * each thread reads it when it attaches. NULL name: none. */
OP_SEAM void op_session_watch(const char *name, void (*fn)(uint64_t t0, uint64_t t1));

/* A read of the running ring session's records, while it records on: what
 * the collector needs. Between begin and end the session cannot end and
 * the rings are frozen (capture/ring.c): nothing is overwritten under the
 * reader, and no recording thread waits. */
typedef struct op_live {
    uint64_t gen;
    op_timebase tb; /* finished at now */
    uint64_t now;   /* the recording clock at begin: ranges still open are closed here */
    uint32_t opts;
    int64_t step_num;
} op_live;

OP_SEAM int op_session_live_begin(op_live *lv);
OP_SEAM void op_session_live_end(void);

#endif

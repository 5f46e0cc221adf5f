/* Internal session hooks for the schedule: open and close recording
 * generations inside one session. Call with the session lock held. */
#ifndef OPPROF_SESSION_SESSION_H
#define OPPROF_SESSION_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "capture/clock.h"
#include "opprof.h"

void op_session_open_gen(void);
int op_session_close_gen(int keep, opprof_trace **out);

/* opprof_start for the flight recorder: every thread records into a ring of
 * ring_chunks chunks, the event cap does not apply, and each step is a
 * ProfilerStep range whose number is the arg OP_STEP_ARG_KEY (named after
 * collection: a site per step would pile up for the life of the job). */
int op_session_start_ring(const opprof_config *cfg, uint32_t ring_chunks);

/* The program's config (any struct_size, include/opprof.h) as the
 * library's full struct: its fields, defaults for those it does not have;
 * fn names the caller in a refusal. */
int op_config_in(opprof_config *out, const opprof_config *user, const char *fn);

extern const char op_step_arg_key[];
extern const opprof_site op_ring_step_site;

/* A read of the running ring session's records, while it records on: what
 * the collector needs. The session cannot end between begin and end. */
typedef struct op_live {
    uint64_t gen;
    op_timebase tb;
    uint32_t opts;
    int64_t step_num;
} op_live;

int op_session_live_begin(op_live *lv);
void op_session_live_end(void);

/* Called by opprof_step in a ring session, outside the session lock, with
 * the step that just ended (flight.c). */
void op_flight_on_step(int64_t step);

/* Copies the process-wide distributedInfo into t (distributed.c). */
int op_distributed_apply(opprof_trace *t);

#endif

/* Internal session hooks for the schedule: open and close recording
 * generations inside one session. Call with the session lock held. */
#ifndef OPPROF_SESSION_SESSION_H
#define OPPROF_SESSION_SESSION_H

#include <stddef.h>

#include "opprof.h"

void op_session_open_gen(void);
int op_session_close_gen(int keep, opprof_trace **out);

/* Copies the process-wide distributedInfo into t (distributed.c). */
int op_distributed_apply(opprof_trace *t);

#endif

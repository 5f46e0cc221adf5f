/* Internal session hooks for the schedule: open and close recording
 * generations inside one session. Call with the session lock held. */
#ifndef OPPROF_SESSION_SESSION_H
#define OPPROF_SESSION_SESSION_H

#include "opprof.h"

void op_session_open_gen(void);
int op_session_close_gen(int keep, opprof_trace **out);

#endif

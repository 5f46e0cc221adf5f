/* The schedule's state machine, as torch.profiler.profile runs it: on each
 * change of action (at start, at step, at stop) a fixed list of operations
 * from torch's action_map. The session executes them. */
#ifndef OPPROF_SESSION_SCHEDULE_H
#define OPPROF_SESSION_SCHEDULE_H

#include "opprof.h"

enum op_sched_op {
    OP_SCHED_WARN = 1, /* print the transition's warning (once per process) */
    OP_SCHED_PREPARE,  /* start recording for warmup: kept nowhere */
    OP_SCHED_START,    /* start recording for keeps */
    OP_SCHED_STOP,     /* stop recording; what was kept becomes the pending trace */
    OP_SCHED_READY     /* hand the pending trace to on_trace_ready */
};

typedef struct op_sched_ops {
    unsigned char n;
    unsigned char op[4];
    const char *warning; /* for OP_SCHED_WARN */
} op_sched_ops;

/* Stands for "the session stops" as the next action. */
#define OP_SCHED_EXIT (-1)

/* The operations for the change prev -> cur (cur may be OP_SCHED_EXIT). */
const op_sched_ops *op_sched_transition(int prev, int cur);

/* Prints "opprof: warning: <msg>" on stderr the first time msg is given. */
void op_sched_warn_once(const char *msg);

/* The warning torch.profiler.schedule prints for s, or NULL. */
const char *op_sched_config_warning(const opprof_schedule *s);

#endif

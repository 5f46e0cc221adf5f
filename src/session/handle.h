/* The trace handle, and what the analysis library lends the session.
 *
 * opprof_stop and on_trace_ready hand out an opprof_trace. The client never
 * builds the event model itself: when the analysis library (libopprof_trace)
 * is in the program, it lends the session its collector (op_session_lend,
 * from its constructor), and each generation kept becomes a model whose
 * first member is an op_trace_head. Without it the session hands out bare
 * handles: nothing can read them, and opprof_trace_free frees them. Either
 * way the head says how the trace is freed, so the client never links the
 * model's code. */
#ifndef OPPROF_SESSION_HANDLE_H
#define OPPROF_SESSION_HANDLE_H

#include <stdint.h>

#include "capture/clock.h"
#include "common/compiler.h"
#include "device/device.h"
#include "opprof.h"

/* The first member of every trace. */
typedef struct op_trace_head {
    void (*free)(opprof_trace *t); /* frees the whole trace; NULL: a bare handle, one allocation */
} op_trace_head;

/* A generation just closed, as the collector needs it. */
typedef struct op_gen_done {
    uint64_t gen;
    const op_timebase *tb; /* finished */
    uint64_t stop_ticks;   /* ranges still open are closed here (or at their thread's exit) */
    uint32_t opts;         /* OP_OPT_* */
    int64_t step_num;
    int64_t duration_ns;
    const char *output_dir; /* the session's, NULL or "" for none */
    const op_dev_take *dev; /* device activity and NVTX ranges (finish only) */
    double comp_inside_ns;  /* overhead compensation the sums had applied; 0 0: none */
    double comp_outside_ns;
} op_gen_done;

typedef struct op_collector {
    /* Reads every thread's records of g->gen (the rings frozen, for a flight
     * recorder) into a new trace, not yet finished; a status. */
    int (*collect)(const op_gen_done *g, opprof_trace **out);
    /* Adds g's device activity and what the session knows (duration, step,
     * output folder, distributedInfo), then finishes the trace. A status;
     * the caller frees the trace on failure. */
    int (*finish)(opprof_trace *t, const op_gen_done *g);
    /* The session was cut short (a signal): the trace says so. */
    void (*mark_incomplete)(opprof_trace *t);
} op_collector;

/* The streamed trace's writer (opprof_config.stream_trace), lent by the
 * analysis library's export floor (export/stream.c) as the collector is by
 * its model: its file opened at start, the writer begun with each
 * generation, running or not, and stopped at the close, which hands out
 * the sums; statuses. */
typedef struct op_stream_hooks {
    int (*open)(const char *path, int64_t min_duration_ns, int max_depth);
    int (*begin)(const op_timebase *tb, uint32_t opts, uint64_t gen);
    int (*running)(void);
    int (*stop)(const op_gen_done *g, int incomplete, opprof_trace **out);
    void (*abort)(void);
} op_stream_hooks;

/* Lends the writer (NULL withdraws it); h must stay valid. */
OP_SEAM void op_session_lend_stream(const op_stream_hooks *h);

/* The writer lent, or NULL. */
const op_stream_hooks *op_session_stream(void);

/* Called by the analysis library before any session can stop (a
 * constructor); c must stay valid. */
OP_SEAM void op_session_lend(const op_collector *c);

/* The collector lent, or NULL. */
const op_collector *op_session_collector(void);

/* A handle that holds no model, for a program without the analysis
 * library; NULL when out of memory. */
opprof_trace *op_trace_bare(void);

#endif

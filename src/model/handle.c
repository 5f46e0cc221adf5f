/* The analysis library's side of the trace handle (session/handle.h): the
 * collector it lends the session, so that every generation a session keeps
 * becomes a model, and op_trace_model, which every reader of a trace calls
 * first. Lending from a constructor in this file, the one every reader
 * links, means a program that reads traces always has its traces built,
 * statically linked or not; a program that only records links none of it. */
#include <string.h>

#include "common/error.h"
#include "export/stream.h"
#include "model/collect.h"
#include "model/devmap.h"
#include "model/distributed.h"
#include "model/model.h"

const opprof_trace *op_trace_model(const opprof_trace *t)
{
    return t && t->head.free ? t : NULL;
}

int op_trace_check(const opprof_trace *t, const char *who)
{
    if (!t || t->head.free) return OPPROF_OK; /* NULL is the caller's to report, in its words */
    return op_fail(OPPROF_E_INVAL, "%s: the trace holds no events (recorded before libopprof_trace was loaded)",
                   who);
}

static int collect(const op_gen_done *g, opprof_trace **out)
{
    return op_collect(g->gen, g->tb, g->stop_ticks, g->opts, out);
}

static int finish(opprof_trace *tr, const op_gen_done *g)
{
    int rc = op_dev_apply(tr, g->dev, g->tb);
    if (rc != OPPROF_OK) return rc;
    tr->duration_ns = g->duration_ns;
    tr->step_num = g->step_num;
    /* The trace carries the folder its handlers write to: they read it there
     * and never call back up into the session. */
    if (g->output_dir && *g->output_dir) {
        tr->output_dir = op_trace_intern(tr, g->output_dir, strlen(g->output_dir));
        if (tr->output_dir == UINT32_MAX) return op_fail(OPPROF_E_NOMEM, "out of memory");
    }
    rc = op_distributed_apply(tr);
    return rc == OPPROF_OK ? op_trace_finish(tr) : rc;
}

static void mark_incomplete(opprof_trace *tr)
{
    tr->options |= OP_TRACE_INCOMPLETE;
}

/* The streamed trace's writer (export/stream.c), for the session. */
static int stream_begin(const op_timebase *tb, uint32_t opts, uint64_t gen)
{
    opprof_trace *head = op_trace_new();
    int rc = head ? OPPROF_OK : op_fail(OPPROF_E_NOMEM, "out of memory");
    if (rc == OPPROF_OK) {
        op_collect_options(head, tb, opts, 0);
        rc = op_distributed_apply(head);
    }
    if (rc == OPPROF_OK) rc = op_stream_begin(head, tb, opts, gen);
    opprof_trace_free(head);
    return rc;
}

static int stream_stop(const op_gen_done *g, int incomplete, opprof_trace **out)
{
    return op_stream_stop(g->gen, g->tb, g->stop_ticks, incomplete, out);
}

static const op_collector k_collector = {collect,      finish,         mark_incomplete, op_stream_open,
                                         stream_begin, op_stream_running, stream_stop,  op_stream_abort};

/* Early (priority 101): a program's own constructor may run a session. */
__attribute__((constructor(101))) static void lend_collector(void)
{
    op_session_lend(&k_collector);
}

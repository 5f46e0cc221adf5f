/* The analysis library's side of the trace handle (session/handle.h): the
 * collector it lends the session, so that every generation a session keeps
 * becomes a model, and op_trace_model, which every reader of a trace calls
 * first. Lending from a constructor in this file, the one every reader
 * links, means a program that reads traces always has its traces built,
 * statically linked or not; a program that only records links none of it. */
#include <string.h>

#include "common/error.h"
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

static const op_collector k_collector = {collect, finish, mark_incomplete};

/* Early (priority 101): a program's own constructor may run a session. */
__attribute__((constructor(101))) static void lend_collector(void)
{
    op_session_lend(&k_collector);
}

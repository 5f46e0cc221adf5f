/* The collector (model.h: op_model_collector): reads a closed generation's
 * records into a model, then adds what the session knows and finishes it. */
#include <string.h>

#include "common/error.h"
#include "model/collect.h"
#include "model/devmap.h"
#include "model/distributed.h"
#include "model/model.h"
#include "model/samples.h"

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
    tr->comp_inside_ns = g->comp_inside_ns;
    tr->comp_outside_ns = g->comp_outside_ns;
    /* The trace carries the folder its handlers write to: they read it there
     * and never call back up into the session. */
    if (g->output_dir && *g->output_dir) {
        tr->output_dir = op_trace_intern(tr, g->output_dir, strlen(g->output_dir));
        if (tr->output_dir == UINT32_MAX) return op_fail(OPPROF_E_NOMEM, "out of memory");
    }
    /* A streamed trace's writer took its samples already, to write them
     * into its file: this take then finds none left. */
    rc = op_samples_take(tr, g->tb, g->stop_ticks);
    if (rc == OPPROF_OK) rc = op_distributed_apply(tr);
    return rc == OPPROF_OK ? op_trace_finish(tr) : rc;
}

static void mark_incomplete(opprof_trace *tr)
{
    tr->options |= OP_TRACE_INCOMPLETE;
}

const op_collector *op_model_collector(void)
{
    static const op_collector c = {collect, finish, mark_incomplete};
    return &c;
}

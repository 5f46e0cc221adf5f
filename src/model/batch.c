/* A trace read in batches (model.h, op_trace_batch_out): what opprof
 * convert writes as it reads, so that memory holds one batch of events and
 * the ranges still open, not the whole file. */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "model/model.h"

int op_trace_batch_out(opprof_trace *t, uint32_t *const *open, size_t nopen, op_batch_fn fn, void *ctx)
{
    op_event *keep = malloc((nopen ? nopen : 1) * sizeof *keep);
    op_evx *keepx = malloc((nopen ? nopen : 1) * sizeof *keepx);
    if (!keep || !keepx) {
        free(keep);
        free(keepx);
        return op_fail(OPPROF_E_NOMEM, "out of memory");
    }
    for (size_t k = 0; k < nopen; k++) {
        op_event *e = &t->ev[*open[k]];
        keep[k] = *e;
        if (e->x) keepx[k] = t->evx[e->x - 1];
        e->flags |= OP_EV_BATCH_KEPT;
    }
    size_t n = 0;
    for (size_t i = 0; i < t->nev; i++)
        if (!(t->ev[i].flags & OP_EV_BATCH_KEPT)) t->ev[n++] = t->ev[i];
    t->nev = n;
    int rc = fn(t, ctx);
    /* The open ranges, first; their cold parts, first too. */
    t->nev = nopen;
    t->nmem = 0;
    t->nevx = 0;
    for (size_t k = 0; k < nopen; k++) {
        t->ev[k] = keep[k];
        if (keep[k].x) {
            t->evx[t->nevx] = keepx[k];
            t->ev[k].x = (uint32_t)++t->nevx;
        }
        *open[k] = (uint32_t)k;
    }
    free(keep);
    free(keepx);
    return rc;
}

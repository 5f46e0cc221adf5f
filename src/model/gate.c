/* The gate every reader of a trace passes first: op_trace_model and
 * op_trace_check (model.h). A bare handle (recorded without the analysis
 * library) holds no model and reads as empty.
 *
 * The collector (handle.c) is lent to the session from here, so that a
 * program that reads traces, statically linked or not, links the
 * collector with its first reader and has its traces built; a program that
 * only records links none of it. */
#include "common/error.h"
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

/* Early (priority 101): a program's own constructor may run a session. */
__attribute__((constructor(101))) static void lend_collector(void)
{
    op_session_lend(op_model_collector());
}

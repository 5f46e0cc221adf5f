/* The profiler's own time on a recording thread (see op_own_begin). */
#include "capture/owntime.h"
#include "capture/reserve.h"

op_own op_own_begin(void)
{
    op_own o = {NULL, 0};
    uint64_t g = op_gen_load();
    op_tstate *t = g ? op_tls : NULL;
    if (t && t->gen == g) {
        o.t = t;
        o.from = op_now(t);
    }
    return o;
}

void op_own_end(op_own o)
{
    /* Still this session's state: a stop meanwhile leaves the gap unread. */
    if (o.t && o.t->gen == op_gen_load()) op_thread_gap(o.t, o.from);
}

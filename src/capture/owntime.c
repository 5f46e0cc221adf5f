/* The profiler's own work on a recording thread (owntime.h). */
#include "capture/owntime.h"
#include "capture/reserve.h"
#include "capture/thread.h"

/* The generation whose memory events the calling thread stops, 0 none. */
static uint64_t quiet_begin(void)
{
    uint64_t g = op_gen_load();
    op_tstate *t = g ? op_state_for(g) : NULL;
    if (!t || !(t->opts & OP_OPT_MEMORY)) return 0;
    t->opts &= ~(uint32_t)OP_OPT_MEMORY;
    return g;
}

static void quiet_end(uint64_t saved)
{
    op_tstate *t = op_tls;
    /* A thread that moved on to a new session meanwhile has its options from it. */
    if (saved && t && t->gen == saved) t->opts |= OP_OPT_MEMORY;
}

op_own op_own_begin(void)
{
    op_own o = {NULL, 0, quiet_begin()};
    uint64_t g = op_gen_load();
    op_tstate *t = g ? op_tls : NULL;
    if (t && t->gen == g) {
        o.t = t;
        o.from = op_now(t);
    }
    return o;
}

void op_own_end(op_own o, int gap)
{
    /* Still this session's state: a stop meanwhile leaves the gap unread. */
    if (gap && o.t && o.t->gen == op_gen_load()) op_thread_gap(o.t, o.from);
    quiet_end(o.quiet);
}

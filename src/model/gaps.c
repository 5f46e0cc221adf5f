/* Removing the profiler's own time from a thread's timeline (gaps.h). */
#include <stdlib.h>

#include "common/vec.h"
#include "model/gaps.h"

int op_gaps_add(op_gaps *s, uint64_t from, uint64_t to)
{
    if (to < from) to = from;
    uint64_t before = 0;
    if (s->n) {
        const struct op_gap *last = &s->g[s->n - 1];
        if (from < last->to) from = last->to; /* out of order: keep the sum monotonic */
        if (to < from) to = from;
        before = last->before + (last->to - last->from);
    }
    if (op_grow(&s->g, &s->cap, s->n + 1, sizeof *s->g)) return -1;
    s->g[s->n++] = (struct op_gap){from, to, before};
    return 0;
}

uint64_t op_gaps_apply(op_gaps *s, uint64_t ticks)
{
    /* lo: 1 + the last gap starting at or before ticks (0 none) */
    size_t lo = s->near <= s->n ? s->near : 0, hi = s->n;
    if (lo && s->g[lo - 1].from > ticks) lo = 0; /* earlier than the last lookup */
    if (lo < hi && s->g[lo].from <= ticks) { /* later: first the next gap, then a search */
        lo++;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (s->g[mid].from <= ticks) lo = mid + 1;
            else hi = mid;
        }
    }
    s->near = lo;
    if (lo == 0) return ticks;
    const struct op_gap *g = &s->g[lo - 1];
    uint64_t inside = ticks < g->to ? ticks - g->from : g->to - g->from;
    return ticks - g->before - inside;
}

void op_gaps_free(op_gaps *s)
{
    free(s->g);
    s->g = NULL;
    s->n = s->cap = s->near = 0;
}

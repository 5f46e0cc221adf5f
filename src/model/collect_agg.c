/* Collecting an aggregating session (capture/agg.h): each thread's sums by
 * site become rows of the trace, with the ranges still open closed at stop
 * (or at the thread's exit) as the event path closes them. */
#include <stdlib.h>
#include <string.h>

#include "capture/agg.h"
#include "capture/state.h"
#include "model/collect_agg.h"

/* Nanoseconds of a span of ticks (not a point in time). */
static int64_t span_ns(const op_timebase *tb, int64_t ticks)
{
    if (tb->ticks_are_ns) return ticks;
    if (ticks < 0) return -(int64_t)(((unsigned __int128)(uint64_t)-ticks * tb->mult) >> 32);
    return (int64_t)(((unsigned __int128)(uint64_t)ticks * tb->mult) >> 32);
}

typedef struct sums {
    uint64_t count, total, self, first_t1, flops;
    int64_t mem, self_mem;
} sums;

int op_collect_agg_thread(opprof_trace *tr, op_tstate *t, const op_timebase *tb, uint64_t close_ticks,
                          op_shapes_fn shapes_of, op_stack_fn stack_of, void *ctx)
{
    op_agg *a = t->agg;
    if (!a) return 0;
    op_aggslot *slots = __atomic_load_n(&a->slots, __ATOMIC_ACQUIRE);
    uint64_t mask = OP_LOAD(&a->mask);
    if (!slots) return 0;
    /* The open ranges' part: what their ends would add. */
    sums *extra = calloc(mask + 1, sizeof *extra);
    if (!extra) return -1;
    uint32_t depth = OP_LOAD(&t->depth);
    if (depth > OP_MAX_DEPTH) depth = OP_MAX_DEPTH;
    uint64_t child = 0; /* of the range above, as it ends */
    int64_t child_mem = 0;
    for (uint32_t d = depth; d-- > 0;) {
        const op_aggopen *o = &a->open[d];
        uint64_t t0 = OP_LOAD(&o->t0), dur = close_ticks - t0;
        op_aggslot *s = OP_LOAD(&o->slot);
        uint64_t mine = OP_LOAD(&o->child) + child;
        int64_t self_mem = OP_LOAD(&o->self_mem), mem = self_mem + OP_LOAD(&o->child_mem) + child_mem;
        if (s >= slots && s <= slots + mask) {
            sums *x = &extra[s - slots];
            x->count++;
            x->total += dur;
            x->self += dur - mine;
            if (OP_LOAD(&o->first)) x->first_t1 = close_ticks;
            x->flops += OP_LOAD(&o->flops);
            x->self_mem += self_mem;
            x->mem += mem;
        }
        child = dur;
        child_mem = mem;
    }
    uint64_t nfree = OP_LOAD(&a->free_count);
    if (nfree) {
        int64_t first = op_timebase_ns(tb, OP_LOAD(&a->free_first));
        if (!tr->agg_free_count || first < tr->agg_free_first_ns) tr->agg_free_first_ns = first;
        tr->agg_free_count += nfree;
        tr->agg_free_bytes += OP_LOAD(&a->free_bytes);
    }
    int rc = 0;
    for (uint64_t i = 0; i <= mask && rc == 0; i++) {
        const opprof_site *site = __atomic_load_n(&slots[i].site, __ATOMIC_ACQUIRE);
        if (!site) continue;
        const op_aggslot *s = &slots[i];
        uint64_t count = OP_LOAD(&s->count) + extra[i].count;
        if (!count) continue;
        op_aggrow *r = op_trace_add_agg(tr);
        if (!r) {
            rc = -1;
            break;
        }
        const char *name = site->name ? site->name : "(null)";
        r->name = op_trace_intern(tr, name, strlen(name));
        if (r->name == UINT32_MAX) rc = -1;
        r->cat = (uint8_t)site->category;
        if (s->shapes && (r->shapes = shapes_of(ctx, s->shapes, s->nin, s->nwords)) == UINT32_MAX) rc = -1;
        if (s->stack && (r->stack = stack_of(ctx, s->stack)) == UINT32_MAX) rc = -1;
        r->count = count;
        r->total_ns = span_ns(tb, (int64_t)(OP_LOAD(&s->total) + extra[i].total));
        r->self_ns = span_ns(tb, (int64_t)(OP_LOAD(&s->self) + extra[i].self));
        uint64_t t1 = OP_LOAD(&s->first_t1);
        if (!t1) t1 = extra[i].first_t1;
        r->first_start_ns = op_timebase_ns(tb, OP_LOAD(&s->first_t0));
        r->first_end_ns = op_timebase_ns(tb, t1 ? t1 : close_ticks);
        r->flops = OP_LOAD(&s->flops) + extra[i].flops;
        r->mem = OP_LOAD(&s->mem) + extra[i].mem;
        r->self_mem = OP_LOAD(&s->self_mem) + extra[i].self_mem;
    }
    free(extra);
    return rc;
}

static int row_before(const void *pa, const void *pb)
{
    const op_aggrow *a = pa, *b = pb;
    if (a->first_start_ns != b->first_start_ns) return a->first_start_ns < b->first_start_ns ? -1 : 1;
    if (a->first_end_ns != b->first_end_ns) return a->first_end_ns > b->first_end_ns ? -1 : 1;
    return 0;
}

void op_collect_agg_sort(opprof_trace *tr)
{
    if (tr->nagg > 1) qsort(tr->agg, tr->nagg, sizeof *tr->agg, row_before);
}

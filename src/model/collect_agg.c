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

/* OP_OPT_PATHS: the call paths of the thread's nodes as trace stacks (the
 * enclosing ranges' names, innermost first), each made once. */
typedef struct paths {
    opprof_trace *tr;
    const op_aggslot *slots;
    uint64_t *at;     /* node id -> slot index + 1 */
    uint32_t *stack;  /* node id -> its path as a stack (index + 1), 0 not made */
    uint64_t n;
} paths;

static int paths_init(paths *p, opprof_trace *tr, const op_aggslot *slots, uint64_t mask)
{
    memset(p, 0, sizeof *p);
    p->tr = tr;
    p->slots = slots;
    for (uint64_t i = 0; i <= mask; i++)
        if (__atomic_load_n(&slots[i].site, __ATOMIC_ACQUIRE) && slots[i].id > p->n) p->n = slots[i].id;
    p->at = calloc(p->n + 1, sizeof *p->at);
    p->stack = calloc(p->n + 1, sizeof *p->stack);
    if (!p->at || !p->stack) return -1;
    for (uint64_t i = 0; i <= mask; i++)
        if (__atomic_load_n(&slots[i].site, __ATOMIC_ACQUIRE)) p->at[slots[i].id] = i + 1;
    return 0;
}

static void paths_free(paths *p)
{
    free(p->at);
    free(p->stack);
}

/* The stack of node id's path, it included: its name, then its
 * ancestors'. UINT32_MAX when out of memory. */
static uint32_t path_stack(paths *p, uint64_t id)
{
    if (!id || id > p->n || !p->at[id]) return 0;
    if (p->stack[id]) return p->stack[id];
    uint32_t frames[OP_MAX_DEPTH + 1];
    uint32_t n = 0;
    for (uint64_t k = id; k && k <= p->n && p->at[k] && n <= OP_MAX_DEPTH; k = p->slots[p->at[k] - 1].stack) {
        const opprof_site *site = p->slots[p->at[k] - 1].site;
        const char *name = site->name ? site->name : "(null)";
        if ((frames[n++] = op_trace_intern(p->tr, name, strlen(name))) == UINT32_MAX) return UINT32_MAX;
    }
    uint32_t s = op_trace_add_stack(p->tr, frames, n);
    if (!s) return UINT32_MAX;
    return p->stack[id] = s;
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
        uint64_t t0 = OP_LOAD(&o->t0);
        uint64_t dur = op_agg_comp(close_ticks - t0, a->comp_inside, a->comp_call,
                                   OP_LOAD(&a->nbegun) - OP_LOAD(&o->n0) - 1);
        op_aggslot *s = OP_LOAD(&o->slot);
        uint64_t mine = OP_LOAD(&o->child) + child;
        int64_t self_mem = OP_LOAD(&o->self_mem), mem = self_mem + OP_LOAD(&o->child_mem) + child_mem;
        if (s >= slots && s <= slots + mask) {
            sums *x = &extra[s - slots];
            x->count++;
            x->total += dur;
            x->self += op_agg_self(dur, mine);
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
    int by_path = (t->opts & OP_OPT_PATHS) != 0; /* never with with_stack */
    paths pa;
    int rc = by_path ? paths_init(&pa, tr, slots, mask) : 0;
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
        if (by_path) r->stack = path_stack(&pa, s->stack); /* the enclosing path */
        else if (s->stack) r->stack = stack_of(ctx, s->stack);
        if (r->stack == UINT32_MAX) rc = -1;
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
    if (by_path) paths_free(&pa);
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

/* Online key averages: a session whose only consumers are tables
 * (opprof_config.aggregate) keeps no events. Each thread sums its ranges
 * per site (and input shapes with record_shapes, and call stack with
 * with_stack) as they end: count, total and self time, with self time from a
 * stack of the ranges still open (each adds its duration to its parent's
 * children time). Memory is the table of distinct sites plus the open stack,
 * for any length of run: no cap applies and nothing is dropped.
 *
 * The owner thread is the only writer; the collector reads after the
 * session's generation is closed, and a thread still inside a call at that
 * moment may write beside it, so every field the collector reads is stored
 * with relaxed atomics (plain moves on x86-64 and aarch64). Slot lookups
 * hash the site's address; recording into a known site takes no lock, no
 * allocation and no system call. */
#ifndef OPPROF_CAPTURE_AGG_H
#define OPPROF_CAPTURE_AGG_H

#include <stdint.h>

#include "capture/state.h"
#include "opprof.h"
#include "common/compiler.h"

typedef struct op_aggslot {
    const opprof_site *site; /* NULL: empty */
    uint64_t shash;          /* with record_shapes: a hash of the input shapes, 0 for none */
    const uint64_t *shapes;  /* their encoding, the event path's (descriptors, then dims); NULL none */
    uint32_t nin, nwords;    /* inputs, words of the encoding */
    uint64_t stack;          /* with_stack: the begin's stack, its entry in the thread's stacktab; 0 none.
                              * OP_OPT_PATHS: the enclosing range's slot id; 0 at top level */
    uint64_t id;             /* 1, 2, ... in the order the thread's slots were made */
    uint64_t count;
    uint64_t total, self;    /* ticks */
    uint64_t first_t0;       /* the first range's begin and end: the order of the table's rows */
    uint64_t first_t1;       /* 0 while the first range is open */
    uint64_t flops;          /* with_flops */
    int64_t mem, self_mem;   /* profile_memory: bytes allocated minus freed, children included or not */
} op_aggslot;

typedef struct op_aggopen {
    const opprof_site *site;
    op_aggslot *slot; /* NULL: not counted (out of memory) */
    uint64_t t0;
    uint64_t child;   /* ticks of the children that ended */
    uint64_t first;   /* the slot's first range */
    uint64_t n0;      /* ranges the thread began before this one (overhead compensation) */
    uint64_t flops;   /* from the site's hook at begin, or opprof_end_flops */
    int64_t self_mem, child_mem; /* bytes while innermost; the children's totals */
} op_aggopen;

#define OP_AGG_OLD_MAX 40 /* tables grown out of, kept until the next session */

typedef struct op_agg {
    op_aggslot *slots; /* mask + 1 of them */
    uint64_t mask, n;
    op_aggslot *old[OP_AGG_OLD_MAX];
    uint64_t old_mask[OP_AGG_OLD_MAX];
    unsigned nold;
    /* profile_memory: memory events outside every range ([memory] row) */
    uint64_t free_count;
    int64_t free_bytes;
    uint64_t free_first; /* ticks of the first; valid when free_count */
    /* shape encodings of the slots, in mapped blocks chained by their first
     * word; kept until the next session, for the collector */
    uint64_t *sp, *slim;
    uint64_t *sblocks;
    /* Overhead compensation (op_agg_compensate): ranges begun so far, and
     * the ticks each range loses of its own (inside) and per range begun
     * within it (a whole call); both 0 when off, which changes nothing. */
    uint64_t nbegun;
    uint64_t comp_inside, comp_call;
    op_aggopen open[]; /* OP_MAX_DEPTH entries; the depth is the thread's */
} op_agg;

/* With OP_OPT_PATHS (and no with_stack) a slot is a node of the thread's
 * call tree: its key holds its parent's slot id, so that its sums are those
 * of one call path, from which the collector names the path (the enclosing
 * ranges' names) and folded stacks of the call tree come without events.
 * Summed by name, the paths give the same table: each range is in one. */

/* Maps or empties the thread's tables for a new session; 0 or -1. */
OP_SEAM int op_agg_reset(op_tstate *t);
OP_SEAM void op_agg_free(op_tstate *t);

/* Overhead compensation for the sums of the threads whose tables are
 * reset from now on (op_agg_reset: a session's threads, a streamed
 * writer's replay): inside and call in ticks, 0 0 for none. */
void op_agg_compensate(uint64_t inside, uint64_t call);

/* A range's duration with the instrumentation's cost taken out: its own
 * inside part, and a whole call per range begun within it (never below 0). */
static inline uint64_t op_agg_comp(uint64_t dur, uint64_t inside, uint64_t call, uint64_t within)
{
    uint64_t sub = inside + within * call;
    return dur > sub ? dur - sub : 0;
}

/* A range's self time: its duration less its children's. Compensated, the
 * children can hold more than the range itself when the calibration took
 * out more per call than the run's calls cost (it varies by 30% between
 * runs on a VM whose speed drifts): the self time is then 0, never a
 * wrapped negative. Uncompensated, a duration always covers its children. */
static inline uint64_t op_agg_self(uint64_t dur, uint64_t child)
{
    return dur > child ? dur - child : 0;
}

static inline uint64_t op_agg_comp_dur(const op_agg *a, const op_aggopen *o, uint64_t dur)
{
    return op_agg_comp(dur, a->comp_inside, a->comp_call, a->nbegun - o->n0 - 1);
}

/* The aggregating begin and end, all cases (record.c's slow paths in this
 * mode): inputs for the site's FLOPs hook (with_flops), ra the public
 * call's return address (with_stack: where the stack starts); ts is the
 * end's clock, flops when has_flops (opprof_end_flops). */
void op_agg_begin(op_tstate *t, const opprof_site *site, const opprof_input *in, unsigned n, const void *ra);
/* The same with the stack part of the key given (0: none) instead of
 * captured: a replay of records whose stacks were taken when they were
 * recorded (model/stream.c keys them by their stack in its trace). */
OP_SEAM void op_agg_begin_keyed(op_tstate *t, const opprof_site *site, const opprof_input *in, unsigned n,
                                uint64_t stack);
OP_SEAM int op_agg_end(op_tstate *t, const opprof_site *site, uint64_t ts, int has_flops, uint64_t flops);

/* A memory event at ts (profile_memory): the innermost open range's, or
 * the [memory] row's. */
OP_SEAM void op_agg_memory(op_tstate *t, int64_t bytes, uint64_t ts);

/* The profiler worked on this thread from `from` to `to` (a symbol lookup):
 * the open ranges start that much later, so that none is charged. */
OP_SEAM void op_agg_gap(op_tstate *t, uint64_t from, uint64_t to);

/* The common cases inline, for record.c's paths when t->agg_gen matches
 * (the built-in clock): a known site below the depth limit, and an end of
 * the innermost range. */

/* The home slot of a site with shapes of hash shash (0: none) and stack
 * entry stack (0: none). */
static inline size_t op_agg_hash(const opprof_site *s, uint64_t shash, uint64_t stack, uint64_t mask)
{
    return (size_t)((((uint64_t)(uintptr_t)s ^ shash ^ (stack * 0xff51afd7ed558ccdull)) * 0x9e3779b97f4a7c15ull) >>
                    32) &
           mask;
}

/* The common begin: a site already seen in this place (a known callee of
 * a known caller), no shapes, stacks, FLOPs or memory. Opens the range but
 * for its t0, which the caller stores last; NULL when the general path
 * must run. */
static inline op_aggopen *op_agg_open_fast(op_tstate *t, const opprof_site *site)
{
    op_agg *a = t->agg;
    uint32_t d = t->depth;
    uint64_t up = 0;
    if (t->opts & OP_OPT_PATHS) { /* the call path: the parent's node (never with with_stack) */
        const op_aggslot *p = d && d <= OP_MAX_DEPTH ? a->open[d - 1].slot : NULL;
        up = p ? p->id : 0;
    }
    op_aggslot *s = &a->slots[op_agg_hash(site, 0, up, a->mask)];
    if (OP_UNLIKELY(s->site != site || s->shash || s->stack != up || d >= OP_MAX_DEPTH ||
                    (t->opts & (OP_OPT_FLOPS | OP_OPT_MEMORY | OP_OPT_STACK))))
        return NULL;
    op_aggopen *o = &a->open[d];
    OP_STORE(&o->site, site);
    OP_STORE(&o->slot, s);
    OP_STORE(&o->child, 0);
    OP_STORE(&o->first, 0);
    OP_STORE(&o->n0, a->nbegun);
    OP_STORE(&a->nbegun, a->nbegun + 1);
    OP_STORE(&t->depth, d + 1);
    return o;
}

static inline void op_agg_begin_fast(op_tstate *t, const opprof_site *site, const void *ra)
{
    op_aggopen *o = op_agg_open_fast(t, site);
    if (OP_UNLIKELY(!o)) {
        op_agg_begin(t, site, NULL, 0, ra);
        return;
    }
    OP_STORE(&o->t0, op_cycles());
}

static inline int op_agg_end_fast(op_tstate *t, const opprof_site *site, uint64_t ts)
{
    uint32_t d = t->depth;
    if (OP_UNLIKELY(d == 0 || t->overflow || (t->opts & (OP_OPT_FLOPS | OP_OPT_MEMORY))))
        return op_agg_end(t, site, ts, 0, 0);
    op_aggopen *o = &t->agg->open[d - 1];
    if (OP_UNLIKELY(o->site != site || o->first || !o->slot)) return op_agg_end(t, site, ts, 0, 0);
    op_aggslot *s = o->slot;
    uint64_t dur = op_agg_comp_dur(t->agg, o, ts - o->t0);
    OP_STORE(&s->count, s->count + 1);
    OP_STORE(&s->total, s->total + dur);
    OP_STORE(&s->self, s->self + op_agg_self(dur, o->child));
    if (d > 1) OP_STORE(&o[-1].child, o[-1].child + dur);
    OP_STORE(&t->depth, d - 1);
    return OPPROF_OK;
}

#endif

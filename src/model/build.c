/* op_trace_finish: order the events and derive the call tree, self time,
 * memory attribution and device time. The rules are those of docs/DESIGN.md
 * ("Reading a trace") and of PyTorch's EventList. */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/map.h"
#include "common/satmath.h"
#include "common/sort.h"
#include "common/vec.h"
#include "model/model.h"
#include "model/samples.h"

static int mem_before(const void *ctx, uint32_t a, uint32_t b)
{
    const op_mem_event *m = ctx;
    return m[a].ts_ns < m[b].ts_ns;
}

/* Per-thread stacks of open host events, grown on demand. */
typedef struct stacks {
    int32_t **s;
    uint32_t *n;
    size_t *cap;
    size_t nthreads;
} stacks;

static int stacks_init(stacks *st, size_t nthreads)
{
    st->nthreads = nthreads;
    st->s = calloc(nthreads ? nthreads : 1, sizeof *st->s);
    st->n = calloc(nthreads ? nthreads : 1, sizeof *st->n);
    st->cap = calloc(nthreads ? nthreads : 1, sizeof *st->cap);
    return st->s && st->n && st->cap ? 0 : -1;
}

static void stacks_free(stacks *st)
{
    for (size_t i = 0; i < st->nthreads && st->s; i++) free(st->s[i]);
    free(st->s);
    free(st->n);
    free(st->cap);
}

static int stacks_push(stacks *st, uint32_t th, int32_t v)
{
    if (op_grow(&st->s[th], &st->cap[th], (size_t)st->n[th] + 1, sizeof *st->s[th])) return -1;
    st->s[th][st->n[th]++] = v;
    return 0;
}

static int64_t ev_end(const op_event *e)
{
    return e->start_ns + e->dur_ns;
}

/* Drops from the thread's stack every event that does not wholly contain
 * [s, end]; returns the innermost one left, -1 for none. */
static int32_t enclosing(stacks *st, const opprof_trace *t, uint32_t th, int64_t s, int64_t end)
{
    while (st->n[th]) {
        const op_event *top = &t->ev[st->s[th][st->n[th] - 1]];
        if (s >= top->start_ns && end <= ev_end(top)) return st->s[th][st->n[th] - 1];
        st->n[th]--;
    }
    return -1;
}

static int build_tree(opprof_trace *t)
{
    stacks st;
    if (stacks_init(&st, t->nthreads) != 0) {
        stacks_free(&st);
        return -1;
    }
    for (size_t i = 0; i < t->nev; i++) {
        op_event *e = &t->ev[i];
        e->self_ns = e->dur_ns;
        e->parent = -1;
        if (op_cat_is_device(e->cat)) {
            e->flags |= OPPROF_EVENT_DEVICE;
            if (e->dur_ns || e->x) {
                op_evx *x = op_evx_add(t, e);
                if (!x) {
                    stacks_free(&st);
                    return -1;
                }
                x->dev_self_ns = x->dev_total_ns = e->dur_ns;
            }
            continue;
        }
        if (!op_cat_is_host(e->cat)) continue;
        int32_t p = enclosing(&st, t, e->thread, e->start_ns, ev_end(e));
        if (p >= 0) {
            e->parent = p;
            t->ev[p].self_ns -= e->dur_ns;
        }
        if (stacks_push(&st, e->thread, (int32_t)i) != 0) {
            stacks_free(&st);
            return -1;
        }
    }
    stacks_free(&st);
    return 0;
}

/* Attributes each memory event to the innermost host event open on its own
 * thread at its time (PyTorch uses any thread's interval; per-thread
 * attribution keeps concurrent threads from taking each other's bytes). */
static int attribute_memory(opprof_trace *t)
{
    if (!t->nmem) return 0;
    int sorted = 1;
    for (size_t i = 1; i < t->nmem; i++)
        if (t->mem[i].ts_ns < t->mem[i - 1].ts_ns) sorted = 0;
    if (!sorted) {
        size_t n = t->nmem;
        uint32_t *k = malloc(n * sizeof *k);
        op_mem_event *copy = malloc(n * sizeof *copy);
        if (!k || !copy || n > UINT32_MAX) {
            free(k);
            free(copy);
            return -1;
        }
        for (size_t i = 0; i < n; i++) k[i] = (uint32_t)i;
        if (op_sort_index(k, n, mem_before, t->mem) != 0) {
            free(k);
            free(copy);
            return -1;
        }
        for (size_t i = 0; i < n; i++) copy[i] = t->mem[k[i]];
        memcpy(t->mem, copy, n * sizeof *copy);
        free(k);
        free(copy);
    }
    stacks st;
    if (stacks_init(&st, t->nthreads) != 0) {
        stacks_free(&st);
        return -1;
    }
    size_t e = 0;
    int64_t live = 0, live_dev[16] = {0};
    int sat = 0;
    for (size_t m = 0; m < t->nmem; m++) {
        op_mem_event *me = &t->mem[m];
        for (; e < t->nev && t->ev[e].start_ns <= me->ts_ns; e++) {
            op_event *ev = &t->ev[e];
            if (!op_cat_is_host(ev->cat)) continue;
            (void)enclosing(&st, t, ev->thread, ev->start_ns, ev_end(ev));
            if (stacks_push(&st, ev->thread, (int32_t)e) != 0) {
                stacks_free(&st);
                return -1;
            }
        }
        /* A producer that saw the order of ranges and memory on the thread
         * knows better than the times; otherwise containment decides. */
        if (me->enclosing != OP_MEM_FIND)
            me->op = me->enclosing >= 0 && (size_t)me->enclosing < t->nev ? me->enclosing : -1;
        else
            me->op = me->thread < t->nthreads ? enclosing(&st, t, me->thread, me->ts_ns, me->ts_ns) : -1;
        /* Device memory is kept out of the CPU memory columns, as in PyTorch. */
        if (me->op >= 0 && me->device_type == 0 && me->bytes) {
            op_evx *x = op_evx_add(t, &t->ev[me->op]);
            if (!x) {
                stacks_free(&st);
                return -1;
            }
            x->mem_self = op_sat_add(x->mem_self, me->bytes, &sat);
        }
        /* Each device's allocator has its own running total. */
        int64_t *total = me->device_type == 0 ? &live : &live_dev[(unsigned)me->device_id % 16];
        *total = op_sat_add(*total, me->bytes, &sat);
        if (!t->mem_totals_given) me->total_allocated = *total;
    }
    stacks_free(&st);
    for (size_t i = t->nev; i-- > 0;) {
        op_event *ev = &t->ev[i];
        if (!ev->x) continue; /* no memory of its own or below it */
        op_evx *x = &t->evx[ev->x - 1];
        x->mem_total = op_sat_add(x->mem_total, x->mem_self, &sat);
        int64_t total = x->mem_total;
        if (ev->parent >= 0 && total) {
            op_evx *px = op_evx_add(t, &t->ev[ev->parent]);
            if (!px) return -1;
            px->mem_total = op_sat_add(px->mem_total, total, &sat);
        }
    }
    if (sat) t->options |= OP_TRACE_SATURATED;
    return 0;
}

/* Correlation and external ids (int64) -> event index, in op_maps reserved
 * for every event so that a put cannot fail. */

/* Inserts key -> v; with keep_first an existing key keeps its value. */
static void idmap_put(op_map *m, int64_t key, int32_t v, int keep_first)
{
    int added;
    uint64_t *p = op_map_at(m, (uint64_t)key, &added);
    if (p && (added || !keep_first)) *p = (uint64_t)v;
}

static int32_t idmap_get(const op_map *m, int64_t key)
{
    const uint64_t *p = op_map_get(m, (uint64_t)key);
    return p ? (int32_t)*p : -1;
}

static int charge_device_time(opprof_trace *t)
{
    size_t ndev = 0, ncorr = 0, next = 0;
    for (size_t i = 0; i < t->nev; i++) {
        const op_event *e = &t->ev[i];
        ndev += op_cat_is_device(e->cat);
        if (op_cat_is_host(e->cat)) {
            ncorr += op_cat_is_launch(e->cat) && (e->flags & OP_EV_HAS_CORR);
            next += !op_cat_is_launch(e->cat) && (e->flags & OP_EV_HAS_EXT);
        }
    }
    if (!ndev) return 0;
    t->options |= OP_TRACE_DEVICE;
    op_map by_corr = {0}, by_ext = {0};
    int rc = -1, sat = 0;
    /* sized by the ids there are, not by every event */
    if (op_map_reserve(&by_corr, ncorr) != 0 || op_map_reserve(&by_ext, next) != 0) goto out;
    for (size_t i = 0; i < t->nev; i++) {
        const op_event *e = &t->ev[i];
        if (!op_cat_is_host(e->cat)) continue;
        /* ref_summary keeps the last launch for a correlation id and the
         * first operator for an external id. */
        if (op_cat_is_launch(e->cat)) {
            if (e->flags & OP_EV_HAS_CORR) idmap_put(&by_corr, op_evx_of(t, e)->correlation, (int32_t)i, 0);
        } else if (e->flags & OP_EV_HAS_EXT) {
            idmap_put(&by_ext, op_evx_of(t, e)->external_id, (int32_t)i, 1);
        }
    }
    for (size_t i = 0; i < t->nev; i++) {
        const op_event *d = &t->ev[i];
        if (!op_cat_is_device(d->cat)) continue;
        int32_t target = -1;
        const op_evx *dx = op_evx_of(t, d);
        int32_t launch = (d->flags & OP_EV_HAS_CORR) ? idmap_get(&by_corr, dx->correlation) : -1;
        if (launch >= 0) {
            target = t->ev[launch].parent;
            while (target >= 0 && op_cat_is_launch(t->ev[target].cat)) target = t->ev[target].parent;
        } else if (d->flags & OP_EV_HAS_EXT) {
            target = idmap_get(&by_ext, dx->external_id);
        }
        if (target >= 0 && d->dur_ns) {
            int64_t dur = d->dur_ns;
            op_evx *tx = op_evx_add(t, &t->ev[target]);
            if (!tx) goto out;
            tx->dev_self_ns = op_sat_add(tx->dev_self_ns, dur, &sat);
        }
    }
    for (size_t i = t->nev; i-- > 0;) {
        op_event *e = &t->ev[i];
        if (!op_cat_is_host(e->cat) || !e->x) continue;
        op_evx *x = &t->evx[e->x - 1];
        x->dev_total_ns = op_sat_add(x->dev_total_ns, x->dev_self_ns, &sat);
        int64_t total = x->dev_total_ns;
        if (e->parent >= 0 && total) {
            op_evx *px = op_evx_add(t, &t->ev[e->parent]);
            if (!px) goto out;
            px->dev_total_ns = op_sat_add(px->dev_total_ns, total, &sat);
        }
    }
    if (sat) t->options |= OP_TRACE_SATURATED;
    rc = 0;
out:
    op_map_free(&by_corr);
    op_map_free(&by_ext);
    return rc;
}

int op_trace_finish(opprof_trace *t)
{
    if (!t) return op_fail(OPPROF_E_INVAL, "op_trace_finish: NULL trace");
    if (t->finished) return OPPROF_OK;
    if (op_order_events(t) != 0 || build_tree(t) != 0 || attribute_memory(t) != 0 || charge_device_time(t) != 0 ||
        op_samples_attribute(t) != 0)
        return op_fail(OPPROF_E_NOMEM, "out of memory while building the event model (%zu events)", t->nev);
    t->finished = 1;
    return OPPROF_OK;
}

/* op_trace_finish: order the events and derive the call tree, self time,
 * memory attribution and device time. The rules are those of
 * ../shared/tools/ref_summary.py and of PyTorch's EventList. */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/map.h"
#include "common/satmath.h"
#include "model/model.h"

typedef struct sort_key {
    int64_t start;
    int64_t neg_end;
    uint32_t idx;
} sort_key;

static int key_less(const sort_key *a, const sort_key *b)
{
    if (a->start != b->start) return a->start < b->start;
    if (a->neg_end != b->neg_end) return a->neg_end < b->neg_end;
    return a->idx < b->idx;
}

/* Stable bottom-up merge sort; qsort is neither stable nor fast enough for
 * millions of events. */
static int sort_keys(sort_key *k, size_t n)
{
    size_t i;
    for (i = 1; i < n; i++)
        if (key_less(&k[i], &k[i - 1])) break;
    if (i >= n) return 0; /* already ordered: the usual case for a live session of one thread */
    sort_key *tmp = malloc(n * sizeof *tmp);
    if (!tmp) return -1;
    sort_key *src = k, *dst = tmp;
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi) dst[o++] = key_less(&src[b], &src[a]) ? src[b++] : src[a++];
            while (a < mid) dst[o++] = src[a++];
            while (b < hi) dst[o++] = src[b++];
        }
        sort_key *s = src;
        src = dst;
        dst = s;
    }
    if (src != k) memcpy(k, src, n * sizeof *k);
    free(tmp);
    return 0;
}

static int order_events(opprof_trace *t)
{
    size_t n = t->nev;
    if (n < 2) return 0;
    sort_key *k = malloc(n * sizeof *k);
    if (!k) return -1;
    for (size_t i = 0; i < n; i++) {
        k[i].start = t->ev[i].start_ns;
        k[i].neg_end = -(t->ev[i].start_ns + t->ev[i].dur_ns);
        k[i].idx = (uint32_t)i;
    }
    if (sort_keys(k, n) != 0) {
        free(k);
        return -1;
    }
    size_t i;
    for (i = 0; i < n && k[i].idx == i; i++) {
    }
    if (i < n) {
        op_event *ev = malloc(n * sizeof *ev);
        if (!ev) {
            free(k);
            return -1;
        }
        for (size_t j = 0; j < n; j++) ev[j] = t->ev[k[j].idx];
        /* The producer's event indices to the new order (k's idx is free now). */
        int given = 0;
        for (size_t m = 0; m < t->nmem && !given; m++) given = t->mem[m].enclosing >= 0;
        int32_t *pos = given ? malloc(n * sizeof *pos) : NULL;
        if (given && !pos) {
            free(ev);
            free(k);
            return -1;
        }
        if (pos) {
            for (size_t j = 0; j < n; j++) pos[k[j].idx] = (int32_t)j;
            for (size_t m = 0; m < t->nmem; m++) {
                int32_t *enc = &t->mem[m].enclosing;
                if (*enc >= 0) *enc = (size_t)*enc < n ? pos[*enc] : OP_MEM_FIND;
            }
            free(pos);
        }
        free(t->ev);
        t->ev = ev;
        t->cap_ev = n;
    }
    free(k);
    return 0;
}

/* Per-thread stacks of open host events, grown on demand. */
typedef struct stacks {
    int32_t **s;
    uint32_t *n, *cap;
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
    if (st->n[th] == st->cap[th]) {
        uint32_t c = st->cap[th] ? st->cap[th] * 2 : 32;
        int32_t *p = realloc(st->s[th], c * sizeof *p);
        if (!p) return -1;
        st->s[th] = p;
        st->cap[th] = c;
    }
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
        e->depth = 0;
        if (op_cat_is_device(e->cat)) {
            e->flags |= OPPROF_EVENT_DEVICE;
            e->dev_self_ns = e->dev_total_ns = e->dur_ns;
            continue;
        }
        if (!op_cat_is_host(e->cat)) continue;
        int32_t p = enclosing(&st, t, e->thread, e->start_ns, ev_end(e));
        if (p >= 0) {
            e->parent = p;
            e->depth = (uint16_t)(t->ev[p].depth < UINT16_MAX ? t->ev[p].depth + 1 : UINT16_MAX);
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
        sort_key *k = malloc(n * sizeof *k);
        op_mem_event *copy = malloc(n * sizeof *copy);
        if (!k || !copy) {
            free(k);
            free(copy);
            return -1;
        }
        for (size_t i = 0; i < n; i++) {
            k[i].start = t->mem[i].ts_ns;
            k[i].neg_end = 0;
            k[i].idx = (uint32_t)i;
        }
        if (sort_keys(k, n) != 0) {
            free(k);
            free(copy);
            return -1;
        }
        for (size_t i = 0; i < n; i++) copy[i] = t->mem[k[i].idx];
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
        if (me->op >= 0 && me->device_type == 0)
            t->ev[me->op].mem_self = op_sat_add(t->ev[me->op].mem_self, me->bytes, &sat);
        /* Each device's allocator has its own running total. */
        int64_t *total = me->device_type == 0 ? &live : &live_dev[(unsigned)me->device_id % 16];
        *total = op_sat_add(*total, me->bytes, &sat);
        if (!t->mem_totals_given) me->total_allocated = *total;
    }
    stacks_free(&st);
    for (size_t i = t->nev; i-- > 0;) {
        op_event *ev = &t->ev[i];
        ev->mem_total = op_sat_add(ev->mem_total, ev->mem_self, &sat);
        if (ev->parent >= 0)
            t->ev[ev->parent].mem_total = op_sat_add(t->ev[ev->parent].mem_total, ev->mem_total, &sat);
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
    size_t ndev = 0;
    for (size_t i = 0; i < t->nev; i++) ndev += op_cat_is_device(t->ev[i].cat);
    if (!ndev) return 0;
    t->options |= OP_TRACE_DEVICE;
    op_map by_corr = {0}, by_ext = {0};
    int rc = -1, sat = 0;
    if (op_map_reserve(&by_corr, t->nev) != 0 || op_map_reserve(&by_ext, t->nev) != 0) goto out;
    for (size_t i = 0; i < t->nev; i++) {
        const op_event *e = &t->ev[i];
        if (!op_cat_is_host(e->cat)) continue;
        /* ref_summary keeps the last launch for a correlation id and the
         * first operator for an external id. */
        if (op_cat_is_launch(e->cat)) {
            if (e->flags & OP_EV_HAS_CORR) idmap_put(&by_corr, e->correlation, (int32_t)i, 0);
        } else if (e->flags & OP_EV_HAS_EXT) {
            idmap_put(&by_ext, e->external_id, (int32_t)i, 1);
        }
    }
    for (size_t i = 0; i < t->nev; i++) {
        const op_event *d = &t->ev[i];
        if (!op_cat_is_device(d->cat)) continue;
        int32_t target = -1;
        int32_t launch = (d->flags & OP_EV_HAS_CORR) ? idmap_get(&by_corr, d->correlation) : -1;
        if (launch >= 0) {
            target = t->ev[launch].parent;
            while (target >= 0 && op_cat_is_launch(t->ev[target].cat)) target = t->ev[target].parent;
        } else if (d->flags & OP_EV_HAS_EXT) {
            target = idmap_get(&by_ext, d->external_id);
        }
        if (target >= 0) t->ev[target].dev_self_ns = op_sat_add(t->ev[target].dev_self_ns, d->dur_ns, &sat);
    }
    for (size_t i = t->nev; i-- > 0;) {
        op_event *e = &t->ev[i];
        if (!op_cat_is_host(e->cat)) continue;
        e->dev_total_ns = op_sat_add(e->dev_total_ns, e->dev_self_ns, &sat);
        if (e->parent >= 0)
            t->ev[e->parent].dev_total_ns = op_sat_add(t->ev[e->parent].dev_total_ns, e->dev_total_ns, &sat);
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
    if (order_events(t) != 0 || build_tree(t) != 0 || attribute_memory(t) != 0 || charge_device_time(t) != 0)
        return op_fail(OPPROF_E_NOMEM, "out of memory while building the event model (%zu events)", t->nev);
    t->finished = 1;
    return OPPROF_OK;
}

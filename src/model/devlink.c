/* The start-time index of a trace's host events (see devlink.h). */
#include <stdlib.h>

#include "model/devlink.h"

static int key_cmp(const void *a, const void *b)
{
    const op_link_key *x = a, *y = b;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    if (x->start_ns != y->start_ns) return x->start_ns < y->start_ns ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int op_link_index_build(op_link_index *ix, const opprof_trace *tr)
{
    ix->n = 0;
    ix->up = NULL;
    ix->keys = malloc((tr->nev ? tr->nev : 1) * sizeof *ix->keys);
    if (!ix->keys) return -1;
    for (size_t i = 0; i < tr->nev; i++) {
        const op_event *e = &tr->ev[i];
        if (!op_cat_is_host(e->cat) || op_cat_is_launch(e->cat)) continue;
        ix->keys[ix->n++] = (op_link_key){e->thread, (uint32_t)i, e->start_ns};
    }
    qsort(ix->keys, ix->n, sizeof *ix->keys, key_cmp);
    /* Each key's enclosing key: a stack of the keys still open at the
     * current start, per thread (a parent sorts before the ranges it holds). */
    ix->up = malloc((ix->n ? ix->n : 1) * sizeof *ix->up);
    uint32_t *open = malloc((ix->n ? ix->n : 1) * sizeof *open);
    if (!ix->up || !open) {
        free(open);
        op_link_index_free(ix);
        return -1;
    }
    size_t depth = 0;
    for (size_t i = 0; i < ix->n; i++) {
        const op_link_key *k = &ix->keys[i];
        int64_t end = k->start_ns + tr->ev[k->idx].dur_ns;
        while (depth) {
            const op_link_key *o = &ix->keys[open[depth - 1]];
            if (o->thread == k->thread && end <= o->start_ns + tr->ev[o->idx].dur_ns) break;
            depth--;
        }
        ix->up[i] = depth ? open[depth - 1] : UINT32_MAX;
        open[depth++] = (uint32_t)i;
    }
    free(open);
    return 0;
}

void op_link_index_free(op_link_index *ix)
{
    free(ix->keys);
    free(ix->up);
    ix->keys = NULL;
    ix->up = NULL;
    ix->n = 0;
}

/* The first key after (thread, t_ns): keys before it start at or before t. */
static size_t first_after(const op_link_index *ix, uint32_t thread, int64_t t_ns)
{
    size_t lo = 0, hi = ix->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const op_link_key *k = &ix->keys[mid];
        if (k->thread < thread || (k->thread == thread && k->start_ns <= t_ns))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int64_t op_link_enclosing(const op_link_index *ix, const opprof_trace *tr, uint32_t thread, int64_t t_ns)
{
    size_t at = first_after(ix, thread, t_ns);
    if (at == 0 || ix->keys[at - 1].thread != thread) return -1;
    /* The last range to start by t is open at t, or ended inside the one
     * that is (nesting): walk out until a range holds t. */
    for (uint32_t i = (uint32_t)(at - 1); i != UINT32_MAX; i = ix->up[i]) {
        const op_link_key *k = &ix->keys[i];
        if (t_ns <= k->start_ns + tr->ev[k->idx].dur_ns) return k->idx;
    }
    return -1;
}

int64_t op_link_find(const op_link_index *ix, const opprof_trace *tr, uint32_t thread, int64_t start_ns,
                     uint32_t name)
{
    size_t lo = 0, hi = ix->n;
    while (lo < hi) { /* first key >= (thread, start_ns) */
        size_t mid = lo + (hi - lo) / 2;
        const op_link_key *k = &ix->keys[mid];
        if (k->thread < thread || (k->thread == thread && k->start_ns < start_ns))
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t best = -1;
    for (size_t i = lo; i < ix->n && ix->keys[i].thread == thread && ix->keys[i].start_ns == start_ns; i++) {
        const op_event *e = &tr->ev[ix->keys[i].idx];
        if (name != UINT32_MAX && e->name != name) continue;
        if (best < 0 || e->dur_ns < tr->ev[best].dur_ns) best = ix->keys[i].idx;
    }
    return best;
}

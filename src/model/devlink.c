/* The start-time index of a trace's host events (see link.h). */
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
    ix->keys = malloc((tr->nev ? tr->nev : 1) * sizeof *ix->keys);
    if (!ix->keys) return -1;
    for (size_t i = 0; i < tr->nev; i++) {
        const op_event *e = &tr->ev[i];
        if (!op_cat_is_host(e->cat) || op_cat_is_launch(e->cat)) continue;
        ix->keys[ix->n++] = (op_link_key){e->thread, (uint32_t)i, e->start_ns};
    }
    qsort(ix->keys, ix->n, sizeof *ix->keys, key_cmp);
    return 0;
}

void op_link_index_free(op_link_index *ix)
{
    free(ix->keys);
    ix->keys = NULL;
    ix->n = 0;
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

/* Interval sets (intervals.h). */
#include "ranks/intervals.h"

#include <stdlib.h>

#include "common/vec.h"

void op_ivals_add(op_ivals *a, int64_t s, int64_t e)
{
    if (e <= s || a->oom) return;
    if (op_grow(&a->v, &a->cap, a->n + 1, sizeof *a->v) != 0) {
        a->oom = 1;
        return;
    }
    a->v[a->n++] = (op_ival){s, e};
}

static int by_start(const void *x, const void *y)
{
    const op_ival *a = x, *b = y;
    return (a->s > b->s) - (a->s < b->s);
}

void op_ivals_union(op_ivals *a)
{
    if (a->n < 2) return;
    qsort(a->v, a->n, sizeof *a->v, by_start);
    size_t k = 0;
    for (size_t i = 1; i < a->n; i++) {
        if (a->v[i].s <= a->v[k].e) {
            if (a->v[i].e > a->v[k].e) a->v[k].e = a->v[i].e;
        } else {
            a->v[++k] = a->v[i];
        }
    }
    a->n = k + 1;
}

void op_ivals_subtract(const op_ivals *a, const op_ivals *b, op_ivals *out)
{
    size_t j = 0;
    for (size_t i = 0; i < a->n; i++) {
        int64_t s = a->v[i].s, e = a->v[i].e;
        while (j < b->n && b->v[j].e <= s) j++;
        for (size_t k = j; k < b->n && b->v[k].s < e; k++) {
            if (b->v[k].s > s) op_ivals_add(out, s, b->v[k].s);
            if (b->v[k].e > s) s = b->v[k].e;
        }
        op_ivals_add(out, s, e);
    }
    out->oom |= a->oom | b->oom;
}

int64_t op_ivals_overlap(const op_ivals *a, const op_ivals *b)
{
    int64_t total = 0;
    size_t i = 0, j = 0;
    while (i < a->n && j < b->n) {
        int64_t s = a->v[i].s > b->v[j].s ? a->v[i].s : b->v[j].s;
        int64_t e = a->v[i].e < b->v[j].e ? a->v[i].e : b->v[j].e;
        if (e > s) total += e - s;
        if (a->v[i].e < b->v[j].e) i++;
        else j++;
    }
    return total;
}

int64_t op_ivals_length(const op_ivals *a)
{
    int64_t total = 0;
    for (size_t i = 0; i < a->n; i++) total += a->v[i].e - a->v[i].s;
    return total;
}

void op_ivals_free(op_ivals *a)
{
    free(a->v);
    a->v = NULL;
    a->n = a->cap = 0;
}

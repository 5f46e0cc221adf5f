/* Samples into the model (see samples.h). */
#include "model/samples.h"

#include <stdlib.h>
#include <string.h>

#include "capture/sample.h"
#include "common/error.h"
#include "common/vec.h"
#include "model/stacks.h"

typedef struct take_ctx {
    opprof_trace *tr;
    const op_timebase *tb;
    op_stack_map stacks;
    int failed;
} take_ctx;

static void add_thread_samples(void *arg, int64_t pid, int64_t tid, const char *name, const op_sample_rec *s,
                               size_t n)
{
    take_ctx *c = arg;
    opprof_trace *tr = c->tr;
    if (c->failed) return;
    int64_t th = op_trace_thread(tr, pid, tid);
    if (th < 0 || op_grow(&tr->samples, &tr->cap_samples, tr->nsamples + n, sizeof *tr->samples)) {
        c->failed = 1;
        return;
    }
    if (name && *name && !tr->threads[th].name) {
        uint32_t id = op_trace_intern(tr, name, strlen(name));
        if (id != UINT32_MAX) tr->threads[th].name = id;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t st = op_stack_map_get(&c->stacks, tr, (uint64_t)(uintptr_t)s[i].stack);
        if (st == UINT32_MAX) {
            c->failed = 1;
            return;
        }
        op_sample *o = &tr->samples[tr->nsamples++];
        o->ts_ns = op_timebase_ns(c->tb, s[i].ticks);
        o->thread = (uint32_t)th;
        o->stack = st;
        o->weight = s[i].weight;
        o->cpu_ns = s[i].cpu_ns;
        o->ev = -1;
    }
}

int op_samples_take(opprof_trace *tr, const op_timebase *tb, uint64_t stop_ticks)
{
    int64_t period = op_sample_period_ns();
    if (!period) return OPPROF_OK;
    take_ctx c = {.tr = tr, .tb = tb};
    tr->sample_period_ns = period;
    tr->samples_dropped += op_sample_take(tb->tick0, stop_ticks, add_thread_samples, &c);
    tr->sample_signal_lost = op_sample_lost() ? op_sample_signal() : 0;
    op_stack_map_free(&c.stacks);
    return c.failed ? op_fail(OPPROF_E_NOMEM, "out of memory while reading the samples") : OPPROF_OK;
}

/* The innermost event of list (one thread's events in start order) open at
 * ts, -1 for none: the last one to start at or before ts, or the nearest
 * of its ancestors still open then (an earlier sibling ended before it). */
static int32_t innermost(const opprof_trace *tr, const uint32_t *list, size_t n, int64_t ts)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (tr->ev[list[mid]].start_ns <= ts) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return -1;
    for (int32_t i = (int32_t)list[lo - 1]; i >= 0; i = tr->ev[i].parent)
        if (tr->ev[i].start_ns + tr->ev[i].dur_ns >= ts) return i;
    return -1;
}

int op_samples_attribute(opprof_trace *tr)
{
    if (!tr->sample_period_ns || !tr->nsamples || !tr->nev) return 0;
    /* Each thread's host events, in the model's order (by start). */
    size_t *first = calloc(tr->nthreads + 1, sizeof *first);
    uint32_t *list = malloc(tr->nev * sizeof *list);
    if (!first || !list) {
        free(first);
        free(list);
        return -1;
    }
    for (size_t i = 0; i < tr->nev; i++)
        if (op_cat_is_host(tr->ev[i].cat)) first[tr->ev[i].thread + 1]++;
    for (size_t k = 0; k < tr->nthreads; k++) first[k + 1] += first[k];
    size_t *fill = calloc(tr->nthreads ? tr->nthreads : 1, sizeof *fill);
    int rc = fill ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < tr->nev; i++) {
        const op_event *e = &tr->ev[i];
        if (op_cat_is_host(e->cat)) list[first[e->thread] + fill[e->thread]++] = (uint32_t)i;
    }
    /* A pool that records nothing (OpenMP, a BLAS's threads) works for the
     * one thread that records, when there is exactly one: its samples go to
     * that thread's open range. */
    int64_t only = -1;
    for (size_t k = 0; k < tr->nthreads; k++) {
        if (first[k + 1] == first[k]) continue;
        only = only == -1 ? (int64_t)k : -2;
    }
    for (size_t s = 0; rc == 0 && s < tr->nsamples; s++) {
        op_sample *sm = &tr->samples[s];
        if (sm->thread >= tr->nthreads) continue;
        size_t th = sm->thread;
        if (first[th + 1] == first[th] && only >= 0) th = (size_t)only;
        int32_t in = innermost(tr, list + first[th], first[th + 1] - first[th], sm->ts_ns);
        sm->ev = in;
        int64_t ns = op_sample_ns(sm, tr->sample_period_ns);
        for (int32_t i = in; i >= 0 && rc == 0; i = tr->ev[i].parent) {
            op_evx *x = op_evx_add(tr, &tr->ev[i]);
            if (!x) {
                rc = -1;
                break;
            }
            x->oncpu_total_ns += ns;
            if (i == in) x->oncpu_self_ns += ns;
        }
    }
    free(fill);
    free(first);
    free(list);
    if (rc == 0) tr->options |= OP_TRACE_SAMPLED;
    return rc;
}

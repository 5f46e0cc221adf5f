/* Samples into the model (see samples.h). */
#include "model/samples.h"

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

/* A trace every writer has much to write from: n events on one thread, each
 * with a distinct long name, a two-frame stack and a memory event (the
 * tests of write failures and of interrupted writes): kilobytes per hundred
 * events from every writer. */
#ifndef OPPROF_TESTS_BIG_TRACE_H
#define OPPROF_TESTS_BIG_TRACE_H

#include <stdio.h>
#include <string.h>

#include "model/model.h"
#include "opprof.h"

static inline opprof_trace *big_trace(size_t n)
{
    opprof_trace *t = op_trace_new();
    int64_t th = op_trace_thread(t, 1, 1);
    static const char *const frames[] = {"app.c(42): compute_all_the_things", "main.c(7): main"};
    uint32_t ids[2];
    for (int k = 0; k < 2; k++) ids[k] = op_trace_intern(t, frames[k], strlen(frames[k]));
    uint32_t stack = op_trace_add_stack(t, ids, 2);
    char name[160];
    for (size_t i = 0; i < n; i++) {
        /* Distinct names defeat compression, so gzip output is large too. */
        snprintf(name, sizeof name, "op_%zu_%08zx_%016llx", i, i * 2654435761u,
                 (unsigned long long)(i * 0x9E3779B97F4A7C15ull));
        op_event *e = op_trace_add_event(t, (uint32_t)th, op_trace_intern(t, name, strlen(name)), OPPROF_CAT_CPU_OP,
                                         (int64_t)i * 10000, 5000);
        op_evx_add(t, e)->stack = stack;
        op_trace_add_mem(t, (uint32_t)th, (int64_t)i * 10000 + 100, 0x10000 + 64 * i, 64);
    }
    t->options |= OP_TRACE_STACK | OP_TRACE_MEMORY;
    op_trace_finish(t);
    return t;
}

#endif

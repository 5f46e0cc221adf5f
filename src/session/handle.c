/* The trace handle (see handle.h). */
#include <stdatomic.h>
#include <stdlib.h>

#include "session/handle.h"

static _Atomic(const op_collector *) g_collector;

void op_session_lend(const op_collector *c)
{
    atomic_store_explicit(&g_collector, c, memory_order_release);
}

const op_collector *op_session_collector(void)
{
    return atomic_load_explicit(&g_collector, memory_order_acquire);
}

static _Atomic(const op_stream_hooks *) g_stream;

void op_session_lend_stream(const op_stream_hooks *h)
{
    atomic_store_explicit(&g_stream, h, memory_order_release);
}

const op_stream_hooks *op_session_stream(void)
{
    return atomic_load_explicit(&g_stream, memory_order_acquire);
}

opprof_trace *op_trace_bare(void)
{
    return calloc(1, sizeof(op_trace_head));
}

void opprof_trace_free(opprof_trace *t)
{
    if (!t) return;
    op_trace_head *h = (op_trace_head *)(void *)t;
    if (h->free)
        h->free(t);
    else
        free(h);
}

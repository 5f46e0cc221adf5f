/* The thread registry: every thread that has recorded has a state here
 * (capture/state.h), made at its first record of a session and kept until
 * it exits and the collector has read it. Off the hot path: one lock,
 * which the collector (model/collect.c) and the streamed trace's writer
 * (export/stream.c) also take to walk the states. */
#ifndef OPPROF_CAPTURE_THREAD_H
#define OPPROF_CAPTURE_THREAD_H

#include <stdint.h>

#include "capture/state.h"
#include "common/compiler.h"

/* Makes the calling thread's state current for generation g: registers the
 * thread on first use, resets buffers left from an earlier session. NULL
 * when g is no longer the active generation, memory ran out or the thread
 * never records (op_thread_never_record). */
op_tstate *op_thread_attach(uint64_t g);

/* The calling thread's state for generation g, attaching when needed. */
static inline op_tstate *op_state_for(uint64_t g)
{
    op_tstate *t = op_tls;
    if (OP_LIKELY(t != NULL && t->gen == g)) return t;
    return op_thread_attach(g);
}

/* Registry walk for the collector; the registry lock is held between
 * op_registry_lock and op_registry_unlock. */
OP_SEAM void op_registry_lock(void);
OP_SEAM void op_registry_unlock(void);
OP_SEAM op_tstate *op_registry_first(void);

/* Frees the states of exited threads that generation g has collected. */
OP_SEAM void op_registry_reap(uint64_t g);

/* Takes an exited thread's state out of the registry and frees it with
 * its chunks; the registry lock is held (ring_exited.c). */
void op_registry_drop(op_tstate *t);

/* The calling thread never records: a streamed trace's writer and its
 * helpers run during the session, and their own allocations are not the
 * program's. */
OP_SEAM void op_thread_never_record(void);

#endif

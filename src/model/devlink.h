/* Finding a host event of an unfinished trace (no parents yet) by where it
 * started: the thread and the start time, both known on the recording side
 * (the launching thread's innermost open range, an NVTX range's start)
 * before the trace exists; or by a time it was open at (the CUDA call a
 * launch record names). Used to link device activity and NVTX start/end
 * ranges to the events op_collect made. */
#ifndef OPPROF_MODEL_DEVLINK_H
#define OPPROF_MODEL_DEVLINK_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

typedef struct op_link_key {
    uint32_t thread;
    uint32_t idx; /* event index */
    int64_t start_ns;
} op_link_key;

typedef struct op_link_index {
    op_link_key *keys; /* host events sorted by (thread, start, idx) */
    uint32_t *up;      /* keys[i]'s innermost enclosing key on its thread, UINT32_MAX none */
    size_t n;
} op_link_index;

/* Indexes tr's host events (call before adding others; indexes stay valid
 * while events are only appended). -1 when out of memory. */
int op_link_index_build(op_link_index *ix, const opprof_trace *tr);
void op_link_index_free(op_link_index *ix);

/* The event on `thread` that started at start_ns, named `name` (a strtab id;
 * UINT32_MAX: any name). Among several, the shortest: the innermost of
 * ranges that began together. -1 when none. */
int64_t op_link_find(const op_link_index *ix, const opprof_trace *tr, uint32_t thread, int64_t start_ns,
                     uint32_t name);

/* The innermost event on `thread` open at t_ns (start <= t <= end): the
 * operator a CUDA call made at t belongs to. O(depth). -1 when none. */
int64_t op_link_enclosing(const op_link_index *ix, const opprof_trace *tr, uint32_t thread, int64_t t_ns);

#endif

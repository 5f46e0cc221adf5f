/* Work of the profiler's own on a recording thread (a symbol lookup taking
 * milliseconds) taken out of its timeline: op_own_begin notes the calling
 * thread's clock when it records; op_own_end writes the gap record from
 * then to now, unless the session moved on meanwhile. */
#ifndef OPPROF_CAPTURE_OWNTIME_H
#define OPPROF_CAPTURE_OWNTIME_H

#include <stdint.h>

#include "capture/state.h"
#include "common/seam.h"

typedef struct op_own {
    op_tstate *t; /* NULL: the thread does not record */
    uint64_t from;
} op_own;
OP_SEAM op_own op_own_begin(void);
OP_SEAM void op_own_end(op_own o);

#endif

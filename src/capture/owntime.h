/* Work of the profiler's own on a recording thread: a symbol lookup that
 * allocates (libdw) and takes milliseconds, under a malloc interposer. Its
 * allocations are kept out of the thread's memory events, and its time,
 * when asked, out of the thread's timeline (a gap record), so that the
 * range open around it is charged for neither. */
#ifndef OPPROF_CAPTURE_OWNTIME_H
#define OPPROF_CAPTURE_OWNTIME_H

#include <stdint.h>

#include "capture/state.h"
#include "common/compiler.h"

typedef struct op_own {
    op_tstate *t;   /* NULL: the thread does not record */
    uint64_t from;  /* its clock at the begin */
    uint64_t quiet; /* the generation whose memory events were turned off, 0 none */
} op_own;

/* Notes the calling thread's clock and stops its memory events. */
OP_SEAM op_own op_own_begin(void);

/* Turns the memory events back on, and when gap is set writes the gap
 * record from the begin to now, unless the session moved on meanwhile. */
OP_SEAM void op_own_end(op_own o, int gap);

#endif

/* Synthetic traces for the report tests: built through the model's builder
 * (src/model/model.h), deterministic for a seed. */
#ifndef OPPROF_TESTS_REPORT_SYNTH_H
#define OPPROF_TESTS_REPORT_SYNTH_H

#include <stddef.h>

#include "model/model.h"

typedef struct synth_opts {
    size_t events;     /* host and device events to make (about) */
    int threads;       /* host threads */
    int depth;         /* deepest nesting, 0-based */
    int names;         /* distinct operator names */
    int memory;        /* add allocations and frees */
    int device;        /* add launches, kernels and copies on two streams */
    int steps;         /* wrap the first thread's work in ProfilerStep#N */
    unsigned seed;
    const char *hostile; /* when set, one operator, a thread name and an args value use this text */
} synth_opts;

/* A finished trace (op_trace_finish done); NULL when out of memory. */
opprof_trace *synth_trace(const synth_opts *o);

#endif

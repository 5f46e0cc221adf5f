/* Turning one session generation's capture buffers into a trace. */
#ifndef OPPROF_MODEL_COLLECT_H
#define OPPROF_MODEL_COLLECT_H

#include <stdint.h>

#include "capture/clock.h"
#include "capture/state.h"
#include "opprof.h"

/* Collects every thread's records of generation gen (which must no longer be
 * active). Ranges still open are closed at stop_ticks, or at their thread's
 * exit. opts are the session's OP_OPT_* bits. The trace is not finished:
 * the caller adds what it knows and calls op_trace_finish. */
int op_collect(uint64_t gen, const op_timebase *tb, uint64_t stop_ticks, uint32_t opts, opprof_trace **out);

/* The trace's options and counts as op_collect sets them, for a trace
 * made from a session's records another way (model/stream.c). */
void op_collect_options(opprof_trace *tr, const op_timebase *tb, uint32_t opts, uint64_t recorded);

/* Names, input shapes and args of records as the collector makes them, each
 * distinct one made once, for a reader of records outside op_collect (the
 * writer of a streamed trace). The ids are tr's: use one op_recnames per
 * trace. UINT32_MAX (or -1 for inputs) when out of memory. */
typedef struct op_recnames op_recnames;
op_recnames *op_recnames_new(void);
void op_recnames_free(op_recnames *n);
uint32_t op_recnames_site(op_recnames *n, opprof_trace *tr, const opprof_site *s);
int op_recnames_inputs(op_recnames *n, opprof_trace *tr, const op_word *desc, unsigned nin, uint32_t payload_words,
                       uint32_t *shapes, uint32_t *types);
/* An args block at p: its length in words (0 when malformed) and its JSON
 * members' string id in *out. */
uint32_t op_recnames_args(op_recnames *n, opprof_trace *tr, const op_word *p, size_t avail, uint32_t *out);
unsigned op_recnames_decode_inputs(const op_word *desc, unsigned n, opprof_input *in);

#endif

/* A .pftrace written while it is recorded (pftrace_stream.c), fed the
 * streamed reader's batches (model/stream.h): threads and counters get
 * their tracks as they first appear, each thread's batch is a piece of its
 * sequence, and the metadata instant comes last. */
#ifndef OPPROF_EXPORT_PFTRACE_STREAM_H
#define OPPROF_EXPORT_PFTRACE_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "export/jsonw.h"
#include "model/model.h"
#include "model/stream.h"

/* head gives the base time and distributedInfo. */
typedef struct op_pf_stream op_pf_stream;
int op_pf_stream_begin(op_pf_stream **out, op_jw *w, const opprof_trace *head, const opprof_export_options *o,
                       int zlevel);
/* t's events (begins flagged OP_EV_OPENING, ends complete) and memory
 * events in the order given: order[k] is an event index, or a memory
 * event's with OP_ORDER_MEM set. */
int op_pf_stream_events(op_pf_stream *s, const opprof_trace *t, const uint32_t *order, size_t n);
/* Plain ranges' begins and ends as the reader reads them (model/stream.h's
 * sink), on threads of t (the reader's trace, whose strings name them):
 * each in the piece of its thread's sequence being written, or a new one
 * when the last packet was another thread's. */
int op_pf_stream_ranges(op_pf_stream *s, const opprof_trace *t, const op_sdec_item *it, size_t n);
/* t's events, complete ones in the model's order, and its memory events, as
 * a whole trace's are written (overlapping ranges on lanes), each thread's
 * a piece of its sequence: a batch of a trace read in batches (convert.c). */
int op_pf_stream_model(op_pf_stream *s, const opprof_trace *t);
/* The last batch (t NULL: giving up, nothing more written), the samples of
 * `sampled` (the session's trace of sums; NULL or none: nothing), the
 * metadata and the last compressed batch; frees s. */
int op_pf_stream_end(op_pf_stream *s, const opprof_trace *t, const uint32_t *order, size_t n,
                     const opprof_trace *sampled, uint64_t dropped, int incomplete);

#endif

/* The Chrome trace writer's streamed form, for a session that writes its
 * trace while it records (export/stream.c): the header first, then the
 * events batch by batch, then the threads' metadata and what only the end
 * knows ("droppedEvents", "incomplete"), after the traceEvents array. */
#ifndef OPPROF_EXPORT_CHROME_H
#define OPPROF_EXPORT_CHROME_H

#include <stdint.h>

#include "export/jsonw.h"
#include "model/model.h"

typedef struct op_chrome_stream op_chrome_stream;

/* Writes the header from head (options, base time, distributedInfo). */
int op_chrome_stream_begin(op_chrome_stream **out, op_jw *w, const opprof_trace *head, const opprof_export_options *o);

/* Writes t's events and memory events. t is the same trace at every call;
 * its strings and threads may grow between calls, its events are new. */
int op_chrome_stream_events(op_chrome_stream *s, const opprof_trace *t);

/* The last events of t, the samples of `sampled` (the session's trace of
 * sums; NULL or none: nothing), t's threads' metadata, and the end; frees
 * s. t NULL: gives up, writing nothing more. */
int op_chrome_stream_end(op_chrome_stream *s, const opprof_trace *t, const opprof_trace *sampled, uint64_t dropped,
                         int incomplete);

#endif

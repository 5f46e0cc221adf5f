/* A session's streamed trace (opprof_config.stream_trace): a writer thread
 * takes the threads' full chunks from the hand-off queue (capture/spill.h),
 * reads them into events and sums (model/stream.h) and writes the events as
 * Chrome trace JSON, plain or through the parallel gzip writer. At stop it
 * reads what the threads still hold, ends the file and makes the session's
 * trace from the sums. One streamed session at a time (there is one
 * session per process). */
#ifndef OPPROF_EXPORT_STREAM_H
#define OPPROF_EXPORT_STREAM_H

#include <stdint.h>

#include "capture/clock.h"
#include "model/model.h"

/* Creates the file (its temporary; it replaces path when whole). Refuses a
 * name that is not JSON. OPPROF_OK or a failure with its detail. */
int op_stream_open(const char *path, int64_t min_duration_ns, int max_depth);

/* Starts the writer for generation gen: the header from head (options,
 * base time, distributedInfo), then events as the hand-offs come. tb is
 * the generation's timebase (its ratio is fixed by the writer). */
int op_stream_begin(const opprof_trace *head, const op_timebase *tb, uint32_t opts, uint64_t gen);

/* 1 between op_stream_begin and op_stream_stop. */
int op_stream_running(void);

/* After generation gen is closed: the writer finishes the queue, the
 * threads' last records are read (their open ranges closed at stop_ticks,
 * or at their exit), the file is ended (incomplete: marked so) and
 * committed, and *out gets the session's trace of sums (NULL on failure).
 * A failure to write the file is reported on stderr and returned; the sums
 * are handed out all the same. */
int op_stream_stop(uint64_t gen, const op_timebase *tb, uint64_t stop_ticks, int incomplete, opprof_trace **out);

/* Gives up a stream that was opened but not begun (the session did not start). */
void op_stream_abort(void);

#endif

/* The streamed trace's end in two threads (stream_enc.c): the session's
 * thread reads the records into batches (model/stream.h) while this
 * thread writes the batch before, one batch in flight. Reading and writing
 * each took about half of the end on one core while the other core, the
 * program done, sat idle but for the compressing thread. */
#ifndef OPPROF_EXPORT_STREAM_ENC_H
#define OPPROF_EXPORT_STREAM_ENC_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "model/stream.h"

/* Writes one batch: t's events and memory events, in `order` (n items)
 * where the reader kept begins. OPPROF_OK or a failure recorded with
 * op_fail, whose detail the thread keeps. */
typedef int (*op_senc_fn)(void *ctx, const opprof_trace *t, const uint32_t *order, size_t n);

typedef struct op_senc op_senc;

/* Starts the thread; NULL when it cannot (out of memory, no thread): the
 * caller writes each batch in its own thread. The thread takes no signals
 * and never records. */
op_senc *op_senc_new(op_senc_fn fn, void *ctx);

/* Waits for the batch handed before, then hands it d's batch
 * (op_sdec_hand). Returns the first failure of the batches written so far,
 * OPPROF_OK, or OPPROF_E_NOMEM when the hand found no memory (the batch
 * stays in d). After a failure the batches are taken and not written. */
int op_senc_hand(op_senc *e, op_sdec *d);

/* Waits until every batch handed is written; the first failure or
 * OPPROF_OK, its detail set again on the caller's thread. The writer may
 * then be used from the caller's thread. */
int op_senc_drain(op_senc *e);

/* The thread's CPU time so far, in seconds (OPPROF_STREAM_STATS); 0 when
 * the system cannot tell. */
double op_senc_cpu_s(op_senc *e);

/* Stops the thread and frees everything (drains first). */
void op_senc_free(op_senc *e);

#endif

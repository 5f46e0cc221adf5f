/* Reading a streamed session's records as they come (capture/spill.h):
 * chunk by chunk, thread by thread, into events for the trace's writer and
 * into sums for the session's tables.
 *
 * A range's record is written at its begin and completed at its end, so a
 * chunk handed over may hold ranges still open (a loop around everything
 * after it). The reader keeps a stack of the ranges it has read but not yet
 * seen end, as the thread's own stack: a range is done when a later record
 * begins after its end (or at the close). A chunk stays with the reader
 * while a range on that stack has its record in it, and goes back to the
 * pool after; so the chunks held are at most the open depth.
 *
 * Each done range becomes an event of the reader's trace (its strings and
 * threads kept, its events cleared by the writer after each batch) and is
 * replayed, begin and end at its own times, into a copy of the online key
 * averages (capture/agg.h) of its thread: the session's tables come from
 * those sums, exactly as an aggregating session's do, so counts, FLOPs and
 * memory are the event path's. */
#ifndef OPPROF_MODEL_STREAM_H
#define OPPROF_MODEL_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "capture/clock.h"
#include "capture/state.h"
#include "model/model.h"

typedef struct op_sdec op_sdec;

/* opts: the session's OP_OPT_* bits. tb converts the events' times (its
 * ratio fixed by then); sums stay in ticks until the end. */
op_sdec *op_sdec_new(const op_timebase *tb, uint32_t opts);
void op_sdec_free(op_sdec *d);

/* Reads a hand-off of thread t: chunks in order, each with its end
 * published. The reader frees them, or keeps them while a range in them is
 * open. t is only a key here: its fields are read once, at first sight.
 * 0, or -1 when out of memory. */
int op_sdec_chunks(op_sdec *d, op_tstate *t, op_chunk *chunks);

/* At the end (registry lock held, generation closed): the rest of thread
 * t's records, in its own chunk list (left to it), and its ranges still
 * open closed at close_ticks, flagged forced. Chunks kept for its open
 * ranges go back to t (op_spill_return). 0 or -1. */
int op_sdec_rest(op_sdec *d, op_tstate *t, uint64_t close_ticks);

/* Ends the threads met only in hand-offs (their state went before the end:
 * the thread exited after the stop), their open ranges at stop_ticks. 0 or
 * -1. Then the events read are the last. */
int op_sdec_end_rest(op_sdec *d, uint64_t stop_ticks);

/* The events and memory events read since the last clear, in the reader's
 * trace; the caller writes them, then clears them (strings and threads
 * stay, for the ids of later events). */
opprof_trace *op_sdec_trace(op_sdec *d);
void op_sdec_clear(op_sdec *d);

/* A batch handed to a writer on another thread (export/stream_enc.c): a
 * trace of its own that mirrors the reader's strings, threads and stacks
 * (op_trace_mirror), and the batch's order. Zero-initialised, then
 * op_sdec_batch_init. */
typedef struct op_sdec_batch {
    opprof_trace *tr;
    uint32_t *order;
    size_t n, cap;
} op_sdec_batch;

int op_sdec_batch_init(op_sdec_batch *b);
void op_sdec_batch_free(op_sdec_batch *b);

/* Hands the batch read since the last clear (or hand) to b, which the
 * writer is done with: the events, their cold parts, the memory events and
 * the order change places with b's (so the reader fills b's old arrays
 * next, nothing copied), and b's trace is brought up to the reader's
 * tables. Then the reader's batch is empty, as after op_sdec_clear. 0, or
 * -1 when out of memory (the batch stays with the reader). */
int op_sdec_hand(op_sdec *d, op_sdec_batch *b);

/* For a writer that writes a range's begin before its end is known
 * (pftrace_stream.c): each begin read is an event too, flagged
 * OP_EV_OPENING, with its name, category and shapes (the complete event
 * that follows when the range is done leaves its shapes to the begin); and
 * the batch's order lists its begins, ends and memory events as they were
 * read (OP_ORDER_MEM marks a memory event's index), each thread's in time
 * order. Call before the first hand-off. */
void op_sdec_keep_begins(op_sdec *d);
const uint32_t *op_sdec_order(const op_sdec *d, size_t *n);

/* A plain range's begin (name: its id in the reader's trace, cat its
 * category) or end (name OP_SDEC_END) as the reader met it, on the
 * reader's trace's thread `thread`, at ts_ns. */
typedef struct op_sdec_item {
    int64_t ts_ns;
    uint32_t thread, name;
    int cat;
} op_sdec_item;
#define OP_SDEC_END UINT32_MAX
#define OP_SDEC_RUN 256 /* items handed to ranges at a time, at most */

/* A writer that takes plain ranges' begins and ends as they are read
 * (export/stream.c's .pftrace), with op_sdec_keep_begins: a range whose
 * record has no extra part (no inputs, stack, FLOPs or args) and that the
 * filters keep goes to ranges, in runs of up to OP_SDEC_RUN items in the
 * order read, instead of becoming two events of the batch; the batch's
 * items read between two runs are passed to flush (which writes and clears
 * them) in their place, so the writer sees everything in the order read.
 * Each call returns 0 or -1 (the reader stops). Making and reading back
 * two 40-byte events per range, on two cores, cost more than writing its
 * two packets; a call per packet, a fifth of that. Call before the first
 * hand-off; NULL: none. */
typedef struct op_sdec_sink {
    void *ctx;
    int (*flush)(void *ctx);
    int (*ranges)(void *ctx, const opprof_trace *t, const op_sdec_item *items, size_t n);
} op_sdec_sink;
void op_sdec_direct(op_sdec *d, const op_sdec_sink *sink);

/* The file's filters: a range shorter than min_ns, or deeper than
 * max_depth on its thread (1: top level), becomes no event (nor do the
 * ranges inside it: they are shorter, or deeper), while its sums are
 * counted as ever. Decided at its begin when its end is known by then
 * (always, reading a spool), else when it is done (with begins: kept).
 * The reader's trace counts what was left out (filtered) and holds the
 * filters, for the file's metadata. 0: none. Call before the first
 * hand-off. */
void op_sdec_filter(op_sdec *d, int64_t min_ns, uint32_t max_depth);

/* The session's trace: every thread's sums as rows, with tb the session's
 * final timebase, after op_sdec_end_rest. 0, or -1 when out of memory. */
int op_sdec_finish(op_sdec *d, const op_timebase *tb, uint64_t stop_ticks, opprof_trace **out);

#endif

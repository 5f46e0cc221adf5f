/* Perfetto's native trace format (.pftrace): protobuf TracePackets.
 *
 * Layout of a file opprof writes:
 *   sequence 1     TrackDescriptors: a process per pid, a thread per model
 *                  thread (device streams are threads of "GPU n"), a
 *                  "Total Allocated" counter per process and device with
 *                  memory events, and the "opprof" track whose one instant
 *                  carries the session's metadata (droppedEvents, ...).
 *   sequence 2+i   thread i's events: a first packet that clears the
 *                  incremental state and sets the defaults (the thread's
 *                  track, an incremental sequence-scoped clock, snapshot
 *                  against CLOCK_REALTIME and CLOCK_BOOTTIME), then slice
 *                  begin/end packets whose timestamps are nanosecond deltas
 *                  and whose names, categories, annotation names and string
 *                  values are interned on the sequence.
 * Ranges that overlap without nesting go on extra tracks under the thread
 * ("lanes"), so that every track's begins and ends pair up.
 *
 * Packets go to the file as they are, or (the default for a .pftrace not
 * gzip'd as a whole) in batches, each one packet whose compressed_packets
 * holds the batch's packets as a Trace message, zlib-compressed: what
 * Perfetto's tracing service writes when its config asks for DEFLATE, and
 * what its trace processor and UI read (pftrace_pack.c). */
#ifndef OPPROF_EXPORT_PFTRACE_H
#define OPPROF_EXPORT_PFTRACE_H

#include "export/out.h"
#include "export/pbw.h"
#include "model/model.h"

/* Track uuids. */
#define PF_UUID_META 0x2000000000000001ull
#define PF_UUID_PROCESS(k) (0x4000000000000000ull + (uint64_t)(k))
#define PF_UUID_COUNTER(k) (0x3000000000000000ull + (uint64_t)(k))
#define PF_UUID_THREAD(i, lane) ((((uint64_t)(i) + 1) << 16) | (uint64_t)(lane))
#define PF_MAX_LANES 65535

/* A "Total Allocated" counter: one per process and device. */
typedef struct pf_counter {
    int64_t pid;
    int8_t dev_type, dev_id;
} pf_counter;

typedef struct pf_writer {
    op_jw *w;
    const opprof_trace *t;
    const opprof_export_options *o;
    op_pbw pkt; /* the packet being built */
    op_pbw te;  /* its track event */
    op_pbw in;  /* its interned data */
    pf_counter *counters;
    size_t ncounters;
    int64_t base_ns;  /* added to the events' times: the trace's base time, on CLOCK_REALTIME */
    int64_t boot_ns;  /* CLOCK_REALTIME minus CLOCK_BOOTTIME when the writer started: see op_pf_boot_offset */
    int64_t *proc_of; /* per thread: index of its process among the distinct pids */
    size_t nproc;     /* distinct pids with a process track */
    size_t described; /* threads with a track (the first ones) */
    int zlevel;       /* 0: packets as they are; 1..9: in compressed batches, this zlib level */
    op_pbw batch;     /* the packets of the batch being filled, each framed as a Trace.packet */
    void *z;          /* the batches' deflate stream (a z_stream) */
    unsigned char *zout;
    size_t zout_cap;
} pf_writer;

/* A batch's packets, framed, are at most this many bytes, so that the
 * compressed packet stays under the 512 KiB that Perfetto's schema asks
 * for (deflate's worst case adds well under 1%); a larger packet is
 * written on its own, uncompressed. */
#define PF_BATCH_MAX ((size_t)480 << 10)

/* The zlib level of a .pftrace's batches: 0 (plain packets) when the
 * environment has OPPROF_PFTRACE_COMPRESS=0, else the options' gzip_level
 * (default 1: at 6, as Perfetto's service compresses, bench_pftrace's
 * files are 1.5-1.7x smaller and take 2-3x as long to write). */
int op_pf_zlevel(const opprof_export_options *o);

/* CLOCK_REALTIME minus CLOCK_BOOTTIME now, read back to back (the pair
 * read closest together of a few). A trace's times are wall-clock times
 * (its base time is CLOCK_REALTIME); the sequences' clock snapshots give
 * both clocks, so that Perfetto, whose trace clock is BOOTTIME, places the
 * events beside a system trace of the same machine. Exact for a session
 * written where and when it was recorded; the wall clock stepped or the
 * machine suspended since would move it by as much. */
int64_t op_pf_boot_offset(void);

/* Appends pkt as one Trace.packet to the output (or to the batch); 0 or -1
 * (out of memory). */
int op_pf_emit(pf_writer *pw);

/* Writes out the batch being filled; frees the batches' buffers. */
int op_pf_flush(pf_writer *pw);
void op_pf_pack_free(pf_writer *pw);

/* Sequence 1 (pftrace_meta.c): the tracks of threads [pw->described,
 * t->nthreads) and of their processes not yet described; the counter tracks
 * of the memory events' processes and devices not yet described; the
 * "opprof" track and its instant with info's metadata (dropped events,
 * incomplete, distributedInfo). 0 or -1. */
int op_pf_meta_threads(pf_writer *pw);
int op_pf_meta_counters(pf_writer *pw);
int op_pf_meta_info(pf_writer *pw, const opprof_trace *info);

/* The counter track of a memory event's process and device. */
size_t op_pf_counter_of(const pf_writer *pw, const op_mem_event *m);

/* A thread's sequence being written (pftrace.c). Strings and stacks are
 * interned on the sequence once per start; ranges that overlap without
 * nesting go on lanes (whole traces only: a streamed thread's nest). */
typedef struct pf_lane {
    int64_t *end; /* the open ranges' ends, innermost last */
    size_t n, cap;
} pf_lane;

typedef struct pf_wseq {
    pf_writer *pw;
    uint32_t id, gen;
    uint64_t last_ts;
    /* Interned since the last start when *_gen[k] == gen. */
    uint32_t *name_iid, *name_gen, *str_iid, *str_gen, *stack_iid, *stack_gen;
    size_t cap_name, cap_str, cap_stack;
    uint32_t next_name, next_str;
    pf_lane *lanes;
    size_t nlanes;
    size_t thread;
} pf_wseq;

/* Which of an event's annotations a packet carries: those known when the
 * range begins (shapes, types, stack, ids, flows) and those that its end
 * may still set (FLOPs, args). */
enum { PF_PART_OPEN = 1, PF_PART_CLOSE = 2 };

/* Room to intern nstr strings and nstacks stacks (pw->t's). 0 or -1. */
int op_pf_seq_fit(pf_wseq *s, size_t nstr, size_t nstacks);
/* Starts (or starts again) the sequence of thread `thread`, its
 * incremental state cleared and its clock at t0_ns: each start interns
 * anew, so a sequence may be written in pieces between other threads'. */
int op_pf_seq_start(pf_wseq *s, size_t thread, int64_t t0_ns);
/* A streamed slice on the thread's own track: its begin (OPEN part) with
 * the end not yet known, then its end at start + dur (CLOSE part). Times
 * must not go back within a start. 0 or -1. */
int op_pf_seq_begin(pf_wseq *s, const op_event *e);
int op_pf_seq_end(pf_wseq *s, const op_event *e);
/* A memory event: the instant, then the counter's value. */
int op_pf_seq_memory(pf_wseq *s, const op_mem_event *m);
void op_pf_seq_free(pf_wseq *s);

/* Sequences 2.. of a whole trace (pftrace.c). */
int op_pf_write_threads(pf_writer *pw);

/* Writes t as a .pftrace into out's writer; zlevel as pf_writer's. */
int op_pf_write(const opprof_trace *t, op_jw *w, const opprof_export_options *o, int zlevel);

/* A .pftrace written while it is recorded (pftrace_stream.c), fed the
 * streamed reader's batches (model/stream.h): threads and counters get
 * their tracks as they first appear, each thread's batch is a piece of its
 * sequence, and the metadata instant comes last. head gives the base time
 * and distributedInfo. */
typedef struct op_pf_stream op_pf_stream;
int op_pf_stream_begin(op_pf_stream **out, op_jw *w, const opprof_trace *head, const opprof_export_options *o,
                       int zlevel);
/* t's events (begins flagged OP_EV_OPENING, ends complete) and memory
 * events in the order given: order[k] is an event index, or a memory
 * event's with OP_ORDER_MEM set. */
int op_pf_stream_events(op_pf_stream *s, const opprof_trace *t, const uint32_t *order, size_t n);
/* t's events, complete ones in the model's order, and its memory events, as
 * a whole trace's are written (overlapping ranges on lanes), each thread's
 * a piece of its sequence: a batch of a trace read in batches (convert.c). */
int op_pf_stream_model(op_pf_stream *s, const opprof_trace *t);
/* The last batch (t NULL: giving up, nothing more written), the metadata
 * and the last compressed batch; frees s. */
int op_pf_stream_end(op_pf_stream *s, const opprof_trace *t, const uint32_t *order, size_t n, uint64_t dropped,
                     int incomplete);

#endif

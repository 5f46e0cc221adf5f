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
 *                  track, an incremental sequence-scoped clock), then slice
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
    int64_t *proc_of; /* per thread: index of its process among the distinct pids */
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

/* Appends pkt as one Trace.packet to the output (or to the batch); 0 or -1
 * (out of memory). */
int op_pf_emit(pf_writer *pw);

/* Writes out the batch being filled; frees the batches' buffers. */
int op_pf_flush(pf_writer *pw);
void op_pf_pack_free(pf_writer *pw);

/* Sequence 1 (pftrace_meta.c). */
int op_pf_write_meta(pf_writer *pw);

/* The counter track of a memory event's process and device. */
size_t op_pf_counter_of(const pf_writer *pw, const op_mem_event *m);

/* Sequences 2.. (pftrace.c). */
int op_pf_write_threads(pf_writer *pw);

/* Writes t as a .pftrace into out's writer; zlevel as pf_writer's. */
int op_pf_write(const opprof_trace *t, op_jw *w, const opprof_export_options *o, int zlevel);

#endif

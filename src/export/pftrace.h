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
 * ("lanes"), so that every track's begins and ends pair up. */
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
} pf_writer;

/* Appends pkt as one Trace.packet to the output; 0 or -1 (out of memory). */
int op_pf_emit(pf_writer *pw);

/* Sequence 1 (pftrace_meta.c). */
int op_pf_write_meta(pf_writer *pw);

/* The counter track of a memory event's process and device. */
size_t op_pf_counter_of(const pf_writer *pw, const op_mem_event *m);

/* Sequences 2.. (pftrace.c). */
int op_pf_write_threads(pf_writer *pw);

/* Writes t as a .pftrace into out's writer. */
int op_pf_write(const opprof_trace *t, op_jw *w, const opprof_export_options *o);

#endif

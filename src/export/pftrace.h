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
 *   sequence PF_SEQ_SAMPLES  a sampled trace's samples: PerfSample packets
 *                  (pid, tid, callstack_iid), time order, the callstacks,
 *                  frames, function names and mappings interned.
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

#include "common/compiler.h"
#include "common/pfschema.h"
#include "export/pftrace_meta.h"
#include "export/pftrace_pack.h"
#include "model/model.h"

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

/* A packet of te[0..te_n) (a track event under 128 bytes) at time ts
 * straight into the batch, when nothing was interned for it: most packets.
 * 0, or 1 when it has to go the general way (no batch, no room).
 *
 * An event's packet carries no sequence_flags: SEQ_NEEDS_INCREMENTAL_STATE
 * only asks a reader to skip the packet when the sequence's state was lost
 * (a ring buffer that wrapped), which a file written whole never has;
 * Perfetto's trace processor resolves interned ids by the sequence id
 * either way (ProtoTraceReader::ParsePacket). Two bytes of a slice's 13 per
 * packet: 15% less to compress. */
static inline int op_pf_put_short(pf_wseq *s, uint64_t ts, const unsigned char *te, size_t te_n)
{
    pf_writer *pw = s->pw;
    if (ts < s->last_ts) ts = s->last_ts; /* the clock only goes forward: a delta is unsigned */
    uint64_t dt = ts - s->last_ts;
    size_t len = 1 + op_pb_varint_len(dt) + 1 + op_pb_varint_len(te_n) + te_n + 1 + op_pb_varint_len(s->id);
    unsigned char *d = op_pf_batch_room(pw, 1 + op_pb_varint_len(len) + len);
    if (!d) return 1;
    s->last_ts = ts;
    *d++ = PF_TRACE_PACKET << 3 | OP_PB_LEN;
    d += op_pb_put_varint(d, len);
    *d++ = PF_PKT_TIMESTAMP << 3 | OP_PB_VARINT;
    d += op_pb_put_varint(d, dt);
    *d++ = PF_PKT_TRACK_EVENT << 3 | OP_PB_LEN;
    d += op_pb_put_varint(d, te_n);
    for (size_t i = 0; i < te_n; i++) *d++ = te[i]; /* a few bytes: no call to memcpy */
    *d++ = PF_PKT_SEQUENCE_ID << 3 | OP_PB_VARINT;
    op_pb_put_varint(d, s->id);
    return 0;
}

/* The bytes of a plain slice's packet (op_pf_seq_quick's) at d, when its
 * delta dt is under 2^14 and its name iid (0: an end) and sequence id under
 * 2^7, so that every varint but the delta is one byte and the packet's
 * length too (at most 11): op_pf_put_short's bytes, without its loops.
 * Returns the bytes written, at most 13. */
static OP_ALWAYS_INLINE unsigned op_pf_put_quick(unsigned char *d, uint64_t dt, uint32_t iid, uint32_t seq_id)
{
    unsigned dl = dt < 128 ? 1 : 2, te_n = iid ? 4 : 2, len = 1 + dl + 2 + te_n + 2;
    d[0] = PF_TRACE_PACKET << 3 | OP_PB_LEN;
    d[1] = (unsigned char)len;
    d[2] = PF_PKT_TIMESTAMP << 3 | OP_PB_VARINT;
    if (dl == 1) {
        d[3] = (unsigned char)dt;
    } else {
        d[3] = (unsigned char)(dt | 0x80);
        d[4] = (unsigned char)(dt >> 7);
    }
    unsigned char *e = d + 3 + dl;
    e[0] = PF_PKT_TRACK_EVENT << 3 | OP_PB_LEN;
    e[1] = (unsigned char)te_n;
    e[2] = PF_TE_TYPE << 3 | OP_PB_VARINT;
    e[3] = iid ? PF_TYPE_SLICE_BEGIN : PF_TYPE_SLICE_END;
    if (iid) {
        e[4] = PF_TE_NAME_IID << 3 | OP_PB_VARINT;
        e[5] = (unsigned char)iid;
    }
    e += 2 + te_n;
    e[0] = PF_PKT_SEQUENCE_ID << 3 | OP_PB_VARINT;
    e[1] = (unsigned char)seq_id;
    return 2 + len;
}

/* A plain slice's begin (iid: its name's id, interned in this start) or,
 * iid 0, its end, at t_ns on the thread's own track, straight into the
 * batch: op_pf_seq_begin/end's own short packet, and the streamed writer's
 * most packets, written as they are read. 0 written; 1 when it has to go
 * the general way (no batch, no room, a packet being built). */
static OP_ALWAYS_INLINE int op_pf_seq_quick(pf_wseq *s, int64_t t_ns, uint32_t iid)
{
    pf_writer *pw = s->pw;
    if (pw->te.out.n || pw->in.out.n) return 1;
    uint64_t ts = (uint64_t)pw->base_ns + (uint64_t)t_ns;
    if (ts < s->last_ts) ts = s->last_ts; /* the clock only goes forward: a delta is unsigned */
    uint64_t dt = ts - s->last_ts;
    if (__builtin_expect(dt < 16384 && iid < 128 && s->id < 128, 1)) {
        unsigned char *d = op_pf_batch_room(pw, 2 + 1 + (dt < 128 ? 1 : 2) + 2 + (iid ? 4 : 2) + 2);
        if (!d) return 1;
        s->last_ts = ts;
        op_pf_put_quick(d, dt, iid, s->id);
        return 0;
    }
    unsigned char te[16];
    size_t n = op_pb_put_varint(te, PF_TE_TYPE << 3 | OP_PB_VARINT);
    n += op_pb_put_varint(te + n, iid ? PF_TYPE_SLICE_BEGIN : PF_TYPE_SLICE_END);
    if (iid) {
        n += op_pb_put_varint(te + n, PF_TE_NAME_IID << 3 | OP_PB_VARINT);
        n += op_pb_put_varint(te + n, iid);
    }
    return op_pf_put_short(s, ts, te, n);
}

void op_pf_seq_free(pf_wseq *s);

/* Sequences 2.. of pw->t: each thread's events and memory events, ranges
 * that overlap on lanes (the whole trace, or one batch of a trace read in
 * batches). 0 or -1. */
int op_pf_write_threads(pf_writer *pw);

/* The clock snapshot of a sequence whose packets' times are deltas from t0
 * (ns on the trace's wall clock) into pw->pkt: its incremental clock, then
 * CLOCK_REALTIME, then BOOTTIME. */
void op_pf_put_clocks(pf_writer *pw, uint64_t t0);

/* t's samples (opprof_config.sample_hz) as PerfSample packets on a sequence
 * of their own (PF_SEQ_SAMPLES), their callstacks, frames, function names
 * and mappings interned on it (pftrace_samples.c). describe: a track
 * descriptor for each sampled thread too, for a streamed file whose
 * threads came from another trace. 0 or -1. */
#define PF_SEQ_SAMPLES 0x40000000u /* above the threads' 2 + index */
int op_pf_write_samples(pf_writer *pw, const opprof_trace *t, int describe);

/* Writes t as a .pftrace into out's writer; zlevel as pf_writer's. */
int op_pf_write(const opprof_trace *t, op_jw *w, const opprof_export_options *o, int zlevel);

#endif

/* The .pftrace writer's state and its output (pftrace_pack.c): packets
 * framed as Trace.packet fields, to the file or into compressed batches.
 * The whole-trace writer (pftrace.h) and the streamed one
 * (pftrace_stream.h) both hold a pf_writer, made and torn down here. */
#ifndef OPPROF_EXPORT_PFTRACE_PACK_H
#define OPPROF_EXPORT_PFTRACE_PACK_H

#include "export/jsonw.h"
#include "export/pbw.h"
#include "export/pftrace_zq.h"
#include "model/model.h"

typedef struct pf_writer {
    op_jw *w;
    const opprof_trace *t;
    const opprof_export_options *o;
    op_pbw pkt; /* the packet being built */
    op_pbw te;  /* its track event */
    op_pbw in;  /* its interned data */
    struct pf_counter *counters; /* the counter tracks described (pftrace_meta.h) */
    size_t ncounters;
    int64_t base_ns;  /* added to the events' times: the trace's base time, on CLOCK_REALTIME */
    int64_t boot_ns;  /* CLOCK_REALTIME minus CLOCK_BOOTTIME when the writer started: see op_pf_boot_offset */
    int64_t *proc_of; /* per thread: index of its process among the distinct pids */
    size_t nproc;     /* distinct pids with a process track */
    size_t described; /* threads with a track (the first ones) */
    int zlevel;       /* 0: packets as they are; 1..9: in compressed batches, this level */
    op_pbw batch;     /* the packets of the batch being filled, each framed as a Trace.packet */
    pf_packer pk;     /* the batches' codec (zstd, or zlib by libdeflate) and level */
    unsigned char *zout;
    size_t zout_cap;
    struct pf_zq *zq; /* full batches compressed beside the writer (pftrace_zq.h), from the first one */
    int zq_tried;
} pf_writer;

/* A writer into w with options o, batches at zlevel, the events' times
 * moved by base_ns (the trace's base time; a negative one counts as 0);
 * its boot_ns is read now (op_pf_boot_offset). */
void op_pf_writer_init(pf_writer *pw, op_jw *w, const opprof_export_options *o, int zlevel, int64_t base_ns);

/* Frees everything a writer holds, whole trace or streamed: the packet
 * being built, the batches, the tracks described. */
void op_pf_writer_free(pf_writer *pw);

/* A batch's packets, framed, are at most this many bytes, so that the
 * compressed packet stays under the 512 KiB that Perfetto's schema asks
 * for (deflate's worst case adds well under 1%); a larger packet is
 * written on its own, uncompressed. */
#define PF_BATCH_MAX ((size_t)480 << 10)

/* The level of a .pftrace's batches: 0 (plain packets) when the
 * environment has OPPROF_PFTRACE_COMPRESS=0, else the options' gzip_level
 * (default 1: deflate at 6, as Perfetto's service compresses, made
 * bench_pftrace's files 1.5-1.7x smaller in 2-3x the time). */
int op_pf_zlevel(const opprof_export_options *o);

/* 1: batches are zstd frames (zstd_compressed_packets), the default; 0:
 * zlib streams (compressed_packets), for trace processors older than
 * zstd's field, when the environment has OPPROF_PFTRACE_COMPRESS=zlib. */
int op_pf_zstd(void);

/* CLOCK_REALTIME minus CLOCK_BOOTTIME now, read back to back (the pair
 * read closest together of a few). A trace's times are wall-clock times
 * (its base time is CLOCK_REALTIME); the sequences' clock snapshots give
 * both clocks, so that Perfetto, whose trace clock is BOOTTIME, places the
 * events beside a system trace of the same machine. Exact for a session
 * written where and when it was recorded; the wall clock stepped or the
 * machine suspended since would move it by as much. */
int64_t op_pf_boot_offset(void);

/* Room for n bytes at the end of the batch being filled (the batch handed
 * over first when they do not fit), to be filled by the caller with whole
 * framed Trace.packet fields: the short packets' way around pkt. NULL when
 * there are no batches (zlevel 0), pkt holds a packet, n is more than a
 * batch, or memory ran out; the caller then builds its packet in pkt. */
unsigned char *op_pf_batch_room_slow(pf_writer *pw, size_t n);

/* The bytes the batch being filled has room for as it is, without growing
 * or handing it over: 0 when pkt holds a packet or the batch failed. */
static inline size_t op_pf_batch_left(const pf_writer *pw)
{
    const op_buf *b = &pw->batch.out;
    size_t lim = b->cap < PF_BATCH_MAX ? b->cap : PF_BATCH_MAX;
    return pw->pkt.out.n || pw->pkt.depth || b->failed || b->n > lim ? 0 : lim - b->n;
}

/* Inline, for the room that is there (all but one call a batch): the
 * call was 2-3% of a streamed trace's end. */
static inline unsigned char *op_pf_batch_room(pf_writer *pw, size_t n)
{
    op_buf *b = &pw->batch.out;
    if (n <= op_pf_batch_left(pw)) {
        unsigned char *d = (unsigned char *)b->p + b->n;
        b->n += n;
        return d;
    }
    return op_pf_batch_room_slow(pw, n);
}

/* Appends pkt as one Trace.packet to the output (or to the batch); 0 or -1
 * (out of memory). */
int op_pf_emit(pf_writer *pw);

/* Writes out the batch being filled. */
int op_pf_flush(pf_writer *pw);

#endif

/* A .pftrace's batches compressed beside the writer (pftrace_zq.c): one
 * thread compresses the full batches (two in flight) while the writer
 * encodes the next, and the writer writes each compressed batch itself, in
 * order. */
#ifndef OPPROF_EXPORT_PFTRACE_ZQ_H
#define OPPROF_EXPORT_PFTRACE_ZQ_H

#include <stddef.h>

#include "common/buf.h"
#include "common/pfschema.h"

typedef struct pf_zq pf_zq;

/* How a batch is compressed: one zstd frame (TracePacket.
 * zstd_compressed_packets, the default) or one zlib stream
 * (compressed_packets, which older trace processors read), at a level. */
typedef struct pf_packer {
    int zstd, level;
    void *cx; /* libdeflate's compressor or zstd's context, made at the first batch */
} pf_packer;

/* The TracePacket field that holds a batch of this packer's. */
static inline unsigned op_pf_packer_field(const pf_packer *p)
{
    return p->zstd ? PF_PKT_ZSTD_COMPRESSED : PF_PKT_COMPRESSED;
}

/* in[0..n) compressed into *out, grown to the codec's bound when smaller
 * (its room in *cap): the compressed size, 0 when out of memory. The
 * compressing thread's and the writer's own way alike. */
size_t op_pf_pack(pf_packer *p, const void *in, size_t n, unsigned char **out, size_t *cap);
void op_pf_packer_free(pf_packer *p);

/* The compressed bytes of a batch, in the order handed over; 0 or -1. */
typedef int (*pf_zq_put)(void *ctx, const unsigned char *z, size_t n);

/* A compressing thread with the codec and level of p (level 1..9); NULL
 * when none could start (the caller compresses in its own thread). */
pf_zq *op_pf_zq_new(const pf_packer *p);

/* When two batches are in flight, waits for the older and passes its
 * compressed bytes to put; then hands *batch over: its bytes are copied to
 * the thread, and *batch is left empty, its room kept. 0, or -1 when a
 * batch before could not be compressed, the copy found no memory, or put
 * failed. */
int op_pf_zq_hand(pf_zq *q, op_buf *batch, pf_zq_put put, void *ctx);

/* Waits for every batch handed over, if any, and puts each, oldest first: after this,
 * every batch handed over is written. 0 or -1 as op_pf_zq_hand. */
int op_pf_zq_drain(pf_zq *q, pf_zq_put put, void *ctx);

/* CPU seconds the compressing threads of this process spent compressing,
 * all writers together (OPPROF_STREAM_STATS). */
double op_pf_zq_cpu_s(void);

/* Stops the thread and frees everything; a batch not drained is lost. */
void op_pf_zq_free(pf_zq *q);

#endif

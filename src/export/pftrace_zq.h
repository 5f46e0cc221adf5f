/* A .pftrace's batches compressed beside the writer (pftrace_zq.c): one
 * thread deflates the full batches (two in flight) while the writer
 * encodes the next, and the writer writes each compressed batch itself, in
 * order. */
#ifndef OPPROF_EXPORT_PFTRACE_ZQ_H
#define OPPROF_EXPORT_PFTRACE_ZQ_H

#include <stddef.h>

#include "common/buf.h"

typedef struct pf_zq pf_zq;
struct libdeflate_compressor;

/* in[0..n) as one zlib stream into *out, grown to libdeflate's bound when
 * smaller (its room in *cap): the stream's size, 0 when out of memory. The
 * compressing thread's and the writer's own way alike. */
size_t op_pf_deflate(struct libdeflate_compressor *z, const void *in, size_t n, unsigned char **out, size_t *cap);

/* The compressed bytes of a batch, in the order handed over; 0 or -1. */
typedef int (*pf_zq_put)(void *ctx, const unsigned char *z, size_t n);

/* A compressing thread at zlib level `level` (1..9); NULL when none could
 * start (the caller compresses in its own thread). */
pf_zq *op_pf_zq_new(int level);

/* When two batches are in flight, waits for the older and passes its
 * compressed bytes to put; then hands *batch over: its bytes are copied to
 * the thread, and *batch is left empty, its room kept. 0, or -1 when a
 * batch before could not be compressed, the copy found no memory, or put
 * failed. */
int op_pf_zq_hand(pf_zq *q, op_buf *batch, pf_zq_put put, void *ctx);

/* Waits for every batch handed over, if any, and puts each, oldest first: after this,
 * every batch handed over is written. 0 or -1 as op_pf_zq_hand. */
int op_pf_zq_drain(pf_zq *q, pf_zq_put put, void *ctx);

/* CPU seconds the compressing threads of this process spent deflating,
 * all writers together (OPPROF_STREAM_STATS). */
double op_pf_zq_cpu_s(void);

/* Stops the thread and frees everything; a batch not drained is lost. */
void op_pf_zq_free(pf_zq *q);

#endif

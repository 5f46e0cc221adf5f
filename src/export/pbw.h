/* A tiny protocol-buffers encoder for the Perfetto writer: varints, tags and
 * length-delimited fields into a growable buffer. Nested messages are
 * opened and closed like brackets; the length is written when the message
 * closes (one byte reserved, moved up in the rare case it needs more).
 *
 * The bytes are a common op_buf, with its sticky out-of-memory state: check
 * op_pbw.out.failed once per packet. */
#ifndef OPPROF_EXPORT_PBW_H
#define OPPROF_EXPORT_PBW_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/pfschema.h" /* the wire types */

#define OP_PBW_DEPTH 8

typedef struct op_pbw {
    op_buf out; /* the encoded bytes */
    size_t open[OP_PBW_DEPTH]; /* where each open message's length byte is */
    int depth;
} op_pbw;

void op_pbw_varint_grow(op_pbw *b, uint64_t v);
void op_pbw_raw_grow(op_pbw *b, const void *p, size_t n);

/* Inline too, copying the short runs (a packet's track event, a packet
 * into its batch: a dozen bytes) without a call. */
static inline void op_pbw_raw(op_pbw *b, const void *p, size_t n)
{
    if (__builtin_expect(n > 32 || b->out.cap - b->out.n <= n, 0)) {
        op_pbw_raw_grow(b, p, n);
        return;
    }
    unsigned char *d = (unsigned char *)b->out.p + b->out.n;
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) d[i] = s[i];
    b->out.n += n;
}

/* v as a varint at d, which has room for the longest (10 bytes); returns
 * the bytes written. The one varint encoder: the buffered writer below,
 * and packets framed in place (the .pftrace writer's batches). */
static inline size_t op_pb_put_varint(unsigned char *d, uint64_t v)
{
    size_t k = 0;
    while (v >= 0x80) {
        d[k++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    d[k++] = (unsigned char)v;
    return k;
}

/* The bytes v takes as a varint. */
static inline size_t op_pb_varint_len(uint64_t v)
{
    size_t k = 1;
    while (v >= 0x80) {
        v >>= 7;
        k++;
    }
    return k;
}

/* Inline: a slice's packets are a dozen varints, most of one byte. */
static inline void op_pbw_varint(op_pbw *b, uint64_t v)
{
    if (__builtin_expect(b->out.cap - b->out.n <= 10, 0)) { /* no room for the longest (and the NUL) */
        op_pbw_varint_grow(b, v);
        return;
    }
    b->out.n += op_pb_put_varint((unsigned char *)b->out.p + b->out.n, v);
}

static inline void op_pbw_tag(op_pbw *b, uint32_t field, int wire)
{
    op_pbw_varint(b, ((uint64_t)field << 3) | (uint64_t)wire);
}

static inline void op_pbw_uint(op_pbw *b, uint32_t field, uint64_t v)
{
    op_pbw_tag(b, field, OP_PB_VARINT);
    op_pbw_varint(b, v);
}

/* int32/int64 fields: two's complement, as protobuf does (not zigzag). */
static inline void op_pbw_int(op_pbw *b, uint32_t field, int64_t v)
{
    op_pbw_uint(b, field, (uint64_t)v);
}

void op_pbw_fixed64(op_pbw *b, uint32_t field, uint64_t v);
void op_pbw_bytes(op_pbw *b, uint32_t field, const void *p, size_t n);

/* A nested message: begin, its fields, end. */
void op_pbw_begin(op_pbw *b, uint32_t field);
void op_pbw_end(op_pbw *b);

static inline void op_pbw_reset(op_pbw *b)
{
    b->out.n = 0;
    b->depth = 0;
}

void op_pbw_free(op_pbw *b);

#endif

/* A bounds-checked protocol-buffers decoder over bytes in memory, for the
 * .pftrace reader: every varint and length is checked against the end, so
 * hostile input can only make it fail, with the position and the reason. */
#ifndef OPPROF_IMPORT_PBR_H
#define OPPROF_IMPORT_PBR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/compiler.h"
#include "common/pfschema.h" /* the wire types */

typedef struct op_pbr {
    const unsigned char *p, *end;
} op_pbr;

/* One field: its number and wire type; a varint or fixed value in v, a
 * length-delimited one in sub. */
typedef struct op_pbf {
    uint32_t field; /* these two first and in this order: op_pbr_next stores them as one word */
    int wire;
    uint64_t v;
    op_pbr sub;
} op_pbf;

/* 0 done, or -1 with *why set: a varint longer than 10 bytes or cut by the
 * end. */
static OP_ALWAYS_INLINE int op_pbr_varint(op_pbr *r, uint64_t *v, const char **why)
{
    if (OP_LIKELY(r->p < r->end && *r->p < 0x80)) { /* most of a trace's varints: one byte */
        *v = *r->p++;
        return 0;
    }
    uint64_t x = 0;
    for (int s = 0; s < 70; s += 7) {
        if (r->p >= r->end) {
            *why = "a varint is cut off";
            return -1;
        }
        unsigned char b = *r->p++;
        x |= (uint64_t)(b & 0x7f) << s;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    *why = "a varint is longer than 10 bytes";
    return -1;
}

/* The next field of r: 1, 0 at the end, -1 on malformed input (*why set,
 * r->p where it lies). Groups and unknown wire types are malformed. Always
 * inline: a .pftrace's reader calls it some ten times per slice, and the
 * call was a quarter of its time, and gcc still made calls of it in the
 * reader's loops. */
static OP_ALWAYS_INLINE int op_pbr_next(op_pbr *r, op_pbf *f, const char **why)
{
    if (r->p >= r->end) return 0;
    uint64_t tag;
    if (op_pbr_varint(r, &tag, why) != 0) return -1;
    if (tag >> 3 == 0 || tag >> 3 > 0x1fffffff) {
        *why = "a field number is 0 or too large";
        return -1;
    }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* field and wire in one store: gcc compares the pair as one word read
     * back from memory (field == N && wire == W), and two 4-byte stores
     * cannot be forwarded to that load (a stall per field, half of the
     * reader's time in op_pf_track_event). */
    uint64_t fw = (tag >> 3) | (uint64_t)(uint32_t)(tag & 7) << 32;
    memcpy(f, &fw, sizeof fw);
#else
    f->field = (uint32_t)(tag >> 3);
    f->wire = (int)(tag & 7);
#endif
    f->v = 0; /* every member set on every path: inlined, the compiler drops the stores it need not */
    f->sub.p = f->sub.end = r->p;
    switch (f->wire) {
    case 0: return op_pbr_varint(r, &f->v, why) == 0 ? 1 : -1;
    case 1:
    case 5: {
        size_t n = f->wire == 1 ? 8 : 4;
        if ((size_t)(r->end - r->p) < n) {
            *why = "a fixed-size field is cut off";
            return -1;
        }
        f->v = 0;
        for (size_t i = 0; i < n; i++) f->v |= (uint64_t)r->p[i] << (8 * i);
        r->p += n;
        return 1;
    }
    case 2: {
        uint64_t n;
        if (op_pbr_varint(r, &n, why) != 0) return -1;
        if (n > (uint64_t)(r->end - r->p)) {
            *why = "a length runs past the end of its message";
            return -1;
        }
        f->sub.p = r->p;
        f->sub.end = r->p + n;
        r->p += n;
        return 1;
    }
    default: *why = "a field has an unknown or unsupported wire type (groups are not read)"; return -1;
    }
}

/* A varint's value as the signed integer protobuf's int32/int64 encode. */
static inline int64_t op_pb_int(uint64_t v)
{
    return (int64_t)v;
}

#endif

/* A bounds-checked protocol-buffers decoder over bytes in memory, for the
 * .pftrace reader: every varint and length is checked against the end, so
 * hostile input can only make it fail, with the position and the reason. */
#ifndef OPPROF_IMPORT_PBR_H
#define OPPROF_IMPORT_PBR_H

#include <stddef.h>
#include <stdint.h>

#include "common/pfschema.h" /* the wire types */

typedef struct op_pbr {
    const unsigned char *p, *end;
} op_pbr;

/* One field: its number and wire type; a varint or fixed value in v, a
 * length-delimited one in sub. */
typedef struct op_pbf {
    uint32_t field;
    int wire;
    uint64_t v;
    op_pbr sub;
} op_pbf;

/* 0 done, or -1 with *why set: a varint longer than 10 bytes or cut by the
 * end. */
static inline int op_pbr_varint(op_pbr *r, uint64_t *v, const char **why)
{
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
 * r->p where it lies). Groups and unknown wire types are malformed. */
int op_pbr_next(op_pbr *r, op_pbf *f, const char **why);

/* A varint's value as the signed integer protobuf's int32/int64 encode. */
static inline int64_t op_pb_int(uint64_t v)
{
    return (int64_t)v;
}

#endif

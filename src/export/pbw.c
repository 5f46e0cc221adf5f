/* The protocol-buffers encoder (see pbw.h). */
#include "export/pbw.h"

#include <stdlib.h>
#include <string.h>

static int room(op_pbw *b, size_t k)
{
    if (b->failed) return 0;
    if (b->cap - b->n >= k) return 1;
    size_t c = b->cap ? b->cap : 256;
    while (c - b->n < k) {
        if (c > SIZE_MAX / 2) {
            b->failed = 1;
            return 0;
        }
        c *= 2;
    }
    unsigned char *p = realloc(b->p, c);
    if (!p) {
        b->failed = 1;
        return 0;
    }
    b->p = p;
    b->cap = c;
    return 1;
}

static size_t put_varint(unsigned char *d, uint64_t v)
{
    size_t k = 0;
    while (v >= 0x80) {
        d[k++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    d[k++] = (unsigned char)v;
    return k;
}

void op_pbw_varint(op_pbw *b, uint64_t v)
{
    if (room(b, 10)) b->n += put_varint(b->p + b->n, v);
}

void op_pbw_raw(op_pbw *b, const void *p, size_t n)
{
    if (n && room(b, n)) {
        memcpy(b->p + b->n, p, n);
        b->n += n;
    }
}

void op_pbw_fixed64(op_pbw *b, uint32_t field, uint64_t v)
{
    op_pbw_tag(b, field, OP_PB_I64);
    unsigned char le[8];
    for (int i = 0; i < 8; i++) le[i] = (unsigned char)(v >> (8 * i));
    op_pbw_raw(b, le, 8);
}

void op_pbw_bytes(op_pbw *b, uint32_t field, const void *p, size_t n)
{
    op_pbw_tag(b, field, OP_PB_LEN);
    op_pbw_varint(b, n);
    op_pbw_raw(b, p, n);
}

void op_pbw_begin(op_pbw *b, uint32_t field)
{
    op_pbw_tag(b, field, OP_PB_LEN);
    if (b->depth == OP_PBW_DEPTH) { /* a writer bug, not data: fail loudly in the status */
        b->failed = 1;
        return;
    }
    if (!room(b, 1)) return;
    b->open[b->depth++] = b->n;
    b->p[b->n++] = 0;
}

void op_pbw_end(op_pbw *b)
{
    if (b->failed || b->depth == 0) {
        b->failed = 1;
        return;
    }
    size_t at = b->open[--b->depth];
    size_t len = b->n - at - 1;
    unsigned char v[10];
    size_t k = put_varint(v, len);
    if (k > 1) { /* move the body up to make room for a longer length */
        if (!room(b, k - 1)) return;
        memmove(b->p + at + k, b->p + at + 1, len);
        b->n += k - 1;
    }
    memcpy(b->p + at, v, k);
}

void op_pbw_free(op_pbw *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* The protocol-buffers encoder (see pbw.h). */
#include "export/pbw.h"

#include <stdlib.h>
#include <string.h>

/* 1 when k more bytes fit (the buffer grown if need be), 0 once failed. */
static int room(op_pbw *b, size_t k)
{
    return op_buf_reserve(&b->out, k) == 0;
}

void op_pbw_varint_grow(op_pbw *b, uint64_t v)
{
    if (room(b, 10)) b->out.n += op_pb_put_varint((unsigned char *)b->out.p + b->out.n, v);
}

void op_pbw_raw_grow(op_pbw *b, const void *p, size_t n)
{
    if (n) op_buf_put(&b->out, p, n);
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
        op_buf_fail(&b->out);
        return;
    }
    if (!room(b, 1)) return;
    b->open[b->depth++] = b->out.n;
    b->out.p[b->out.n++] = 0;
}

void op_pbw_end(op_pbw *b)
{
    if (b->out.failed || b->depth == 0) {
        op_buf_fail(&b->out);
        return;
    }
    size_t at = b->open[--b->depth];
    size_t len = b->out.n - at - 1;
    unsigned char v[10];
    size_t k = op_pb_put_varint(v, len);
    if (k > 1) { /* move the body up to make room for a longer length */
        if (!room(b, k - 1)) return;
        memmove(b->out.p + at + k, b->out.p + at + 1, len);
        b->out.n += k - 1;
    }
    memcpy(b->out.p + at, v, k);
}

void op_pbw_free(op_pbw *b)
{
    op_buf_free(&b->out);
    memset(b, 0, sizeof *b);
}

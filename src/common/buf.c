/* The growable byte buffer (see buf.h). */
#include "common/buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/vec.h"

int op_buf_grow(op_buf *b, size_t extra)
{
    if (b->failed) return -1;
    if (extra > SIZE_MAX - 1 - b->n) return op_buf_fail(b);
    return op_grow(&b->p, &b->cap, b->n + extra + 1 /* the NUL */, 1) ? op_buf_fail(b) : 0;
}

int op_buf_fill(op_buf *b, char c, size_t n)
{
    if (op_buf_reserve(b, n) != 0) return -1;
    memset(b->p + b->n, c, n);
    b->n += n;
    return 0;
}

int op_buf_printf(op_buf *b, const char *fmt, ...)
{
    if (b->failed) return -1;
    /* Most pieces are short: format once into what is free (at least 256
     * bytes), and a second time only when that was too small. */
    if (op_buf_reserve(b, 255) != 0) return -1;
    size_t room = b->cap - b->n;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->p + b->n, room, fmt, ap);
    va_end(ap);
    if (n < 0) return op_buf_fail(b);
    if ((size_t)n >= room) {
        if (op_buf_reserve(b, (size_t)n) != 0) return -1;
        va_start(ap, fmt);
        vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    b->n += (size_t)n;
    return 0;
}

char *op_buf_take(op_buf *b)
{
    if (op_buf_reserve(b, 0) != 0) {
        op_buf_free(b);
        return NULL;
    }
    b->p[b->n] = '\0';
    char *p = b->p;
    memset(b, 0, sizeof *b);
    return p;
}

void op_buf_free(op_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

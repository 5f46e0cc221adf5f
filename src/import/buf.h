/* A growable byte buffer for the reader's scratch text. */
#ifndef OPPROF_IMPORT_BUF_H
#define OPPROF_IMPORT_BUF_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct op_buf {
    char *p;
    size_t n, cap;
} op_buf;

int op_buf_reserve(op_buf *b, size_t extra);

static inline int op_buf_put(op_buf *b, const void *s, size_t n)
{
    if (b->cap - b->n < n && op_buf_reserve(b, n) != 0) return -1;
    if (n) memcpy(b->p + b->n, s, n);
    b->n += n;
    return 0;
}

static inline int op_buf_putc(op_buf *b, char c)
{
    return op_buf_put(b, &c, 1);
}

static inline void op_buf_free(op_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

#endif

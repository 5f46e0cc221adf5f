/* A growable byte buffer: the one every module builds text and bytes in
 * (the reader's scratch strings, tables and summaries, the collector's shape
 * text, folded stacks, the report's columns).
 *
 * Out of memory, the one convention: sticky. A failed allocation puts the
 * buffer in the failed state (b->failed): from then on every call leaves it
 * as it is and returns -1, until op_buf_free(). So a writer appends freely
 * and checks b->failed once at the end, and a parser that must stop at once
 * tests the call's -1; both see the same state. Code that fails for a reason
 * of its own while filling a buffer may call op_buf_fail() to join it.
 *
 * p[0 .. n) is the content, not NUL-terminated as it grows (a store per
 * byte the import's hot loop would pay); room for one byte more is always
 * reserved, so op_buf_str() and op_buf_take() end it with a NUL without
 * allocating. Encoders may write at p + n themselves after op_buf_reserve,
 * and n = 0 empties the buffer. */
#ifndef OPPROF_COMMON_BUF_H
#define OPPROF_COMMON_BUF_H

#include <stddef.h>
#include <string.h>

#include "common/compiler.h"

typedef struct op_buf {
    char *p;
    size_t n, cap;
    int failed; /* an allocation failed (sticky) */
} op_buf;

/* Slow path of op_buf_reserve: grows p. */
int op_buf_grow(op_buf *b, size_t extra);

/* Room for `extra` more bytes (and the NUL after them): 0 or -1. */
static inline int op_buf_reserve(op_buf *b, size_t extra)
{
    if (b->cap - b->n > extra) return 0; /* a failed buffer has cap == n */
    return op_buf_grow(b, extra);
}

static inline int op_buf_put(op_buf *b, const void *s, size_t n)
{
    if (op_buf_reserve(b, n) != 0) return -1;
    if (n) memcpy(b->p + b->n, s, n);
    b->n += n;
    return 0;
}

static inline int op_buf_putc(op_buf *b, char c)
{
    if (op_buf_reserve(b, 1) != 0) return -1;
    b->p[b->n++] = c;
    return 0;
}

static inline int op_buf_puts(op_buf *b, const char *s)
{
    return op_buf_put(b, s, strlen(s));
}

/* n copies of c. */
int op_buf_fill(op_buf *b, char c, size_t n);

int op_buf_printf(op_buf *b, const char *fmt, ...) OP_PRINTF(2, 3);

/* Puts the buffer in the failed state; returns -1. Its room is forgotten
 * (cap = n), so the inline fast path needs no test of its own. */
static inline int op_buf_fail(op_buf *b)
{
    b->failed = 1;
    b->cap = b->n;
    return -1;
}

/* The content as a C string, "" when nothing was ever added. Good until
 * the next change of the buffer. */
static inline const char *op_buf_str(op_buf *b)
{
    if (!b->p) return "";
    b->p[b->n] = '\0';
    return b->p;
}

/* The content as an allocated C string the caller frees ("" when empty),
 * leaving the buffer empty; NULL when the buffer failed (it is freed). */
char *op_buf_take(op_buf *b);

/* Frees the bytes and clears the failed state. */
void op_buf_free(op_buf *b);

#endif

#include "analysis/textbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reserve(op_textbuf *b, size_t extra)
{
    if (b->oom) return -1;
    if (b->n + extra + 1 <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + extra + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void op_textbuf_put(op_textbuf *b, const char *s, size_t n)
{
    if (reserve(b, n)) return;
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

void op_textbuf_puts(op_textbuf *b, const char *s)
{
    op_textbuf_put(b, s, strlen(s));
}

void op_textbuf_fill(op_textbuf *b, char c, size_t n)
{
    if (reserve(b, n)) return;
    memset(b->p + b->n, c, n);
    b->n += n;
    b->p[b->n] = '\0';
}

void op_textbuf_printf(op_textbuf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        op_textbuf_put(b, small, (size_t)n);
        return;
    }
    if (reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}

void op_textbuf_free(op_textbuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

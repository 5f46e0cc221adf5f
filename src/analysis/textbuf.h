/* A growable text buffer for the table and summary writers. A failed
 * allocation is remembered (oom) so writers check once at the end. */
#ifndef OPPROF_ANALYSIS_TEXTBUF_H
#define OPPROF_ANALYSIS_TEXTBUF_H

#include <stddef.h>

#include "common/error.h"

typedef struct op_textbuf {
    char *p;    /* NUL-terminated while not oom */
    size_t n, cap;
    int oom;
} op_textbuf;

void op_textbuf_put(op_textbuf *b, const char *s, size_t n);
void op_textbuf_puts(op_textbuf *b, const char *s);
void op_textbuf_fill(op_textbuf *b, char c, size_t n);
void op_textbuf_printf(op_textbuf *b, const char *fmt, ...) OP_PRINTF(2, 3);
void op_textbuf_free(op_textbuf *b);

#endif

/* The report's writers (rep_out.c): an output stream that remembers its
 * first error, JSON strings safe to inline in HTML, base64, and LEB128
 * varints for the binary columns. */
#ifndef OPPROF_REPORT_REP_OUT_H
#define OPPROF_REPORT_REP_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "common/compiler.h"

/* ---- output ---------------------------------------------------------- */

typedef struct rep_out {
    FILE *f;
    int err; /* set by the first failed write; later writes do nothing */
} rep_out;

void rep_write(rep_out *o, const void *p, size_t n);
void rep_puts(rep_out *o, const char *s);
void rep_printf(rep_out *o, const char *fmt, ...) OP_PRINTF(2, 3);

/* A JSON string literal, quotes included. '<', '>' and '&' are written as
 * \u003c, \u003e, \u0026 so that no "</script" or "<!--" can appear inside
 * the page's data blocks whatever the user's names contain. */
void rep_json_str(rep_out *o, const char *s, size_t len);
static inline void rep_json_cstr(rep_out *o, const char *s)
{
    rep_json_str(o, s ? s : "", s ? strlen(s) : 0);
}
/* `"key":` */
void rep_json_key(rep_out *o, const char *key);
void rep_base64(rep_out *o, const uint8_t *p, size_t n);

/* ---- varints into a common op_buf (sticky when memory runs out) ----- */

void rep_buf_uv(op_buf *b, uint64_t v);              /* LEB128 */
static inline void rep_buf_sv(op_buf *b, int64_t v) /* zigzag, then LEB128 */
{
    rep_buf_uv(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/* One column of a binary block: JS decodes `n` values of `kind` from
 * [off, off+len) into an array of `type` ("f64", "u32", "u16", "u8").
 * Kinds: "u" unsigned varints, "z" zigzag varints, "d" zigzag deltas, "g"
 * (event starts) zigzag gaps after the previous event of the level; "su"
 * and "sz" sparse: a count, then (gap, value) pairs for the nonzero
 * entries only (gap: entries skipped since the previous one). */
typedef struct rep_col {
    const char *name, *kind, *type;
    size_t off, len;
} rep_col;

/* Writes `{"n":N,"cols":[[name,kind,type,off,len],...]}`. */
void rep_cols_json(rep_out *o, size_t n, const rep_col *cols, size_t ncols);

#endif

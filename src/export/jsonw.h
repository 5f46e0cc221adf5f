/* A buffered JSON text writer for the exporters: numbers formatted with
 * integer arithmetic, strings escaped and made valid UTF-8, output handed in
 * large blocks to a sink (a file, a gzip stream, a stdio stream).
 *
 * Errors are sticky: after the sink fails, writes go nowhere and
 * op_jw_status() returns the first failure, so a writer checks once per event
 * rather than after every call. */
#ifndef OPPROF_EXPORT_JSONW_H
#define OPPROF_EXPORT_JSONW_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/jsonesc.h"

typedef struct op_jw op_jw;

/* Takes w->buf[0 .. w->p - w->buf) and leaves w->buf, w->p and w->end ready
 * for more (the sink may swap in another buffer). Returns 0 or a negative
 * opprof_status after op_fail(). */
typedef int (*op_jw_flush_fn)(void *ctx, op_jw *w);

struct op_jw {
    char *p;   /* next byte */
    char *end; /* end of the buffer */
    char *buf;
    op_jw_flush_fn flush;
    void *ctx;
    int status;     /* first failure, 0 none */
    uint64_t bytes; /* bytes handed to the sink */
};

/* Buffers are at least this large; any single reserve fits in one. */
#define OP_JW_MIN_BUF (1u << 20)
#define OP_JW_MAX_RESERVE (OP_JW_MIN_BUF / 2)

/* Slow path of op_jw_need: flushes, and on failure discards what follows. */
int op_jw_make_room(op_jw *w, size_t n);

/* Ensures n contiguous bytes at w->p (n <= OP_JW_MAX_RESERVE). */
static inline int op_jw_need(op_jw *w, size_t n)
{
    if ((size_t)(w->end - w->p) >= n) return 0;
    return op_jw_make_room(w, n);
}

static inline void op_jw_put(op_jw *w, const char *s, size_t n)
{
    if (n > OP_JW_MAX_RESERVE) {
        while (n) {
            size_t k = n < OP_JW_MAX_RESERVE ? n : OP_JW_MAX_RESERVE;
            op_jw_put(w, s, k);
            s += k;
            n -= k;
        }
        return;
    }
    op_jw_need(w, n);
    memcpy(w->p, s, n);
    w->p += n;
}

#define OP_JW_LIT(w, lit) op_jw_put((w), (lit), sizeof(lit) - 1)

/* Flushes what is buffered; returns the sticky status. */
int op_jw_finish(op_jw *w);

static inline int op_jw_status(const op_jw *w)
{
    return w->status;
}

/* Writes v in decimal at p; returns the end. At most 20 bytes. */
char *op_fmt_u64(char *p, uint64_t v);

/* At most 20 bytes. */
static inline char *op_fmt_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return op_fmt_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return op_fmt_u64(p, (uint64_t)v);
}

/* Nanoseconds as microseconds with three decimals ("12.345"): the exact
 * value, no floating point. At most 25 bytes. */
char *op_fmt_us3(char *p, int64_t ns);

/* Writes s[0..n) as a JSON string, splitting long strings across buffers. */
void op_jw_str(op_jw *w, const char *s, size_t n);

static inline void op_jw_cstr(op_jw *w, const char *s)
{
    op_jw_str(w, s, strlen(s));
}

static inline void op_jw_u64(op_jw *w, uint64_t v)
{
    op_jw_need(w, 24);
    w->p = op_fmt_u64(w->p, v);
}

static inline void op_jw_i64(op_jw *w, int64_t v)
{
    op_jw_need(w, 24);
    w->p = op_fmt_i64(w->p, v);
}

/* 1 when s[0..n) is exactly one JSON value (surrounding spaces allowed)
 * whose strings are valid UTF-8 without raw control characters, so it may be
 * copied into the output as is. */
int op_json_is_value(const char *s, size_t n);

/* 1 when s[0..n) is a list of object members, `"k": v, "k2": v2`, valid in
 * the same sense (the text between an object's braces). */
int op_json_is_members(const char *s, size_t n);

#endif

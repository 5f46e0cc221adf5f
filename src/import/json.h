/* A streaming JSON pull parser: the caller asks for one token at a time and
 * the parser refills its buffer from a byte source in chunks, so memory stays
 * bounded by the largest single token, not by the document.
 *
 * It validates the whole grammar (RFC 8259) as it goes: structure, string
 * escapes, UTF-8, number syntax, nesting depth (bounded, no recursion). The
 * first problem stops it with a message and the byte offset where it lies. */
#ifndef OPPROF_IMPORT_JSON_H
#define OPPROF_IMPORT_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "import/source.h"

#define OP_JSON_MAX_DEPTH 256
/* The longest string or number kept contiguous: what one token can make the
 * reader hold. Far past a real trace's (a long "Call stack" or args text is
 * KiBs), and small enough that a file of such tokens costs little. */
#define OP_JSON_MAX_TOKEN ((size_t)16 << 20)

typedef enum op_jtok {
    OP_JT_ERROR = -1,
    OP_JT_EOF = 0,
    OP_JT_OBJ_BEGIN,
    OP_JT_OBJ_END,
    OP_JT_ARR_BEGIN,
    OP_JT_ARR_END,
    OP_JT_KEY,    /* a member name: s, n */
    OP_JT_STRING, /* s, n: decoded, valid UTF-8, not NUL-terminated */
    OP_JT_NUMBER, /* s, n: the literal text, grammar already checked */
    OP_JT_TRUE,
    OP_JT_FALSE,
    OP_JT_NULL
} op_jtok;

typedef struct op_json {
    op_source *src;
    unsigned char *buf;
    size_t pos, len, cap;
    uint64_t base; /* stream offset of buf[0] */
    int eof;       /* the source has nothing more */
    int state;
    unsigned depth;
    unsigned char stack[OP_JSON_MAX_DEPTH]; /* 1: object, 0: array */
    /* The current token. Its text is valid until the next call. */
    const char *s;
    size_t n;
    uint64_t off; /* stream offset of the token's first byte */
    char *dec;    /* decoded strings that held escapes */
    size_t dec_cap;
    /* The first failure. */
    int status;
    uint64_t err_off;
    char err[160];
} op_json;

/* chunk: the initial buffer size (tests use tiny ones to exercise refills). */
int op_json_init(op_json *j, op_source *src, size_t chunk);
void op_json_free(op_json *j);

/* The next token, or OP_JT_ERROR with j->status, j->err and j->err_off set.
 * OP_JT_EOF only after one complete top-level value and trailing space. */
op_jtok op_json_next(op_json *j);

/* Consumes the rest of a value whose first token `t` was just returned
 * (a no-op for scalars). */
op_jtok op_json_skip(op_json *j, op_jtok t);

/* Stops the parse with a problem found by the caller at offset `off`.
 * Returns OP_JT_ERROR. */
op_jtok op_json_fail(op_json *j, int status, uint64_t off, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static inline int op_json_key_is(const op_json *j, const char *lit, size_t len)
{
    return j->n == len && memcmp(j->s, lit, len) == 0;
}
#define OP_JSON_KEY_IS(j, lit) op_json_key_is((j), (lit), sizeof(lit) - 1)

#endif

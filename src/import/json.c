/* The streaming JSON pull parser (see json.h). A token is always contiguous
 * in the buffer: when one reaches the end of the data read so far, the
 * unread tail moves to the front and the next chunk is appended, so the hot
 * loops scan plain memory and never handle a token split in two. */
#include "import/json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common/error.h"
#include "common/jsonchar.h"
#include "common/textesc.h"
#include "common/utf8.h"
#include "common/vec.h"

enum { ST_START, ST_VALUE, ST_VALUE_OR_END, ST_KEY_OR_END, ST_KEY, ST_COLON, ST_AFTER, ST_DONE, ST_FAILED };

op_jtok op_json_fail(op_json *j, int status, uint64_t off, const char *fmt, ...)
{
    if (j->state == ST_FAILED) return OP_JT_ERROR;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->err, sizeof j->err, fmt, ap);
    va_end(ap);
    j->status = status;
    j->err_off = off;
    j->state = ST_FAILED;
    return OP_JT_ERROR;
}

int op_json_init(op_json *j, op_source *src, size_t chunk)
{
    memset(j, 0, sizeof *j);
    j->src = src;
    j->cap = chunk < 16 ? 16 : chunk;
    j->buf = malloc(j->cap);
    j->state = ST_START;
    return j->buf ? 0 : -1;
}

void op_json_free(op_json *j)
{
    free(j->buf);
    free(j->dec);
    j->buf = NULL;
    j->dec = NULL;
}

/* Drops buf[0..keep), then reads the next chunk. 1: bytes were added,
 * 0: the source has ended, -1: failure (already recorded). */
static int more(op_json *j, size_t keep)
{
    if (j->eof) return 0;
    if (keep) {
        memmove(j->buf, j->buf + keep, j->len - keep);
        j->len -= keep;
        j->pos = j->pos > keep ? j->pos - keep : 0;
        j->base += keep;
    }
    if (j->len == j->cap) {
        if (j->cap >= OP_JSON_MAX_TOKEN)
            return op_json_fail(j, OPPROF_E_RANGE, j->base, "a single token longer than %zu MiB",
                                OP_JSON_MAX_TOKEN >> 20),
                   -1;
        if (op_grow(&j->buf, &j->cap, j->cap + 1, 1)) return op_json_fail(j, OPPROF_E_NOMEM, j->base, "out of memory"), -1;
    }
    ssize_t n = op_source_read(j->src, j->buf + j->len, j->cap - j->len);
    if (n < 0) return op_json_fail(j, (int)n, j->src->err_off, "%s", j->src->err), -1;
    if (n == 0) {
        j->eof = 1;
        return 0;
    }
    j->len += (size_t)n;
    return 1;
}

/* Makes k bytes available at *i, keeping the token that starts at *start;
 * both indices follow the data when it moves. 1, 0 (too few left), -1. */
static int avail(op_json *j, size_t *start, size_t *i, size_t k)
{
    while (j->len - *i < k) {
        size_t s = *start;
        int r = more(j, s);
        *i -= s;
        *start = 0;
        if (r <= 0) return r;
    }
    return 1;
}

static int skip_ws(op_json *j)
{
    for (;;) {
        const unsigned char *b = j->buf;
        size_t p = j->pos, n = j->len;
        while (p < n && (op_json_char[b[p]] & OP_JC_WS)) p++;
        j->pos = p;
        if (p < n) return 1;
        int r = more(j, p);
        if (r <= 0) return r;
    }
}

/* The end of a plain run of a string: the first byte that stops it
 * (OP_JC_STOP), found sixteen bytes at a time where SSE2 tests the same set. */
static size_t scan_plain(const unsigned char *b, size_t i, size_t n)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x1f);
    while (i + 16 <= n) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(b + i));
        __m128i m = _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash));
        m = _mm_or_si128(m, _mm_cmpeq_epi8(_mm_min_epu8(v, ctl), v)); /* v <= 0x1f */
        unsigned mask = (unsigned)_mm_movemask_epi8(m) | (unsigned)_mm_movemask_epi8(v); /* high bit: non-ASCII */
        if (mask) return i + (size_t)__builtin_ctz(mask);
        i += 16;
    }
#endif
    while (i < n && !(op_json_char[b[i]] & OP_JC_STOP)) i++;
    return i;
}

/* The four hex digits after "\u" at p, or -1. */
static long hex4(const unsigned char *p)
{
    long v = 0;
    for (int k = 0; k < 4; k++) {
        int h = op_json_hexval(p[k]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

static size_t put_utf8(char *o, unsigned long cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Decodes the escapes of a string already validated by lex_string. */
static int decode(op_json *j, const unsigned char *p, size_t n)
{
    if (op_grow(&j->dec, &j->dec_cap, n + 1, 1)) return -1;
    char *o = j->dec;
    size_t i = 0;
    while (i < n) {
        if (p[i] != '\\') {
            *o++ = (char)p[i++];
            continue;
        }
        unsigned char e = p[i + 1];
        i += 2;
        switch (e) {
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            unsigned long cp = (unsigned long)hex4(p + i);
            i += 4;
            if (cp >= 0xd800 && cp <= 0xdbff) {
                unsigned long lo = (unsigned long)hex4(p + i + 2);
                i += 6;
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            }
            if (cp == 0) { /* kept as C0 80 so that names stay C strings (common/textesc.h) */
                *o++ = (char)OP_NUL_LEAD;
                *o++ = (char)OP_NUL_TRAIL;
            } else {
                o += put_utf8(o, cp);
            }
            break;
        }
        default: *o++ = (char)e; break; /* \" \\ \/ */
        }
    }
    j->s = j->dec;
    j->n = (size_t)(o - j->dec);
    return 0;
}

static op_jtok lex_string(op_json *j, op_jtok kind)
{
    size_t start = j->pos, i = start + 1;
    int escaped = 0;
    for (;;) {
        i = scan_plain(j->buf, i, j->len);
        if (i >= j->len) {
            int r = avail(j, &start, &i, 1);
            if (r < 0) return OP_JT_ERROR;
            if (r == 0) return op_json_fail(j, OPPROF_E_PARSE, j->base + start, "unterminated string");
            continue;
        }
        unsigned char c = j->buf[i];
        if (c == '"') break;
        if (c < 0x20)
            return op_json_fail(j, OPPROF_E_PARSE, j->base + i, "control character 0x%02x in a string", c);
        if (c == '\\') {
            int r = avail(j, &start, &i, 2);
            if (r < 0) return OP_JT_ERROR;
            if (r == 0) return op_json_fail(j, OPPROF_E_PARSE, j->base + start, "unterminated string");
            unsigned char e = j->buf[i + 1];
            escaped = 1;
            if (e != 'u') {
                if (!strchr("\"\\/bfnrt", e) || !e)
                    return op_json_fail(j, OPPROF_E_PARSE, j->base + i, "invalid escape in a string");
                i += 2;
                continue;
            }
            r = avail(j, &start, &i, 6);
            if (r < 0) return OP_JT_ERROR;
            long cp = r ? hex4(j->buf + i + 2) : -1;
            if (cp < 0) return op_json_fail(j, OPPROF_E_PARSE, j->base + i, "invalid \\u escape in a string");
            if (cp >= 0xdc00 && cp <= 0xdfff)
                return op_json_fail(j, OPPROF_E_PARSE, j->base + i, "lone UTF-16 surrogate in a string");
            if (cp >= 0xd800 && cp <= 0xdbff) {
                r = avail(j, &start, &i, 12);
                if (r < 0) return OP_JT_ERROR;
                long lo = r && j->buf[i + 6] == '\\' && j->buf[i + 7] == 'u' ? hex4(j->buf + i + 8) : -1;
                if (lo < 0xdc00 || lo > 0xdfff)
                    return op_json_fail(j, OPPROF_E_PARSE, j->base + i, "lone UTF-16 surrogate in a string");
                i += 6;
            }
            i += 6;
            continue;
        }
        /* c >= 0x80: a multi-byte sequence. Cut short by the buffer, it
         * gets one more byte at a time until it is decided: asking for all
         * four at once could meet the end of the data (or a gzip error after
         * it) where a reader with the bytes already in hand decides "invalid"
         * from fewer, and the error must not depend on how data arrives. */
        size_t bad;
        int len = op_utf8_seq(j->buf + i, j->len - i, &bad);
        while (len < 0) {
            int r = avail(j, &start, &i, j->len - i + 1);
            if (r < 0) return OP_JT_ERROR;
            if (r == 0) break;
            len = op_utf8_seq(j->buf + i, j->len - i, &bad);
        }
        if (len <= 0) return op_json_fail(j, OPPROF_E_PARSE, j->base + i, "invalid UTF-8 in a string");
        i += (size_t)len;
    }
    j->off = j->base + start;
    j->pos = i + 1;
    if (escaped) {
        if (decode(j, j->buf + start + 1, i - start - 1) != 0)
            return op_json_fail(j, OPPROF_E_NOMEM, j->off, "out of memory");
    } else {
        j->s = (const char *)j->buf + start + 1;
        j->n = i - start - 1;
    }
    return kind;
}

static int digit(const char *s, size_t p, size_t n)
{
    return p < n && s[p] >= '0' && s[p] <= '9';
}

static op_jtok lex_number(op_json *j)
{
    size_t start = j->pos, i = start;
    for (;;) {
        while (i < j->len && (op_json_char[j->buf[i]] & OP_JC_NUM)) i++;
        if (i < j->len) break;
        int r = avail(j, &start, &i, 1);
        if (r < 0) return OP_JT_ERROR;
        if (r == 0) break;
    }
    const char *s = (const char *)j->buf + start;
    size_t n = i - start, p = 0;
    if (s[p] == '-') p++;
    if (!digit(s, p, n)) goto bad;
    if (s[p] == '0') p++;
    else
        while (digit(s, p, n)) p++;
    if (p < n && s[p] == '.') {
        p++;
        if (!digit(s, p, n)) goto bad;
        while (digit(s, p, n)) p++;
    }
    if (p < n && (s[p] == 'e' || s[p] == 'E')) {
        p++;
        if (p < n && (s[p] == '+' || s[p] == '-')) p++;
        if (!digit(s, p, n)) goto bad;
        while (digit(s, p, n)) p++;
    }
    if (p != n) goto bad;
    j->off = j->base + start;
    j->s = s;
    j->n = n;
    j->pos = i;
    return OP_JT_NUMBER;
bad:
    return op_json_fail(j, OPPROF_E_PARSE, j->base + start, "invalid number '%.*s'", (int)(n < 40 ? n : 40), s);
}

static op_jtok lex_literal(op_json *j)
{
    static const struct {
        const char *text;
        size_t n;
        op_jtok tok;
    } lits[] = {{"true", 4, OP_JT_TRUE}, {"false", 5, OP_JT_FALSE}, {"null", 4, OP_JT_NULL}};
    size_t start = j->pos, i = start;
    for (size_t k = 0; k < 3; k++) {
        if (j->buf[i] != (unsigned char)lits[k].text[0]) continue;
        int r = avail(j, &start, &i, lits[k].n);
        if (r < 0) return OP_JT_ERROR;
        if (r > 0 && memcmp(j->buf + i, lits[k].text, lits[k].n) == 0) {
            j->pos = i + lits[k].n;
            return lits[k].tok;
        }
        break;
    }
    return op_json_fail(j, OPPROF_E_PARSE, j->base + start, "invalid literal (expected true, false or null)");
}

static void after_value(op_json *j)
{
    j->state = j->depth ? ST_AFTER : ST_DONE;
}

static op_jtok unexpected(op_json *j, unsigned char c, const char *wanted)
{
    if (c >= 0x20 && c < 0x7f)
        return op_json_fail(j, OPPROF_E_PARSE, j->base + j->pos, "unexpected '%c', expected %s", c, wanted);
    return op_json_fail(j, OPPROF_E_PARSE, j->base + j->pos, "unexpected byte 0x%02x, expected %s", c, wanted);
}

static op_jtok open_container(op_json *j, int object)
{
    if (j->depth >= OP_JSON_MAX_DEPTH)
        return op_json_fail(j, OPPROF_E_PARSE, j->base + j->pos, "nesting deeper than %d levels", OP_JSON_MAX_DEPTH);
    j->stack[j->depth++] = (unsigned char)object;
    j->pos++;
    j->state = object ? ST_KEY_OR_END : ST_VALUE_OR_END;
    return object ? OP_JT_OBJ_BEGIN : OP_JT_ARR_BEGIN;
}

static op_jtok close_container(op_json *j)
{
    int object = j->stack[--j->depth];
    j->pos++;
    after_value(j);
    return object ? OP_JT_OBJ_END : OP_JT_ARR_END;
}

static op_jtok value(op_json *j, unsigned char c)
{
    op_jtok t;
    if (c == '{') return open_container(j, 1);
    if (c == '[') return open_container(j, 0);
    if (c == '"') t = lex_string(j, OP_JT_STRING);
    else if (c == '-' || (c >= '0' && c <= '9')) t = lex_number(j);
    else if (c == 't' || c == 'f' || c == 'n') t = lex_literal(j);
    else return unexpected(j, c, "a value");
    if (t != OP_JT_ERROR) after_value(j);
    return t;
}

op_jtok op_json_next(op_json *j)
{
    for (;;) {
        if (j->state == ST_FAILED) return OP_JT_ERROR;
        int r = skip_ws(j);
        if (r < 0) return OP_JT_ERROR;
        if (r == 0) {
            if (j->state == ST_DONE) return OP_JT_EOF;
            if (j->state == ST_START)
                return op_json_fail(j, OPPROF_E_PARSE, j->base + j->pos, "empty input: no JSON value");
            return op_json_fail(j, OPPROF_E_PARSE, j->base + j->pos, "unexpected end of input (truncated?)");
        }
        unsigned char c = j->buf[j->pos];
        j->off = j->base + j->pos;
        switch (j->state) {
        case ST_START:
            j->state = ST_VALUE;
            if (c == 0xef) { /* a UTF-8 byte order mark */
                size_t s = j->pos, i = j->pos;
                r = avail(j, &s, &i, 3);
                if (r < 0) return OP_JT_ERROR;
                if (r > 0 && j->buf[i + 1] == 0xbb && j->buf[i + 2] == 0xbf) {
                    j->pos = i + 3;
                    continue;
                }
                j->pos = i;
            }
            return value(j, c);
        case ST_VALUE: return value(j, c);
        case ST_VALUE_OR_END:
            if (c == ']') return close_container(j);
            return value(j, c);
        case ST_KEY_OR_END:
            if (c == '}') return close_container(j);
            /* fall through */
        case ST_KEY:
            if (c != '"') return unexpected(j, c, "a member name in quotes");
            if (lex_string(j, OP_JT_KEY) == OP_JT_ERROR) return OP_JT_ERROR;
            j->state = ST_COLON;
            if (j->pos < j->len && j->buf[j->pos] == ':') { /* the usual "key": spelling, without a refill */
                j->pos++;
                j->state = ST_VALUE;
            }
            return OP_JT_KEY;
        case ST_COLON:
            if (c != ':') return unexpected(j, c, "':' after a member name");
            j->pos++;
            j->state = ST_VALUE;
            continue;
        case ST_AFTER: {
            int object = j->stack[j->depth - 1];
            if (c == ',') {
                j->pos++;
                j->state = object ? ST_KEY : ST_VALUE;
                continue;
            }
            if (c == (object ? '}' : ']')) return close_container(j);
            return unexpected(j, c, object ? "',' or '}'" : "',' or ']'");
        }
        default: /* ST_DONE */
            return unexpected(j, c, "the end of the input after the JSON value");
        }
    }
}

op_jtok op_json_skip(op_json *j, op_jtok t)
{
    if (t != OP_JT_OBJ_BEGIN && t != OP_JT_ARR_BEGIN) return t;
    unsigned d = j->depth;
    while (j->depth >= d) {
        t = op_json_next(j);
        if (t == OP_JT_ERROR || t == OP_JT_EOF) return OP_JT_ERROR;
    }
    return t;
}

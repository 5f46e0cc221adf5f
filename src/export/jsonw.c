/* JSON text: number formatting, string escaping with UTF-8 repair, and the
 * buffered writer's slow paths. */
#include "export/jsonw.h"

#include "common/error.h"
#include "common/jsonchar.h"
#include "common/utf8.h"
#include "opprof.h"

static const char k_pairs[201] = "00010203040506070809"
                                 "10111213141516171819"
                                 "20212223242526272829"
                                 "30313233343536373839"
                                 "40414243444546474849"
                                 "50515253545556575859"
                                 "60616263646566676869"
                                 "70717273747576777879"
                                 "80818283848586878889"
                                 "90919293949596979899";

static unsigned digits10(uint64_t v)
{
    unsigned n = 1;
    for (;;) {
        if (v < 10) return n;
        if (v < 100) return n + 1;
        if (v < 1000) return n + 2;
        if (v < 10000) return n + 3;
        v /= 10000u;
        n += 4;
    }
}

char *op_fmt_u64(char *p, uint64_t v)
{
    unsigned n = digits10(v);
    char *q = p + n;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100u) * 2u;
        v /= 100u;
        *--q = k_pairs[r + 1];
        *--q = k_pairs[r];
    }
    if (v >= 10) {
        unsigned r = (unsigned)v * 2u;
        *--q = k_pairs[r + 1];
        *--q = k_pairs[r];
    } else {
        *--q = (char)('0' + v);
    }
    return p + n;
}

char *op_fmt_us3(char *p, int64_t ns)
{
    uint64_t u;
    if (ns < 0) {
        *p++ = '-';
        u = (uint64_t)0 - (uint64_t)ns;
    } else {
        u = (uint64_t)ns;
    }
    p = op_fmt_u64(p, u / 1000u);
    unsigned r = (unsigned)(u % 1000u);
    p[0] = '.';
    p[1] = (char)('0' + r / 100u);
    p[2] = k_pairs[(r % 100u) * 2u];
    p[3] = k_pairs[(r % 100u) * 2u + 1];
    return p + 4;
}

/* Strings at most this long are escaped straight into the buffer. */
#define STR_PIECE (OP_JW_MAX_RESERVE / 6 - 8)

void op_jw_str(op_jw *w, const char *s, size_t n)
{
    if (n <= STR_PIECE) {
        op_jw_need(w, op_json_escaped_max(n));
        w->p = op_json_escape(w->p, s, n);
        return;
    }
    /* Long strings go in pieces cut before a UTF-8 lead byte, so that no
     * well-formed sequence is split; the quotes of each piece are dropped. */
    OP_JW_LIT(w, "\"");
    while (n) {
        size_t k = n;
        if (k > STR_PIECE) {
            k = STR_PIECE;
            for (int back = 0; back < 3 && ((unsigned char)s[k] & 0xC0) == 0x80; back++) k--;
        }
        op_jw_need(w, op_json_escaped_max(k));
        char *end = op_json_escape(w->p, s, k);
        size_t body = (size_t)(end - w->p) - 2;
        memmove(w->p, w->p + 1, body);
        w->p += body;
        s += k;
        n -= k;
    }
    OP_JW_LIT(w, "\"");
}

int op_jw_make_room(op_jw *w, size_t n)
{
    if (!w->status && w->p > w->buf) {
        size_t len = (size_t)(w->p - w->buf);
        int rc = w->flush(w->ctx, w);
        if (rc == 0) w->bytes += len;
        else w->status = rc;
    }
    if (w->status) w->p = w->buf; /* after a failure, output is discarded */
    (void)n;                      /* every buffer holds OP_JW_MAX_RESERVE */
    return w->status;
}

int op_jw_finish(op_jw *w)
{
    op_jw_make_room(w, 0);
    return w->status;
}

/* ---- validation of text that producers stored as JSON already ---- */

static const char *skip_ws(const char *s, const char *e)
{
    while (s < e && (op_json_char[(unsigned char)*s] & OP_JC_WS)) s++;
    return s;
}

static const char *json_string(const char *s, const char *e)
{
    if (s >= e || *s != '"') return NULL;
    s++;
    while (s < e) {
        unsigned char c = (unsigned char)*s;
        if (c == '"') return s + 1;
        if (c < 0x20) return NULL;
        if (c == '\\') {
            if (s + 1 >= e) return NULL;
            char x = s[1];
            if (x == 'u') {
                if (e - s < 6) return NULL;
                for (int i = 2; i < 6; i++)
                    if (op_json_hexval((unsigned char)s[i]) < 0) return NULL;
                s += 6;
            } else if (x && strchr("\"\\/bfnrt", x)) {
                s += 2;
            } else {
                return NULL;
            }
            continue;
        }
        if (c >= 0x80) {
            size_t bad = 0;
            int len = op_utf8_seq((const unsigned char *)s, (size_t)(e - s), &bad);
            if (len <= 0) return NULL;
            s += len;
            continue;
        }
        s++;
    }
    return NULL;
}

static const char *json_number(const char *s, const char *e)
{
    if (s < e && *s == '-') s++;
    if (s >= e || *s < '0' || *s > '9') return NULL;
    if (*s == '0') s++;
    else
        while (s < e && *s >= '0' && *s <= '9') s++;
    if (s < e && *s == '.') {
        s++;
        if (s >= e || *s < '0' || *s > '9') return NULL;
        while (s < e && *s >= '0' && *s <= '9') s++;
    }
    if (s < e && (*s == 'e' || *s == 'E')) {
        s++;
        if (s < e && (*s == '+' || *s == '-')) s++;
        if (s >= e || *s < '0' || *s > '9') return NULL;
        while (s < e && *s >= '0' && *s <= '9') s++;
    }
    return s;
}

static const char *json_value(const char *s, const char *e, int depth);

/* Members up to (not including) the closing `close`, or to e when close is 0. */
static const char *json_members(const char *s, const char *e, int depth, char close)
{
    s = skip_ws(s, e);
    if ((close && s < e && *s == close) || (!close && s == e)) return s;
    for (;;) {
        s = json_string(s, e);
        if (!s) return NULL;
        s = skip_ws(s, e);
        if (s >= e || *s != ':') return NULL;
        s = json_value(skip_ws(s + 1, e), e, depth + 1);
        if (!s) return NULL;
        s = skip_ws(s, e);
        if ((close && s < e && *s == close) || (!close && s == e)) return s;
        if (s >= e || *s != ',') return NULL;
        s = skip_ws(s + 1, e);
    }
}

static const char *json_value(const char *s, const char *e, int depth)
{
    if (depth > 64 || s >= e) return NULL;
    switch (*s) {
    case '"': return json_string(s, e);
    case '{':
        s = json_members(s + 1, e, depth, '}');
        return s ? s + 1 : NULL;
    case '[':
        s = skip_ws(s + 1, e);
        if (s < e && *s == ']') return s + 1;
        for (;;) {
            s = json_value(s, e, depth + 1);
            if (!s) return NULL;
            s = skip_ws(s, e);
            if (s < e && *s == ']') return s + 1;
            if (s >= e || *s != ',') return NULL;
            s = skip_ws(s + 1, e);
        }
    case 't': return e - s >= 4 && memcmp(s, "true", 4) == 0 ? s + 4 : NULL;
    case 'f': return e - s >= 5 && memcmp(s, "false", 5) == 0 ? s + 5 : NULL;
    case 'n': return e - s >= 4 && memcmp(s, "null", 4) == 0 ? s + 4 : NULL;
    default: return json_number(s, e);
    }
}

int op_json_is_value(const char *s, size_t n)
{
    const char *e = s + n;
    const char *end = json_value(skip_ws(s, e), e, 0);
    return end && skip_ws(end, e) == e;
}

int op_json_is_members(const char *s, size_t n)
{
    return json_members(s, s + n, 0, 0) == s + n;
}

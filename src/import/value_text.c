/* Canonical text of a JSON value (see value_text.h). */
#include "import/value_text.h"

#include <stdio.h>

#include "common/error.h"
#include "common/textesc.h"

int op_json_quoted(op_buf *o, const char *s, size_t n)
{
    int rc = op_buf_putc(o, '"');
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (op_is_kept_nul((const unsigned char *)s + i, n - i)) {
            rc |= op_buf_put(o, s + run, i - run);
            rc |= op_buf_put(o, "\\u0000", 6);
            run = ++i + 1;
            continue;
        }
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        rc |= op_buf_put(o, s + run, i - run);
        /* The exporter's escapes (the short ones where JSON has them), so
         * that text read back compares equal to what was written. */
        char esc[8];
        char sh = c == '"' ? '"' : c == '\\' ? '\\' : c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r'
                : c == '\b' ? 'b' : c == '\f' ? 'f' : 0;
        int k = sh ? snprintf(esc, sizeof esc, "\\%c", sh) : snprintf(esc, sizeof esc, "\\u%04x", c);
        rc |= op_buf_put(o, esc, (size_t)k);
        run = i + 1;
    }
    rc |= op_buf_put(o, s + run, n - run);
    return rc | op_buf_putc(o, '"');
}

op_jtok op_json_value_text(op_json *j, op_jtok t, op_buf *o)
{
    unsigned depth = j->depth - (t == OP_JT_OBJ_BEGIN || t == OP_JT_ARR_BEGIN);
    int need_sep = 0, rc = 0;
    for (;;) {
        int opens = t == OP_JT_OBJ_BEGIN || t == OP_JT_ARR_BEGIN;
        int closes = t == OP_JT_OBJ_END || t == OP_JT_ARR_END;
        if (need_sep && !closes) rc |= op_buf_put(o, ", ", 2);
        switch (t) {
        case OP_JT_OBJ_BEGIN: rc |= op_buf_putc(o, '{'); break;
        case OP_JT_ARR_BEGIN: rc |= op_buf_putc(o, '['); break;
        case OP_JT_OBJ_END: rc |= op_buf_putc(o, '}'); break;
        case OP_JT_ARR_END: rc |= op_buf_putc(o, ']'); break;
        case OP_JT_KEY:
            rc |= op_json_quoted(o, j->s, j->n);
            rc |= op_buf_put(o, ": ", 2);
            break;
        case OP_JT_STRING: rc |= op_json_quoted(o, j->s, j->n); break;
        case OP_JT_NUMBER: rc |= op_buf_put(o, j->s, j->n); break;
        case OP_JT_TRUE: rc |= op_buf_put(o, "true", 4); break;
        case OP_JT_FALSE: rc |= op_buf_put(o, "false", 5); break;
        case OP_JT_NULL: rc |= op_buf_put(o, "null", 4); break;
        default: return t == OP_JT_EOF ? op_json_fail(j, OPPROF_E_PARSE, j->off, "unexpected end of input") : t;
        }
        if (rc) return op_json_fail(j, OPPROF_E_NOMEM, j->off, "out of memory");
        need_sep = !opens && t != OP_JT_KEY;
        if (j->depth == depth && !opens && t != OP_JT_KEY) return t;
        t = op_json_next(j);
    }
}

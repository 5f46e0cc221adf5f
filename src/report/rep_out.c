/* The report's writers (rep_out.h). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report/rep_out.h"

void rep_write(rep_out *o, const void *p, size_t n)
{
    if (o->err || !n) return;
    if (fwrite(p, 1, n, o->f) != n) o->err = 1;
}

void rep_puts(rep_out *o, const char *s)
{
    rep_write(o, s, strlen(s));
}

void rep_printf(rep_out *o, const char *fmt, ...)
{
    if (o->err) return;
    va_list ap;
    va_start(ap, fmt);
    if (vfprintf(o->f, fmt, ap) < 0) o->err = 1;
    va_end(ap);
}

void rep_json_str(rep_out *o, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    char buf[512];
    size_t k = 0;
    rep_write(o, "\"", 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (k > sizeof buf - 8) {
            rep_write(o, buf, k);
            k = 0;
        }
        if (c == '"' || c == '\\') {
            buf[k++] = '\\';
            buf[k++] = (char)c;
        } else if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x7f) {
            buf[k++] = '\\';
            buf[k++] = 'u';
            buf[k++] = '0';
            buf[k++] = '0';
            buf[k++] = hex[c >> 4];
            buf[k++] = hex[c & 15];
        } else {
            buf[k++] = (char)c; /* UTF-8 passes through; the browser's decoder replaces invalid bytes */
        }
    }
    buf[k++] = '"';
    rep_write(o, buf, k);
}

void rep_json_key(rep_out *o, const char *key)
{
    rep_json_cstr(o, key);
    rep_write(o, ":", 1);
}

void rep_base64(rep_out *o, const uint8_t *p, size_t n)
{
    static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char buf[4096];
    size_t k = 0, i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        buf[k++] = al[v >> 18];
        buf[k++] = al[(v >> 12) & 63];
        buf[k++] = al[(v >> 6) & 63];
        buf[k++] = al[v & 63];
        if (k == sizeof buf) {
            rep_write(o, buf, k);
            k = 0;
        }
    }
    if (i < n) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
        buf[k++] = al[v >> 18];
        buf[k++] = al[(v >> 12) & 63];
        buf[k++] = i + 1 < n ? al[(v >> 6) & 63] : '=';
        buf[k++] = '=';
    }
    rep_write(o, buf, k);
}

void rep_buf_uv(op_buf *b, uint64_t v)
{
    if (op_buf_reserve(b, 10) != 0) return;
    unsigned char *d = (unsigned char *)b->p;
    while (v >= 0x80) {
        d[b->n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    d[b->n++] = (unsigned char)v;
}

void rep_cols_json(rep_out *o, size_t n, const rep_col *cols, size_t ncols)
{
    rep_printf(o, "{\"n\":%zu,\"cols\":[", n);
    for (size_t i = 0; i < ncols; i++)
        rep_printf(o, "%s[\"%s\",\"%s\",\"%s\",%zu,%zu]", i ? "," : "", cols[i].name, cols[i].kind, cols[i].type,
                   cols[i].off, cols[i].len);
    rep_puts(o, "]}");
}

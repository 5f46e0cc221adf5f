#include "common/jsonesc.h"

#include <string.h>

#include "common/jsonchar.h"
#include "common/textesc.h"
#include "common/utf8.h"

char *op_json_escape(char *dst, const char *src, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)src, *e = s + n;
    char *d = dst;
    *d++ = '"';
    while (s < e) {
        const unsigned char *run = s;
        while (s < e && !(op_json_char[*s] & OP_JC_ESC)) s++; /* copied as is */
        memcpy(d, run, (size_t)(s - run));
        d += s - run;
        if (s >= e) break;
        unsigned char c = *s;
        if (op_is_kept_nul(s, (size_t)(e - s))) {
            memcpy(d, "\\u0000", 6);
            d += 6;
            s += 2;
            continue;
        }
        if (c >= 0x80) {
            size_t bad = 0;
            int len = op_utf8_seq(s, (size_t)(e - s), &bad);
            if (len > 0) {
                memcpy(d, s, (size_t)len);
                d += len;
                s += len;
            } else {
                memcpy(d, "\xEF\xBF\xBD", 3);
                d += 3;
                s += bad;
            }
            continue;
        }
        *d++ = '\\';
        switch (c) {
        case '"': *d++ = '"'; break;
        case '\\': *d++ = '\\'; break;
        case '\n': *d++ = 'n'; break;
        case '\r': *d++ = 'r'; break;
        case '\t': *d++ = 't'; break;
        case '\b': *d++ = 'b'; break;
        case '\f': *d++ = 'f'; break;
        default:
            /* Other control characters, and DEL (valid in JSON, but
             * invisible and harmful in terminals). */
            memcpy(d, "u00", 3);
            d[3] = hex[c >> 4];
            d[4] = hex[c & 15];
            d += 5;
            break;
        }
        s++;
    }
    *d++ = '"';
    return d;
}


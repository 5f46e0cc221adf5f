#include "common/textesc.h"

#include "common/error.h"
#include "opprof_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The length of the escape that stands for the character at s, 0 when it is
 * written as it is; *cp receives what \x or \u shows. */
static size_t escape_at(const unsigned char *s, size_t n, unsigned *cp, size_t *len)
{
    unsigned char c = s[0];
    *len = 1;
    if (c < 0x20 || c == 0x7f) {
        *cp = c;
        return c == '\n' || c == '\r' || c == '\t' ? 2 : 4;
    }
    if (op_is_kept_nul(s, n)) {
        *cp = 0;
        *len = 2;
        return 4;
    }
    /* C2 80-9F: the C1 controls U+0080-009F (0x9B is a terminal's CSI, as ESC [ is) */
    if (c == 0xC2 && n >= 2 && s[1] >= 0x80 && s[1] <= 0x9F) {
        *cp = s[1];
        *len = 2;
        return 6;
    }
    /* E2 80 AA-AE: U+202A-202E; E2 81 A6-A9: U+2066-2069 */
    if (c == 0xE2 && n >= 3 &&
        ((s[1] == 0x80 && s[2] >= 0xAA && s[2] <= 0xAE) || (s[1] == 0x81 && s[2] >= 0xA6 && s[2] <= 0xA9))) {
        *cp = 0x2000u | (unsigned)(s[1] & 0x3f) << 6 | (s[2] & 0x3fu);
        *len = 3;
        return 6;
    }
    return 0;
}

int op_text_needs_escape(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = p[i];
        if (c < 0x20 || c == 0x7f || c == OP_NUL_LEAD || c == 0xC2 || c == 0xE2) {
            unsigned cp;
            size_t len;
            if (escape_at(p + i, n - i, &cp, &len)) return 1;
        }
    }
    return 0;
}

size_t op_text_escape(const char *s, size_t n, char *out, size_t cap)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t need = 0, written = 0;
    int fits = cap > 0;
    for (size_t i = 0; i < n;) {
        unsigned cp;
        size_t len;
        size_t esc = escape_at(p + i, n - i, &cp, &len);
        char buf[8];
        const char *piece = s + i;
        size_t k = len;
        if (esc) {
            if (cp == '\n' || cp == '\r' || cp == '\t')
                snprintf(buf, sizeof buf, "\\%c", cp == '\n' ? 'n' : cp == '\r' ? 'r' : 't');
            else if (esc == 4)
                snprintf(buf, sizeof buf, "\\x%02x", cp);
            else
                snprintf(buf, sizeof buf, "\\u%04x", cp);
            piece = buf;
            k = esc;
        } else if (p[i] >= 0x80) {
            /* a multi-byte character is copied (or cut off) whole */
            while (i + len < n && len < 4 && (p[i + len] & 0xC0) == 0x80) len++;
            k = len;
        }
        if (fits && written + k < cap) {
            memcpy(out + written, piece, k);
            written += k;
        } else {
            fits = 0;
        }
        need += k;
        i += len;
    }
    if (cap) out[written] = '\0';
    return need;
}

const char *op_text_shown(const char *s, size_t n, char **owned)
{
    *owned = NULL;
    if (!op_text_needs_escape(s, n)) return s;
    size_t need = op_text_escape(s, n, NULL, 0) + 1;
    if (!(*owned = malloc(need))) return NULL;
    op_text_escape(s, n, *owned, need);
    return *owned;
}

int op_fput_csv_field(FILE *f, const char *s)
{
    char *owned;
    const char *t = op_text_shown(s, strlen(s), &owned);
    if (!t) return -1;
    int rc = 0;
    if (!strpbrk(t, ",\"")) {
        rc = fputs(t, f) < 0 ? -1 : 0;
    } else {
        fputc('"', f);
        for (const char *q = t; *q; q++) {
            if (*q == '"') fputc('"', f);
            fputc(*q, f);
        }
        rc = fputc('"', f) == EOF ? -1 : 0;
    }
    free(owned);
    return rc;
}

int op_fput_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            fprintf(f, "\\%c", *p);
        } else if (*p < 0x20 || *p == 0x7f) {
            fprintf(f, "\\u%04x", *p);
        } else if (op_is_kept_nul(p, 2)) {
            fputs("\\u0000", f);
            p++;
        } else {
            fputc(*p, f);
        }
    }
    return fputc('"', f) == EOF ? -1 : 0;
}

size_t opprof_escape_name(const char *name, char *out, size_t cap)
{
    if (!name) name = "";
    if (!out) cap = 0;
    return op_text_escape(name, strlen(name), out, cap);
}

int opprof_write_csv_field(FILE *f, const char *s)
{
    return f && s ? op_fput_csv_field(f, s) : op_fail(OPPROF_E_INVAL, "opprof_write_csv_field: NULL argument");
}

int opprof_write_json_string(FILE *f, const char *s)
{
    return f && s ? op_fput_json_string(f, s) : op_fail(OPPROF_E_INVAL, "opprof_write_json_string: NULL argument");
}

/* Reading CSV text in tests: one field at a time, RFC 4180 quoting. */
#ifndef OPPROF_TESTS_CSV_H
#define OPPROF_TESTS_CSV_H

#include <stddef.h>

/* Copies the field at *p into out (cut to cap - 1 bytes) and moves *p past
 * it and its comma. */
static inline void csv_field(const char **p, char *out, size_t cap)
{
    const char *s = *p;
    size_t n = 0;
    if (*s == '"') {
        for (s++; *s; s++) {
            if (*s == '"' && s[1] == '"') s++;
            else if (*s == '"') {
                s++;
                break;
            }
            if (n + 1 < cap) out[n++] = *s;
        }
    } else {
        while (*s && *s != ',' && *s != '\n') {
            if (n + 1 < cap) out[n++] = *s;
            s++;
        }
    }
    out[n] = '\0';
    if (*s == ',') s++;
    *p = s;
}

#endif

/* UTF-8 well-formedness (Unicode's table 3-7), shared by the trace writer,
 * which repairs what it escapes, and the trace reader, which refuses. */
#ifndef OPPROF_COMMON_UTF8_H
#define OPPROF_COMMON_UTF8_H

#include <stddef.h>

/* The sequence at s, whose first byte is >= 0x80, with n >= 1 bytes there:
 * its length (2-4) when well-formed; 0 when ill-formed; -1 when the n bytes
 * are a well-formed start that n cuts short. For 0 and -1, *bad is the
 * length of the maximal ill-formed prefix (what one U+FFFD replaces). */
static inline int op_utf8_seq(const unsigned char *s, size_t n, size_t *bad)
{
    unsigned char c = s[0];
    size_t need;
    unsigned char lo = 0x80, hi = 0xBF; /* bounds of the second byte */
    if (c >= 0xC2 && c <= 0xDF) {
        need = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        if (c == 0xE0) lo = 0xA0; /* no overlong forms */
        if (c == 0xED) hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F; /* nothing past U+10FFFF */
    } else {
        *bad = 1;
        return 0;
    }
    for (size_t i = 1; i < need; i++) {
        if (i >= n) {
            *bad = i;
            return -1;
        }
        unsigned char l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xBF;
        if (s[i] < l || s[i] > h) {
            *bad = i;
            return 0;
        }
    }
    return (int)need;
}

#endif

/* A string's JSON form, for every writer of JSON text: the trace writer,
 * and the model, which keeps a live session's extra args as JSON members. */
#ifndef OPPROF_COMMON_JSONESC_H
#define OPPROF_COMMON_JSONESC_H

#include <stddef.h>

/* The escaped form of s[0..n) between double quotes: JSON escapes for '"',
 * '\\' and control characters, U+FFFD for each ill-formed UTF-8 subsequence.
 * A NUL kept inside a name (C0 80, common/textesc.h) is written as \\u0000.
 * dst needs op_json_escaped_max(n) bytes; returns the end. */
char *op_json_escape(char *dst, const char *s, size_t n);

static inline size_t op_json_escaped_max(size_t n)
{
    return 6 * n + 2;
}

#endif

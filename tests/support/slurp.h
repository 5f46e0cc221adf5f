/* Reads a whole file into a NUL-terminated heap string (NULL on failure):
 * what the tests compare expected text files with. slurp_len also gives
 * the length, for files that may hold NUL bytes. */
#ifndef OPPROF_TESTS_SLURP_H
#define OPPROF_TESTS_SLURP_H

#include <stdio.h>
#include <stdlib.h>

static inline char *slurp_len(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s) s[n] = '\0';
    fclose(f);
    if (s && len) *len = (size_t)n;
    return s;
}

/* The same for text: the length is strlen() unless the file holds NULs. */
static inline char *slurp(const char *path)
{
    return slurp_len(path, NULL);
}

#endif

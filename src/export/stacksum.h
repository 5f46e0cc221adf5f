/* Folded-stack totals: each distinct line (its frames joined by ';') with
 * the exact nanoseconds of every event that has it, in order of first
 * appearance. The exporter converts to microseconds once per line, so that
 * many sub-microsecond events add up instead of each truncating to 0. */
#ifndef OPPROF_EXPORT_STACKSUM_H
#define OPPROF_EXPORT_STACKSUM_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/map.h"

typedef struct op_stacksum_line {
    size_t off, len; /* into text */
    int64_t ns;
} op_stacksum_line;

typedef struct op_stacksum {
    op_buf text;
    op_stacksum_line *lines;
    size_t n, cap;
    op_map ix; /* line hash -> line index */
} op_stacksum;

/* Adds ns to the line s[0..len); 0, or -1 when out of memory. */
int op_stacksum_add(op_stacksum *s, const char *line, size_t len, int64_t ns);

void op_stacksum_free(op_stacksum *s);

#endif

/* Exact conversion of JSON number text to integers: trace times are decimal
 * microseconds and become integer nanoseconds without a detour through
 * double (so "4458676522690.655" is exactly 4458676522690655 ns), and
 * without strtod, whose decimal point follows the process's locale. */
#ifndef OPPROF_IMPORT_NUMBER_H
#define OPPROF_IMPORT_NUMBER_H

#include <stddef.h>
#include <stdint.h>

/* value * 10^scale rounded half away from zero; -1 when it does not fit. */
int op_num_scaled(const char *s, size_t n, int scale, int64_t *out);

/* The number as an exact integer (1, -3, 5.0, 1e3); -1 when it has a
 * fraction or does not fit. */
int op_num_int(const char *s, size_t n, int64_t *out);

/* A non-negative integer up to 2^64-1 (addresses, counts); fractions are
 * rounded. -1 when negative or too large. */
int op_num_u64(const char *s, size_t n, uint64_t *out);

#endif

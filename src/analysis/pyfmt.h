/* Numbers and strings formatted exactly as PyTorch's profiler_util.py does
 * in Python (str.format with C doubles: printf gives the same digits). */
#ifndef OPPROF_ANALYSIS_PYFMT_H
#define OPPROF_ANALYSIS_PYFMT_H

#include <stddef.h>
#include <stdint.h>

/* Nanoseconds as PyTorch's microseconds: exact for whole microseconds. */
static inline double op_ns_to_us(int64_t ns)
{
    return (double)ns / 1000.0;
}

/* _format_time: "12.345us", "1.000ms", "2.500s" (3 decimals). */
void op_fmt_time(char *out, size_t n, double us);

/* _format_time_share: "12.34%", or "NaN" when the total is 0. */
void op_fmt_share(char *out, size_t n, double us, double total_us);

/* _format_memory: 1024-based, "1023 b", "1.00 Kb", "-2.50 Mb", "1.00 Gb". */
void op_fmt_memory(char *out, size_t n, int64_t bytes);

/* auto_scale_flops: the factor and header ("FLOPs", "KFLOPs", ...) for the
 * smallest positive FLOP count of a table. */
double op_flops_scale(uint64_t min_flops, const char **header);

/* Python's len() and slicing for UTF-8 text: code points, not bytes. */
size_t op_utf8_len(const char *s, size_t bytes);
size_t op_utf8_offset(const char *s, size_t bytes, size_t codepoints);

#endif

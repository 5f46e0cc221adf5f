#include "analysis/pyfmt.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void op_fmt_time(char *out, size_t n, double us)
{
    if (us >= 1000.0 * 1000.0)
        snprintf(out, n, "%.3fs", us / (1000.0 * 1000.0));
    else if (us >= 1000.0)
        snprintf(out, n, "%.3fms", us / 1000.0);
    else
        snprintf(out, n, "%.3fus", us);
}

void op_fmt_share(char *out, size_t n, double us, double total_us)
{
    /* PyTorch asserts us == 0 here; a table is more useful than an abort */
    if (total_us == 0.0)
        snprintf(out, n, "NaN");
    else
        snprintf(out, n, "%.2f%%", us * 100.0 / total_us);
}

void op_fmt_memory(char *out, size_t n, int64_t bytes)
{
    const double kb = 1024.0, mb = 1024.0 * kb, gb = 1024.0 * mb;
    /* llabs of INT64_MIN overflows; as a double it is simply large */
    double mag = fabs((double)bytes);
    if (mag >= gb)
        snprintf(out, n, "%.2f Gb", (double)bytes / gb);
    else if (mag >= mb)
        snprintf(out, n, "%.2f Mb", (double)bytes / mb);
    else if (mag >= kb)
        snprintf(out, n, "%.2f Kb", (double)bytes / kb);
    else
        snprintf(out, n, "%" PRId64 " b", bytes);
}

double op_flops_scale(uint64_t min_flops, const char **header)
{
    static const char *const names[] = {"FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"};
    double l = log10((double)min_flops) / 3.0;
    if (l > 5.0) l = 5.0;
    if (l < 0.0) l = 0.0;
    *header = names[(int)l];
    return pow(10.0, floor(l) * -3.0);
}

size_t op_utf8_len(const char *s, size_t bytes)
{
    size_t n = 0;
    for (size_t i = 0; i < bytes; i++) n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

size_t op_utf8_offset(const char *s, size_t bytes, size_t codepoints)
{
    size_t i = 0;
    for (size_t cp = 0; i < bytes; i++) {
        if (((unsigned char)s[i] & 0xC0) != 0x80 && cp++ == codepoints) break;
    }
    return i;
}

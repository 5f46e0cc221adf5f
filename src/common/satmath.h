/* Saturating 64-bit arithmetic for sums over user data: a trace may hold
 * numbers that are each valid but whose sum is not. A saturated sum stays at
 * the limit and raises *flag, so that the caller can say so instead of
 * printing a wrapped (or, under UBSan, aborted) result. */
#ifndef OPPROF_COMMON_SATMATH_H
#define OPPROF_COMMON_SATMATH_H

#include <stdint.h>

/* Times read from files are refused beyond this many nanoseconds (about 73
 * years) from zero: then every start + duration, difference of two times and
 * clock offset applied to a time fits in 64 bits. */
#define OP_TIME_LIMIT_NS (INT64_C(1) << 61)

static inline int64_t op_sat_add(int64_t a, int64_t b, int *flag)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) {
        *flag = 1;
        return b > 0 ? INT64_MAX : INT64_MIN;
    }
    return r;
}

static inline int64_t op_sat_sub(int64_t a, int64_t b, int *flag)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r)) {
        *flag = 1;
        return b < 0 ? INT64_MAX : INT64_MIN;
    }
    return r;
}

static inline uint64_t op_sat_addu(uint64_t a, uint64_t b, int *flag)
{
    uint64_t r;
    if (__builtin_add_overflow(a, b, &r)) {
        *flag = 1;
        return UINT64_MAX;
    }
    return r;
}

#endif

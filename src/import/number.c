/* Decimal text to integers with exact rounding (see number.h). */
#include "import/number.h"

#include <stdint.h>

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Reads grammar-checked JSON number text as mag * 10^exp (mag holding as
 * many leading digits as fit in 64 bits) and scales it by 10^scale.
 * *exact is 0 when nonzero digits were rounded away. 0, or -1 on overflow. */
static int decimal(const char *s, size_t n, int scale, uint64_t *mag, int *neg, int *exact)
{
    /* The common case, "4458676522690.655": at most 18 digits and no
     * exponent cannot overflow the accumulator; one pass, no checks. */
    if (n <= 19 && scale >= 0) {
        size_t q = s[0] == '-';
        uint64_t m = 0;
        int frac = -1;
        for (; q < n; q++) {
            if (s[q] == '.') frac = 0;
            else if (s[q] >= '0' && s[q] <= '9') {
                m = m * 10 + (unsigned)(s[q] - '0');
                frac += frac >= 0;
            } else {
                break; /* an exponent: the general path */
            }
        }
        if (q == n && frac <= scale) {
            for (int k = frac < 0 ? 0 : frac; k < scale; k++) {
                if (m > UINT64_MAX / 10) return -1;
                m *= 10;
            }
            *neg = s[0] == '-';
            *mag = m;
            *exact = 1;
            return 0;
        }
    }
    size_t p = 0;
    uint64_t m = 0;
    int64_t e = scale;
    int sticky = 0;
    *neg = n > 0 && s[0] == '-';
    if (*neg) p++;
    for (; p < n && is_digit(s[p]); p++) {
        unsigned d = (unsigned)(s[p] - '0');
        if (m <= (UINT64_MAX - d) / 10) m = m * 10 + d;
        else {
            e++;
            sticky |= d != 0;
        }
    }
    if (p < n && s[p] == '.') {
        for (p++; p < n && is_digit(s[p]); p++) {
            unsigned d = (unsigned)(s[p] - '0');
            if (m <= (UINT64_MAX - d) / 10) {
                m = m * 10 + d;
                e--;
            } else {
                sticky |= d != 0;
            }
        }
    }
    if (p < n && (s[p] == 'e' || s[p] == 'E')) {
        p++;
        int eneg = p < n && s[p] == '-';
        if (p < n && (s[p] == '-' || s[p] == '+')) p++;
        int64_t x = 0;
        for (; p < n && is_digit(s[p]); p++)
            if (x < 1000000) x = x * 10 + (s[p] - '0'); /* anything larger over- or underflows anyway */
        e += eneg ? -x : x;
    }
    *exact = !sticky;
    if (m == 0) {
        *mag = 0;
        return 0;
    }
    if (e > 0 && sticky) return -1; /* digits were dropped because m was full: beyond 2^64 */
    for (; e > 0; e--) {
        if (m > UINT64_MAX / 10) return -1;
        m *= 10;
    }
    if (e < 0) {
        if (e < -19) {
            *mag = 0; /* below 0.2: rounds to zero */
            *exact = 0;
            return 0;
        }
        uint64_t p10 = 1;
        for (int64_t k = 0; k < -e; k++) p10 *= 10;
        uint64_t q = m / p10, r = m % p10;
        if (r) *exact = 0;
        if (r >= p10 - r) {
            if (q == UINT64_MAX) return -1;
            q++;
        }
        m = q;
    }
    *mag = m;
    return 0;
}

static int to_int64(uint64_t mag, int neg, int64_t *out)
{
    if (neg) {
        if (mag > (uint64_t)INT64_MAX + 1) return -1;
        *out = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
    } else {
        if (mag > (uint64_t)INT64_MAX) return -1;
        *out = (int64_t)mag;
    }
    return 0;
}

int op_num_scaled(const char *s, size_t n, int scale, int64_t *out)
{
    uint64_t mag;
    int neg, exact;
    if (decimal(s, n, scale, &mag, &neg, &exact) != 0) return -1;
    return to_int64(mag, neg, out);
}

int op_num_int(const char *s, size_t n, int64_t *out)
{
    uint64_t mag;
    int neg, exact;
    if (decimal(s, n, 0, &mag, &neg, &exact) != 0 || !exact) return -1;
    return to_int64(mag, neg, out);
}

int op_num_u64(const char *s, size_t n, uint64_t *out)
{
    uint64_t mag;
    int neg, exact;
    if (decimal(s, n, 0, &mag, &neg, &exact) != 0) return -1;
    if (neg && mag) return -1;
    *out = mag;
    return 0;
}

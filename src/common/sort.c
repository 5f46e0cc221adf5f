/* The stable sort of indices (sort.h): a bottom-up merge sort. */
#include <stdlib.h>
#include <string.h>

#include "common/sort.h"

int op_sort_index(uint32_t *k, size_t n, int (*before)(const void *ctx, uint32_t a, uint32_t b), const void *ctx)
{
    uint32_t *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!tmp) return -1;
    uint32_t *src = k, *dst = tmp;
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t a = lo, b = mid, o = lo;
            /* the left one on a tie: stable */
            while (a < mid && b < hi) dst[o++] = before(ctx, src[b], src[a]) ? src[b++] : src[a++];
            while (a < mid) dst[o++] = src[a++];
            while (b < hi) dst[o++] = src[b++];
        }
        uint32_t *s = src;
        src = dst;
        dst = s;
    }
    if (src != k) memcpy(k, src, n * sizeof *k);
    free(tmp);
    return 0;
}

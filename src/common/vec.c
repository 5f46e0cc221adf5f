/* Growable arrays (see vec.h). */
#include "common/vec.h"

#include <stdint.h>
#include <string.h>

static long g_fail_after = -1; /* tests only: see op_alloc_fail_after */

void op_alloc_fail_after(long n)
{
    __atomic_store_n(&g_fail_after, n, __ATOMIC_RELAXED);
}

/* 1 when the test hook fails this allocation. One relaxed load per growth
 * (not per element): free when unused. */
static int hook_fails(void)
{
    long left = __atomic_load_n(&g_fail_after, __ATOMIC_RELAXED);
    if (left < 0) return 0;
    if (left == 0) return 1;
    __atomic_store_n(&g_fail_after, left - 1, __ATOMIC_RELAXED);
    return 0;
}

void *op_realloc(void *p, size_t n)
{
    return hook_fails() ? NULL : realloc(p, n);
}

void *op_calloc(size_t n, size_t size)
{
    return hook_fails() ? NULL : calloc(n, size);
}

int op_grow_to(void *pp, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need) {
        if (c > SIZE_MAX / 2) return -1;
        c *= 2;
    }
    if (elem && c > SIZE_MAX / elem) return -1;
    void *p;
    memcpy(&p, pp, sizeof p); /* *pp is some T *: same representation as void * */
    void *q = op_realloc(p, c * elem);
    if (!q) return -1;
    memcpy(pp, &q, sizeof q);
    *cap = c;
    return 0;
}

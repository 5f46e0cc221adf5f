/* Large anonymous memory written once in order (pages.h). */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/pages.h"

void *op_map_huge(size_t bytes)
{
    size_t span = bytes + OP_HUGE_BYTES;
    if (!bytes || span < bytes) return NULL;
    char *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    char *a = (char *)(((uintptr_t)p + OP_HUGE_BYTES - 1) & ~(uintptr_t)(OP_HUGE_BYTES - 1));
    if (a > p) munmap(p, (size_t)(a - p));
    if (a + bytes < p + span) munmap(a + bytes, (size_t)(p + span - (a + bytes)));
#ifdef MADV_HUGEPAGE
    (void)madvise(a, bytes, MADV_HUGEPAGE);
#endif
    return a;
}

size_t op_write_pages(void *p, size_t bytes, _Atomic int *stop)
{
    long ps = sysconf(_SC_PAGESIZE);
    size_t step = ps > 0 ? (size_t)ps : 4096, off = 0;
    for (; off < bytes; off += step) {
        if (stop && atomic_load_explicit(stop, memory_order_relaxed)) return off;
        ((volatile char *)p)[off] = 0;
    }
    return bytes;
}

void op_advise_huge(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = OP_HUGE_BYTES;
    if (bytes < 2 * huge) return;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1), b = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (b > a) (void)madvise((void *)a, b - a, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

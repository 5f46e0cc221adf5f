/* Per-thread counts of dropped begins by site (drops.h). */
#include <string.h>
#include <sys/mman.h>

#include "capture/drops.h"

/* The owner writes, a collector may read beside it: relaxed atomics, plain
 * moves on x86-64 and aarch64. That, and a table made by mmap on the record
 * path (which may run in a signal handler or a malloc interposer), is why
 * this is not the common op_map: its stores are plain and it grows with
 * realloc. */
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

#define TAB_BYTES (OP_DROP_SLOTS * sizeof(op_dropsite))

void op_drops_count(op_dropsite **tab, const opprof_site *site)
{
    if (!*tab) {
        void *p = mmap(NULL, TAB_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return;
        __atomic_store_n(tab, (op_dropsite *)p, __ATOMIC_RELEASE);
    }
    op_dropsite *t = *tab;
    size_t mask = OP_DROP_SLOTS - 1, j = ((uintptr_t)site >> 3) * 0x9e3779b97f4a7c15ull >> 54 & mask;
    for (size_t probes = 0; probes < OP_DROP_SLOTS * 3 / 4; probes++, j = (j + 1) & mask) {
        if (t[j].site == site) {
            STORE(&t[j].n, t[j].n + 1);
            return;
        }
        if (!t[j].site) {
            STORE(&t[j].n, 1);
            STORE(&t[j].site, site);
            return;
        }
    }
}

void op_drops_clear(op_dropsite *tab)
{
    if (tab) memset(tab, 0, TAB_BYTES);
}

void op_drops_free(op_dropsite *tab)
{
    if (tab) munmap(tab, TAB_BYTES);
}

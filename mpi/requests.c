/* Outstanding non-blocking operations by request handle: what the call that
 * completes one needs to name it. Open addressing over a fixed array, keys
 * claimed with a compare-and-swap, so that any thread may post and any
 * thread may complete without a lock (MPI_THREAD_MULTIPLE). A request is a
 * pointer in Open MPI and an integer in MPICH: either fits a uintptr_t. */
#include <string.h>

#include "internal.h"

#define SLOTS 4096 /* outstanding operations tracked at once */
#define EMPTY ((uintptr_t)0)
#define GONE ((uintptr_t)1) /* a forgotten key: probes go on past it */
#define BUSY ((uintptr_t)2) /* claimed, info being written */

typedef struct slot {
    _Atomic uintptr_t key;
    opmpi_req_info info;
} slot;

static slot g_slots[SLOTS];
static _Atomic int64_t g_next_id;

static uintptr_t key_of(MPI_Request r)
{
    uintptr_t k = 0;
    memcpy(&k, &r, sizeof r < sizeof k ? sizeof r : sizeof k);
    return k;
}

static size_t home(uintptr_t k)
{
    uint64_t h = (uint64_t)k * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 52) & (SLOTS - 1);
}

int64_t opmpi_req_next_id(void)
{
    return atomic_fetch_add_explicit(&g_next_id, 1, memory_order_relaxed) + 1;
}

void opmpi_req_track(MPI_Request r, const opmpi_req_info *info)
{
    uintptr_t k = key_of(r);
    if (r == MPI_REQUEST_NULL || k <= BUSY) return;
    size_t i = home(k);
    for (size_t n = 0; n < SLOTS; n++, i = (i + 1) & (SLOTS - 1)) {
        uintptr_t cur = atomic_load_explicit(&g_slots[i].key, memory_order_acquire);
        /* The same handle again: MPI reused a request that was never waited
         * for through us (freed, or completed by a call we do not wrap). */
        if (cur == k && atomic_compare_exchange_strong(&g_slots[i].key, &cur, BUSY)) goto claim;
        if ((cur == EMPTY || cur == GONE) && atomic_compare_exchange_strong(&g_slots[i].key, &cur, BUSY)) goto claim;
    }
    return; /* full: untracked */
claim:
    g_slots[i].info = *info;
    atomic_store_explicit(&g_slots[i].key, k, memory_order_release);
}

static slot *lookup(MPI_Request r)
{
    uintptr_t k = key_of(r);
    if (r == MPI_REQUEST_NULL || k <= BUSY) return NULL;
    size_t i = home(k);
    for (size_t n = 0; n < SLOTS; n++, i = (i + 1) & (SLOTS - 1)) {
        uintptr_t cur = atomic_load_explicit(&g_slots[i].key, memory_order_acquire);
        if (cur == k) return &g_slots[i];
        if (cur == EMPTY) return NULL;
    }
    return NULL;
}

int opmpi_req_find(MPI_Request r, opmpi_req_info *out)
{
    slot *s = lookup(r);
    if (!s) return 0;
    *out = s->info;
    return 1;
}

void opmpi_req_forget(MPI_Request r)
{
    slot *s = lookup(r);
    uintptr_t k = key_of(r);
    if (!s || !atomic_compare_exchange_strong(&s->key, &k, GONE)) return;
    /* At the end of its probe chain the slot may be empty again, so that
     * lookups of absent requests stay short. (A thread claiming the next
     * slot at this very moment may lose its tracking: a harmless miss.) */
    slot *next = &g_slots[(size_t)(s - g_slots + 1) & (SLOTS - 1)];
    uintptr_t gone = GONE;
    if (atomic_load_explicit(&next->key, memory_order_acquire) == EMPTY)
        atomic_compare_exchange_strong(&s->key, &gone, EMPTY);
}

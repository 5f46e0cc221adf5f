/* The chunk pool (pool.h). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "capture/arena.h"
#include "capture/pool.h"
#include "common/pages.h"

enum { POOL_FULL, POOL_FIRST, NPOOLS };
static const size_t pool_bytes[NPOOLS] = {OP_CHUNK_BYTES, OP_FIRST_CHUNK_BYTES};
static const unsigned pool_max[NPOOLS] = {64, 256};
static pthread_mutex_t g_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static op_chunk *g_pool[NPOOLS];      /* oldest first: taken from the head, given back at the tail */
static op_chunk *g_pool_tail[NPOOLS];
static unsigned g_pool_n[NPOOLS];
static _Atomic uint64_t g_mapped;
static _Atomic long g_full_out; /* full-size pool chunks handed out and not given back */
static void (*_Atomic g_on_low)(void);

uint64_t op_capture_chunks_mapped(void)
{
    return atomic_load_explicit(&g_mapped, memory_order_relaxed);
}

size_t op_pool_full_out(void)
{
    long n = atomic_load_explicit(&g_full_out, memory_order_relaxed);
    return n > 0 ? (size_t)n : 0;
}

unsigned op_capture_pool_full(void)
{
    pthread_mutex_lock(&g_pool_lock);
    unsigned n = g_pool_n[POOL_FULL];
    pthread_mutex_unlock(&g_pool_lock);
    return n;
}

void op_pool_on_low(void (*fn)(void))
{
    atomic_store_explicit(&g_on_low, fn, memory_order_release);
}

static size_t chunk_words(size_t bytes)
{
    return (bytes - sizeof(op_chunk)) / sizeof(op_word);
}

/* The pool is a queue, not a stack: a chunk given back waits behind the
 * others. A streamed session's chunks come back from the spooler, which
 * has just read them on its own core; a recording thread that took such a
 * chunk at once paid a coherence miss on each line it wrote, and its
 * ranges grew by it (bench_trace_cost, twothread_work: step's self time
 * 148-259 ms as a stack, 153-190 ms as a queue, 89 ms table-only).
 * Under g_pool_lock. */
static void pool_append(int pool, op_chunk *c)
{
    atomic_store_explicit(&c->next, NULL, memory_order_relaxed);
    if (g_pool_tail[pool]) atomic_store_explicit(&g_pool_tail[pool]->next, c, memory_order_relaxed);
    else g_pool[pool] = c;
    g_pool_tail[pool] = c;
    g_pool_n[pool]++;
}

static op_chunk *pool_take(int pool)
{
    op_chunk *c = g_pool[pool];
    if (!c) return NULL;
    g_pool[pool] = atomic_load_explicit(&c->next, memory_order_relaxed);
    if (!g_pool[pool]) g_pool_tail[pool] = NULL;
    g_pool_n[pool]--;
    return c;
}

/* Chunks are faulted in up front so that the page faults happen here, in
 * the slow path (the keeper's thread, or a session's start), not in later
 * stores. MAP_POPULATE alone is not enough on every machine: on this
 * project's VMs (Firecracker, free page reporting) it maps pages the guest
 * believes zero without writing them, and the first store still pays the
 * host's fault, 15-40 us per 4 KiB page (0.5 us per recorded event). So each
 * page is written once here. Full-size chunks come two at a time from a
 * 2 MiB-aligned block that the kernel may back with one transparent huge
 * page (MADV_HUGEPAGE): one fault and one TLB entry for 2 MiB instead of
 * 512; where the kernel does not offer them, the advice is ignored and the
 * block is plain pages, written the same way. The second chunk of a block
 * waits in g_spare for the next map. */
#define SLAB_BYTES OP_HUGE_BYTES
static op_chunk *g_spare; /* under g_pool_lock */

static op_chunk *chunk_init(void *p, int pool)
{
    op_chunk *c = p;
    atomic_init(&c->next, NULL);
    atomic_init(&c->end, NULL);
    c->nwords = chunk_words(pool_bytes[pool]);
    c->arena = NULL;
    return c;
}

static op_chunk *map_chunk(int pool)
{
    if (pool == POOL_FULL && OP_CHUNK_BYTES * 2 == SLAB_BYTES) {
        pthread_mutex_lock(&g_pool_lock);
        op_chunk *c = g_spare;
        g_spare = NULL;
        pthread_mutex_unlock(&g_pool_lock);
        if (c) return c;
        char *a = op_map_huge(SLAB_BYTES); /* two full-size chunks */
        if (!a) return NULL;
        op_write_pages(a, SLAB_BYTES, NULL);
        c = chunk_init(a + OP_CHUNK_BYTES, pool);
        pthread_mutex_lock(&g_pool_lock);
        op_chunk *old = g_spare; /* another mapper got there first: this one goes to the pool */
        g_spare = c;
        if (old) pool_append(pool, old);
        pthread_mutex_unlock(&g_pool_lock);
        return chunk_init(a, pool);
    }
    void *p = mmap(NULL, pool_bytes[pool], PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1,
                   0);
    if (p == MAP_FAILED) return NULL;
    op_write_pages(p, pool_bytes[pool], NULL);
    return chunk_init(p, pool);
}

static op_chunk *chunk_new(int pool)
{
    pthread_mutex_lock(&g_pool_lock);
    op_chunk *c = pool_take(pool);
    int low = pool == POOL_FULL && g_pool_n[pool] < OP_KEEP_AHEAD_CHUNKS;
    pthread_mutex_unlock(&g_pool_lock);
    if (low) {
        void (*fn)(void) = atomic_load_explicit(&g_on_low, memory_order_acquire);
        if (fn) fn();
    }
    if (c) {
        atomic_store_explicit(&c->next, NULL, memory_order_relaxed);
        atomic_store_explicit(&c->end, NULL, memory_order_relaxed);
    } else if ((c = map_chunk(pool))) {
        atomic_fetch_add_explicit(&g_mapped, 1, memory_order_relaxed);
    }
    if (c && pool == POOL_FULL) atomic_fetch_add_explicit(&g_full_out, 1, memory_order_relaxed);
    return c;
}

op_chunk *op_chunk_new(void)
{
    return chunk_new(POOL_FULL);
}

op_chunk *op_chunk_first(void)
{
    return chunk_new(POOL_FIRST);
}

void op_capture_prefill(unsigned nchunks)
{
    const unsigned want[NPOOLS] = {nchunks, OP_PREFILL_FIRST_CHUNKS};
    for (int pool = 0; pool < NPOOLS; pool++) {
        while (1) {
            pthread_mutex_lock(&g_pool_lock);
            unsigned have = g_pool_n[pool];
            pthread_mutex_unlock(&g_pool_lock);
            if (have >= want[pool]) break;
            op_chunk *c = map_chunk(pool);
            if (!c) return;
            pthread_mutex_lock(&g_pool_lock);
            pool_append(pool, c);
            pthread_mutex_unlock(&g_pool_lock);
        }
    }
}

/* Gives a chunk back: to its pool, or to the arena it was copied into. */
static void chunk_put(op_chunk *c)
{
    if (c->arena) {
        op_arena_release(c);
        return;
    }
    int pool = c->nwords == chunk_words(OP_CHUNK_BYTES) ? POOL_FULL : POOL_FIRST;
    if (pool == POOL_FULL) atomic_fetch_sub_explicit(&g_full_out, 1, memory_order_relaxed);
    pthread_mutex_lock(&g_pool_lock);
    int keep = g_pool_n[pool] < pool_max[pool];
    if (keep) pool_append(pool, c);
    pthread_mutex_unlock(&g_pool_lock);
    if (!keep) munmap(c, pool_bytes[pool]);
}

void op_chunks_free(op_chunk *c)
{
    while (c) {
        op_chunk *n = atomic_load_explicit(&c->next, memory_order_relaxed);
        chunk_put(c);
        c = n;
    }
}

void op_chunk_decoded(op_chunk *c, unsigned *seen)
{
    if (c->arena || c->nwords != chunk_words(OP_CHUNK_BYTES)) return;
    /* The first pool_max chunks given back after the collection are kept
     * faulted in for later sessions; the collector reads them in the order
     * the registry gives them back. */
    if (++*seen <= pool_max[POOL_FULL]) return;
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || (size_t)page >= OP_CHUNK_BYTES) return;
    (void)madvise((char *)c + page, OP_CHUNK_BYTES - (size_t)page, MADV_DONTNEED); /* the header page stays */
}

/* The chunk pool (pool.h). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include "capture/arena.h"
#include "capture/pool.h"

enum { POOL_FULL, POOL_FIRST, NPOOLS };
static const size_t pool_bytes[NPOOLS] = {OP_CHUNK_BYTES, OP_FIRST_CHUNK_BYTES};
static const unsigned pool_max[NPOOLS] = {64, 256};
static pthread_mutex_t g_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static op_chunk *g_pool[NPOOLS];
static unsigned g_pool_n[NPOOLS];
static _Atomic uint64_t g_mapped;
static void (*_Atomic g_on_low)(void);

uint64_t op_capture_chunks_mapped(void)
{
    return atomic_load_explicit(&g_mapped, memory_order_relaxed);
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

/* Chunks are populated up front so that the page faults happen here, in the
 * slow path, not in later stores. (On this project's VMs fresh memory costs
 * about 0.5 ms per MiB to fault in; 2 MiB transparent huge pages were slower
 * still, so plain pages it is.) */
static op_chunk *map_chunk(int pool)
{
    void *p = mmap(NULL, pool_bytes[pool], PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1,
                   0);
    if (p == MAP_FAILED) return NULL;
    op_chunk *c = p;
    atomic_init(&c->next, NULL);
    atomic_init(&c->end, NULL);
    c->nwords = chunk_words(pool_bytes[pool]);
    c->arena = NULL;
    return c;
}

static op_chunk *chunk_new(int pool)
{
    pthread_mutex_lock(&g_pool_lock);
    op_chunk *c = g_pool[pool];
    if (c) {
        g_pool[pool] = atomic_load_explicit(&c->next, memory_order_relaxed);
        g_pool_n[pool]--;
    }
    int low = pool == POOL_FULL && g_pool_n[pool] < OP_KEEP_AHEAD_CHUNKS;
    pthread_mutex_unlock(&g_pool_lock);
    if (low) {
        void (*fn)(void) = atomic_load_explicit(&g_on_low, memory_order_acquire);
        if (fn) fn();
    }
    if (c) {
        atomic_store_explicit(&c->next, NULL, memory_order_relaxed);
        atomic_store_explicit(&c->end, NULL, memory_order_relaxed);
        return c;
    }
    c = map_chunk(pool);
    if (c) atomic_fetch_add_explicit(&g_mapped, 1, memory_order_relaxed);
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
            atomic_store_explicit(&c->next, g_pool[pool], memory_order_relaxed);
            g_pool[pool] = c;
            g_pool_n[pool]++;
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
    pthread_mutex_lock(&g_pool_lock);
    int keep = g_pool_n[pool] < pool_max[pool];
    if (keep) {
        atomic_store_explicit(&c->next, g_pool[pool], memory_order_relaxed);
        g_pool[pool] = c;
        g_pool_n[pool]++;
    }
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

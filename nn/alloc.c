/* The runtime's one allocator: 64-byte aligned blocks (what vector code and
 * oneDNN like), each allocation and free reported to the profiler so that
 * profile_memory attributes tensor memory to the operator that made it.
 *
 * Large blocks are kept on free lists by size class and reused: a forward
 * pass allocates and frees the same sizes every time, and handing them back
 * to the kernel (glibc returns big blocks with munmap) makes every pass pay
 * page faults again. The profiler still sees every tensor's allocation and
 * free, at the size asked for. Under AddressSanitizer nothing is cached, so
 * it keeps catching use after free. */
#include <pthread.h>
#include <stdlib.h>

#include "internal.h"

#if defined(__SANITIZE_ADDRESS__)
#define OP_NN_CACHE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OP_NN_CACHE 0
#endif
#endif
#ifndef OP_NN_CACHE
#define OP_NN_CACHE 1
#endif

enum { MIN_CACHED = 64 * 1024, CLASSES = 512 };
#define MAX_CACHED_BYTES ((size_t)1 << 30)

typedef struct free_block {
    struct free_block *next;
} free_block;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static free_block *g_free[CLASSES];
static size_t g_cached;

/* Classes 1/8 of a power of two apart: at most 12.5% waste. */
static unsigned class_of(size_t n, size_t *rounded)
{
    unsigned lg = 63u - (unsigned)__builtin_clzll((unsigned long long)n);
    size_t step = (size_t)1 << (lg - 3);
    size_t r = (n + step - 1) & ~(step - 1);
    lg = 63u - (unsigned)__builtin_clzll((unsigned long long)r);
    step = (size_t)1 << (lg - 3);
    *rounded = r;
    return lg * 8u + (unsigned)((r >> (lg - 3)) & 7u);
}

void *op_nn_alloc(size_t bytes)
{
    size_t n = (bytes + 63) & ~(size_t)63;
    if (!n) n = 64;
    void *p = NULL;
    if (OP_NN_CACHE && n >= MIN_CACHED) {
        unsigned c = class_of(n, &n);
        if (c < CLASSES) {
            pthread_mutex_lock(&g_lock);
            free_block *b = g_free[c];
            if (b) {
                g_free[c] = b->next;
                g_cached -= n;
                p = b;
            }
            pthread_mutex_unlock(&g_lock);
        }
    }
    if (!p) p = aligned_alloc(64, n);
    if (p) opprof_record_memory(p, (int64_t)bytes);
    return p;
}

void op_nn_free(void *p, size_t bytes)
{
    if (!p) return;
    opprof_record_memory(p, -(int64_t)bytes);
    size_t n = (bytes + 63) & ~(size_t)63;
    if (OP_NN_CACHE && n >= MIN_CACHED) {
        unsigned c = class_of(n, &n);
        pthread_mutex_lock(&g_lock);
        if (c < CLASSES && g_cached + n <= MAX_CACHED_BYTES) {
            free_block *b = p;
            b->next = g_free[c];
            g_free[c] = b;
            g_cached += n;
            p = NULL;
        }
        pthread_mutex_unlock(&g_lock);
    }
    free(p);
}

void op_nn_alloc_trim(void)
{
    pthread_mutex_lock(&g_lock);
    for (unsigned c = 0; c < CLASSES; c++)
        while (g_free[c]) {
            free_block *b = g_free[c];
            g_free[c] = b->next;
            free(b);
        }
    g_cached = 0;
    pthread_mutex_unlock(&g_lock);
}

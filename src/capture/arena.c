/* The retired-data arena (arena.h). */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "capture/arena.h"

#define ARENA_BYTES ((size_t)256 << 10)

typedef struct op_arena {
    size_t size, used; /* bytes, this header included */
    size_t live;       /* copies not yet freed */
} op_arena;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static op_arena *g_arena; /* the block being filled */

static size_t header_bytes(void)
{
    return (sizeof(op_arena) + 15) & ~(size_t)15;
}

static op_chunk *copy_locked(const op_word *src, size_t nwords)
{
    size_t hdr = header_bytes();
    size_t need = sizeof(op_chunk) + nwords * sizeof(op_word);
    if (!g_arena || g_arena->used + need > g_arena->size) {
        size_t size = hdr + need > ARENA_BYTES ? (hdr + need + 4095) & ~(size_t)4095 : ARENA_BYTES;
        void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return NULL;
        op_arena *a = p;
        a->size = size;
        a->used = hdr;
        a->live = 0;
        op_arena *old = g_arena;
        g_arena = a;
        if (old && old->live == 0) munmap(old, old->size);
    }
    op_chunk *c = (op_chunk *)(void *)((char *)g_arena + g_arena->used);
    g_arena->used += need; /* sizeof(op_chunk) and words keep 8-byte alignment */
    g_arena->live++;
    atomic_init(&c->next, NULL);
    c->nwords = nwords;
    c->arena = g_arena;
    memcpy(c->words, src, nwords * sizeof(op_word));
    atomic_init(&c->end, c->words + nwords);
    return c;
}

op_chunk *op_arena_copy(const op_word *src, size_t nwords)
{
    pthread_mutex_lock(&g_lock);
    op_chunk *c = copy_locked(src, nwords);
    pthread_mutex_unlock(&g_lock);
    return c;
}

void op_arena_release(op_chunk *c)
{
    op_arena *a = c->arena;
    pthread_mutex_lock(&g_lock);
    if (--a->live == 0) {
        if (a == g_arena) a->used = header_bytes();
        else munmap(a, a->size);
    }
    pthread_mutex_unlock(&g_lock);
}

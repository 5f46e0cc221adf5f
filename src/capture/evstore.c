/* The event store's memory (evstore.h). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>

#include "capture/evstore.h"
#include "capture/pool.h"
#include "common/pages.h"

static struct {
    pthread_mutex_t lock;
    void *kept;          /* the block kept for the next take, NULL none */
    size_t kept_bytes;
    size_t kept_written; /* its first bytes whose pages have been written */
    void *_Atomic lent;  /* the block a trace holds now, NULL none */
    size_t lent_bytes;
    _Atomic int armed;
    int writing;         /* the keeper writes the kept block's pages, outside the lock */
    _Atomic int yield;   /* a taker or giver waits for it: stop at the next page */
    pthread_cond_t written;
} E = {.lock = PTHREAD_MUTEX_INITIALIZER, .written = PTHREAD_COND_INITIALIZER};

static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* A thread that held the lock at fork() is not in the child. */
static void fork_child(void)
{
    pthread_mutex_init(&E.lock, NULL);
    pthread_cond_init(&E.written, NULL);
    E.writing = 0; /* the keeper is not in the child either */
}

/* Under the lock: waits until the keeper no longer writes the kept block,
 * asking it to stop at its next page (at most one fault's wait). */
static void wait_writer(void)
{
    while (E.writing) {
        atomic_store_explicit(&E.yield, 1, memory_order_relaxed);
        pthread_cond_wait(&E.written, &E.lock);
    }
    atomic_store_explicit(&E.yield, 0, memory_order_relaxed);
}

static void install(void)
{
    pthread_atfork(NULL, NULL, fork_child);
}

static size_t round_huge(size_t n)
{
    return n > SIZE_MAX - OP_HUGE_BYTES ? 0 : (n + OP_HUGE_BYTES - 1) & ~(OP_HUGE_BYTES - 1);
}

/* The kept block grown to bytes (under the lock): moved by the kernel when
 * it must (its pages and its huge-page advice go along), else a fresh
 * mapping. Returns 0, or -1 with the kept block as it was. */
static int grow_kept(size_t bytes)
{
    if (E.kept && E.kept_bytes >= bytes) return 0;
    void *p = E.kept ? mremap(E.kept, E.kept_bytes, bytes, MREMAP_MAYMOVE) : op_map_huge(bytes);
    if (!p || p == MAP_FAILED) return -1;
    if (!E.kept) E.kept_written = 0;
    E.kept = p;
    E.kept_bytes = bytes;
    return 0;
}

void *op_evstore_take(size_t bytes, size_t *got)
{
    *got = 0;
    size_t want = round_huge(bytes);
    if (bytes < OP_EVSTORE_MIN || !want) return NULL;
    pthread_once(&g_once, install);
    pthread_mutex_lock(&E.lock);
    wait_writer();
    void *p = NULL;
    if (!atomic_load_explicit(&E.lent, memory_order_relaxed) && grow_kept(want) == 0) {
        p = E.kept;
        *got = E.lent_bytes = E.kept_bytes;
        E.kept = NULL;
        E.kept_bytes = E.kept_written = 0;
        atomic_store_explicit(&E.lent, p, memory_order_release);
    }
    pthread_mutex_unlock(&E.lock);
    return p;
}

int op_evstore_owns(const void *p)
{
    return p && atomic_load_explicit(&E.lent, memory_order_acquire) == p;
}

int op_evstore_give(void *p)
{
    if (!op_evstore_owns(p)) return -1;
    pthread_mutex_lock(&E.lock);
    if (atomic_load_explicit(&E.lent, memory_order_relaxed) != p) {
        pthread_mutex_unlock(&E.lock);
        return -1;
    }
    wait_writer();
    size_t bytes = E.lent_bytes;
    atomic_store_explicit(&E.lent, NULL, memory_order_release);
    E.lent_bytes = 0;
    void *drop = p;
    size_t drop_bytes = bytes;
    /* Keep the larger of it and a block the keeper wrote meanwhile. */
    if (bytes <= OP_EVSTORE_KEEP && (!E.kept || E.kept_bytes < bytes)) {
        drop = E.kept;
        drop_bytes = E.kept_bytes;
        E.kept = p;
        E.kept_bytes = E.kept_written = bytes; /* the collector wrote what it used, the kernel may take back the rest */
#ifdef MADV_FREE
        (void)madvise(p, bytes, MADV_FREE);
#endif
    }
    pthread_mutex_unlock(&E.lock);
    if (drop) munmap(drop, drop_bytes);
    return 0;
}

void op_evstore_arm(int on)
{
    atomic_store_explicit(&E.armed, on, memory_order_relaxed);
}

void op_evstore_keep_up(void)
{
    if (!atomic_load_explicit(&E.armed, memory_order_relaxed)) return;
    size_t chunk_events = op_chunk_full_words() / OP_EVSTORE_WORDS_PER_EVENT;
    size_t chunks = op_pool_full_out();
    if (!chunks || chunks > OP_EVSTORE_KEEP / (chunk_events * OP_EVSTORE_EVENT_BYTES)) return;
    size_t want = round_huge(chunks * chunk_events * OP_EVSTORE_EVENT_BYTES);
    pthread_once(&g_once, install);
    pthread_mutex_lock(&E.lock);
    if (!E.writing && want > E.kept_written && grow_kept(want) == 0) {
        /* Pages below kept_written were written before; a write cut short
         * by a taker leaves the rest to the collector's own stores. */
        char *p = E.kept;
        size_t from = E.kept_written;
        E.writing = 1;
        pthread_mutex_unlock(&E.lock);
        size_t done = op_write_pages(p + from, want - from, &E.yield); /* the host's faults, taken here */
        pthread_mutex_lock(&E.lock);
        E.kept_written = from + done;
        E.writing = 0;
        pthread_cond_broadcast(&E.written);
    }
    pthread_mutex_unlock(&E.lock);
}

/* The hand-off queue of streamed sessions (spill.h). */
#include <pthread.h>

#include "capture/pool.h"
#include "capture/spill.h"
#include "capture/thread.h"

#define QCAP 4096u                          /* items: at most this many hand-offs wait */
#define DEFAULT_MAX_BYTES ((size_t)64 << 20) /* then hand-offs are deferred */

static struct {
    pthread_mutex_t lock;
    pthread_cond_t more; /* an item, or the queue closed */
    op_spill_item q[QCAP];
    unsigned head, n;
    size_t bytes, max_bytes;
    uint64_t gen; /* the generation that hands off; 0 when closed */
    op_spill_stats st;
} Q = {.lock = PTHREAD_MUTEX_INITIALIZER, .more = PTHREAD_COND_INITIALIZER};

static size_t chain_bytes(const op_chunk *c)
{
    size_t b = 0;
    for (; c; c = atomic_load_explicit(&c->next, memory_order_relaxed))
        b += sizeof(op_chunk) + c->nwords * sizeof(op_word);
    return b;
}

static size_t g_default_max = DEFAULT_MAX_BYTES;
static pthread_once_t g_fork_once = PTHREAD_ONCE_INIT;

/* A forked child has no session and no writer: an empty, closed queue,
 * whose lock another thread of the parent may have held at the fork. */
static void fork_child(void)
{
    pthread_mutex_init(&Q.lock, NULL);
    pthread_cond_init(&Q.more, NULL);
    Q.gen = 0;
    Q.head = Q.n = 0;
    Q.bytes = 0;
}

static void install_fork_handler(void)
{
    pthread_atfork(NULL, NULL, fork_child);
}

void op_spill_limit(size_t max_bytes)
{
    pthread_mutex_lock(&Q.lock);
    g_default_max = max_bytes ? max_bytes : DEFAULT_MAX_BYTES;
    pthread_mutex_unlock(&Q.lock);
}

void op_spill_open(uint64_t gen, size_t max_bytes)
{
    pthread_once(&g_fork_once, install_fork_handler);
    pthread_mutex_lock(&Q.lock);
    Q.gen = gen;
    Q.max_bytes = max_bytes ? max_bytes : g_default_max;
    Q.head = Q.n = 0;
    Q.bytes = 0;
    Q.st = (op_spill_stats){0};
    pthread_mutex_unlock(&Q.lock);
}

/* Queues t's chunks; 0, or -1 when the queue is closed, has no slot or
 * holds more than its limit (the caller keeps them). */
static int enqueue(op_tstate *t, op_chunk *chunks)
{
    pthread_mutex_lock(&Q.lock);
    int ok = Q.gen == t->gen && Q.n < QCAP && Q.bytes <= Q.max_bytes;
    if (ok) {
        Q.q[(Q.head + Q.n) % QCAP] = (op_spill_item){t, chunks};
        Q.n++;
        Q.bytes += chain_bytes(chunks);
        Q.st.handed++;
        if (Q.n > Q.st.peak_queued) Q.st.peak_queued = Q.n;
        pthread_cond_signal(&Q.more);
    } else if (Q.gen == t->gen) {
        Q.st.deferred++;
    }
    pthread_mutex_unlock(&Q.lock);
    return ok ? 0 : -1;
}

int op_spill_advance(op_tstate *t, op_word *cur)
{
    op_chunk *c = op_chunk_new();
    if (!c) return -1;
    int handed = 0;
    op_registry_lock();
    if (t->gen == op_gen_load_acquire()) {
        op_chunk *old = t->head;
        atomic_store_explicit(&t->tail->end, cur, memory_order_release);
        if (enqueue(t, old) == 0) {
            handed = 1;
            t->head = t->tail = c;
            t->lim = c->words + c->nwords;
            atomic_store_explicit(&t->cur, c->words, memory_order_release);
        }
    }
    /* The session stopped meanwhile (its collector reads the list) or the
     * queue is full: linked as without streaming, handed over with the
     * next hand-off. */
    if (!handed) op_chunk_link(t, cur, c);
    op_registry_unlock();
    return 0;
}

op_chunk *op_spill_chunk(void)
{
    return op_chunk_new();
}

int op_spill_take(op_spill_item *out)
{
    pthread_mutex_lock(&Q.lock);
    while (Q.n == 0 && Q.gen) pthread_cond_wait(&Q.more, &Q.lock);
    if (Q.n == 0) {
        pthread_mutex_unlock(&Q.lock);
        return 1;
    }
    *out = Q.q[Q.head];
    Q.head = (Q.head + 1) % QCAP;
    Q.n--;
    Q.bytes -= chain_bytes(out->chunks);
    pthread_mutex_unlock(&Q.lock);
    return 0;
}

void op_spill_close(void)
{
    pthread_mutex_lock(&Q.lock);
    Q.gen = 0;
    pthread_cond_broadcast(&Q.more);
    pthread_mutex_unlock(&Q.lock);
}

void op_spill_free(op_chunk *chunks)
{
    op_chunks_free(chunks);
}

void op_spill_return(op_tstate *t, op_chunk *chunks)
{
    if (!chunks) return;
    op_chunk *last = chunks;
    while (atomic_load_explicit(&last->next, memory_order_relaxed))
        last = atomic_load_explicit(&last->next, memory_order_relaxed);
    atomic_store_explicit(&last->next, t->head, memory_order_relaxed);
    t->head = chunks;
}

void op_spill_stats_get(op_spill_stats *s)
{
    pthread_mutex_lock(&Q.lock);
    *s = Q.st;
    s->queued = Q.n;
    pthread_mutex_unlock(&Q.lock);
}

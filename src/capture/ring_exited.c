/* The flight recorder's exited threads (ring.h): a thread that exits while
 * the recorder runs leaves its ring for later dumps, but the rings of
 * threads that come and go must not add up without bound (a
 * thread-per-request server would run out of memory). They share one
 * budget: the room of the threads that have left since the most threads
 * ran at once, and at least one ring:
 *
 *     exited bytes <= ring bytes * max(1, peak threads - threads running)
 *
 * so the recorder as a whole holds at most a ring per thread at its peak,
 * and one more. Over the budget, the chunk left longest ago goes first,
 * whichever exited thread it is in, so that the newest events across
 * threads survive; a thread with no chunk left goes with its state (which
 * counts too). The exited threads are a min-heap on the time their oldest
 * chunk was left (op_chunk.left), so each eviction costs a log.
 *
 * Everything here runs with the registry lock held: at a thread's attach
 * and exit, and at a reap. A collector reads the rings with the same lock
 * held, so no chunk goes while one is read. */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "capture/pool.h"
#include "capture/ring.h"
#include "capture/thread.h"

static struct {
    uint64_t gen;        /* the ring generation counted */
    uint32_t live, peak; /* threads recording in it now, and at most so far */
    size_t bytes;        /* held by its exited threads: chunks and states */
    op_tstate **heap;    /* the exited threads still holding chunks */
    size_t n, cap;       /* entries, and room (mapped) */
} E;

static size_t chunk_bytes(const op_chunk *c)
{
    return sizeof *c + c->nwords * sizeof(op_word);
}

/* A state is its own mapping (thread.c): whole pages. */
static size_t state_bytes(void)
{
    return (sizeof(op_tstate) + 4095) / 4096 * 4096;
}

static uint64_t key(size_t i)
{
    return E.heap[i]->head->left;
}

static void swap(size_t i, size_t j)
{
    op_tstate *x = E.heap[i];
    E.heap[i] = E.heap[j];
    E.heap[j] = x;
}

static void sift_up(size_t i)
{
    while (i > 0 && key((i - 1) / 2) > key(i)) {
        swap(i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void sift_down(size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < E.n && key(l) < key(m)) m = l;
        if (l + 1 < E.n && key(l + 1) < key(m)) m = l + 1;
        if (m == i) return;
        swap(i, m);
        i = m;
    }
}

/* Mapped, not malloc'd: a thread may exit inside a malloc interposer. */
static int heap_room(void)
{
    if (E.n < E.cap) return 0;
    size_t cap = E.cap ? E.cap * 2 : 512;
    void *p = E.heap ? mremap(E.heap, E.cap * sizeof *E.heap, cap * sizeof *E.heap, MREMAP_MAYMOVE)
                     : mmap(NULL, cap * sizeof *E.heap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return -1;
    E.heap = p;
    E.cap = cap;
    return 0;
}

static void start_gen(uint64_t g)
{
    if (E.gen == g) return;
    E.gen = g;
    E.live = E.peak = 0;
    E.bytes = 0;
    E.n = 0; /* the states of an older generation's exited threads are the reap's */
}

/* Gives back the oldest chunks until the exited threads fit their share. */
static void trim(void)
{
    size_t ring = (size_t)op_g.ring_chunks * OP_CHUNK_BYTES;
    size_t share = ring * (E.peak > E.live + 1 ? E.peak - E.live : 1);
    while (E.bytes > share && E.n) {
        op_tstate *t = E.heap[0];
        op_chunk *c = t->head;
        if (c == t->tail) { /* its last: the thread goes */
            E.heap[0] = E.heap[--E.n];
            if (E.n) sift_down(0);
            E.bytes -= chunk_bytes(c) + state_bytes();
            op_registry_drop(t);
            continue;
        }
        t->head = atomic_load_explicit(&c->next, memory_order_relaxed);
        atomic_store_explicit(&c->next, NULL, memory_order_relaxed);
        E.bytes -= chunk_bytes(c);
        op_chunks_free(c);
        sift_down(0);
    }
}

void op_ring_attached(op_tstate *t)
{
    start_gen(t->gen);
    if (++E.live > E.peak) E.peak = E.live;
    trim();
}

void op_ring_exited(op_tstate *t)
{
    start_gen(t->gen);
    if (E.live) E.live--;
    if (!t->head) return;
    t->tail->left = t->exit_ticks;
    if (heap_room() != 0) return; /* kept, uncounted, until the generation's reap */
    size_t b = state_bytes();
    for (op_chunk *c = t->head; c; c = atomic_load_explicit(&c->next, memory_order_relaxed)) b += chunk_bytes(c);
    E.bytes += b;
    E.heap[E.n] = t;
    sift_up(E.n++);
    trim();
}

void op_ring_reaped(uint64_t g)
{
    if (E.gen == g) {
        E.gen = 0;
        E.n = 0;
        E.bytes = 0;
        E.live = E.peak = 0;
    }
}

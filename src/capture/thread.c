/* The thread registry: per-thread buffers, their chunks, the event cap, and
 * what happens when a thread exits. Everything here is off the hot path. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "capture/agg.h"
#include "capture/spill.h"
#include "capture/state.h"

op_global op_g;
uint64_t opprof_active_;
_Thread_local op_tstate *op_tls OP_TLS_MODEL;

static pthread_mutex_t g_reg_lock = PTHREAD_MUTEX_INITIALIZER;
static op_tstate *g_reg_head;
static pthread_key_t g_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

/* Budget granted per request: large enough to keep the shared counter off
 * the hot path, small near the cap so that idle threads hold little of it. */
#define BUDGET_BLOCK 4096

/* Chunks given back by exited threads and earlier sessions, already faulted
 * in: reusing them keeps page faults off the recording of new threads,
 * later sessions and schedule cycles. One pool per chunk size (a thread's
 * first chunk is small, the rest full-size), each bounded so that one large
 * session does not pin memory forever. */
enum { POOL_FULL, POOL_FIRST, NPOOLS };
static const size_t pool_bytes[NPOOLS] = {OP_CHUNK_BYTES, OP_FIRST_CHUNK_BYTES};
static const unsigned pool_max[NPOOLS] = {64, 256};
static pthread_mutex_t g_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static op_chunk *g_pool[NPOOLS];
static unsigned g_pool_n[NPOOLS];
static _Atomic uint64_t g_mapped;

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
    if (low) op_keeper_wake();
    if (c) {
        atomic_store_explicit(&c->next, NULL, memory_order_relaxed);
        atomic_store_explicit(&c->end, NULL, memory_order_relaxed);
        return c;
    }
    c = map_chunk(pool);
    if (c) atomic_fetch_add_explicit(&g_mapped, 1, memory_order_relaxed);
    return c;
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

/* The retired-data arena. A thread that exits while its session records
 * keeps its records until the collector has read them, but not the chunk
 * they are in: its last, part-filled chunk is copied here, exactly sized,
 * and the chunk goes back to the pool for the next thread. Blocks are
 * faulted in as they fill and unmapped when no copy in them is left (each
 * counts its live copies); the block being filled is emptied instead. All
 * under g_pool_lock. */
#define ARENA_BYTES ((size_t)256 << 10)
#define RETIRE_MAX_BYTES OP_FIRST_CHUNK_BYTES /* larger tails keep their chunk: copying would cost more than it saves */

typedef struct op_arena {
    size_t size, used; /* bytes, this header included */
    size_t live;       /* copies not yet freed */
} op_arena;

static op_arena *g_arena; /* the block being filled */

static op_chunk *arena_copy(const op_word *src, size_t nwords)
{
    size_t hdr = (sizeof(op_arena) + 15) & ~(size_t)15;
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

static void arena_release(op_arena *a)
{
    if (--a->live) return;
    if (a == g_arena) {
        a->used = (sizeof(op_arena) + 15) & ~(size_t)15;
    } else {
        munmap(a, a->size);
    }
}

/* Gives a chunk back: to its pool, or to the arena it was copied into. */
static void chunk_put(op_chunk *c)
{
    pthread_mutex_lock(&g_pool_lock);
    if (c->arena) {
        arena_release(c->arena);
        pthread_mutex_unlock(&g_pool_lock);
        return;
    }
    int pool = c->nwords == chunk_words(OP_CHUNK_BYTES) ? POOL_FULL : POOL_FIRST;
    int keep = g_pool_n[pool] < pool_max[pool];
    if (keep) {
        atomic_store_explicit(&c->next, g_pool[pool], memory_order_relaxed);
        g_pool[pool] = c;
        g_pool_n[pool]++;
    }
    pthread_mutex_unlock(&g_pool_lock);
    if (!keep) munmap(c, pool_bytes[pool]);
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

static void free_chunks(op_chunk *c)
{
    while (c) {
        op_chunk *n = atomic_load_explicit(&c->next, memory_order_relaxed);
        chunk_put(c);
        c = n;
    }
}

/* An exiting thread's records stay for the collector; its part-filled last
 * chunk need not. Called with the registry lock held, so no collector reads
 * the chunk while it moves, and after the thread's last record. */
static void retire_tail(op_tstate *t)
{
    op_chunk *tail = t->tail;
    if (!tail || tail->arena) return;
    op_word *cur = atomic_load_explicit(&t->cur, memory_order_relaxed);
    size_t used = (size_t)(cur - tail->words);
    if (used * sizeof(op_word) > RETIRE_MAX_BYTES) return;
    pthread_mutex_lock(&g_pool_lock);
    op_chunk *c = arena_copy(tail->words, used);
    pthread_mutex_unlock(&g_pool_lock);
    if (!c) return; /* out of memory: the chunk stays with its records */
    if (t->head == tail) {
        t->head = c;
    } else {
        op_chunk *prev = t->head;
        while (atomic_load_explicit(&prev->next, memory_order_relaxed) != tail)
            prev = atomic_load_explicit(&prev->next, memory_order_relaxed);
        atomic_store_explicit(&prev->next, c, memory_order_relaxed);
    }
    t->tail = c;
    t->lim = c->words + used;
    atomic_store_explicit(&t->cur, c->words + used, memory_order_relaxed);
    atomic_store_explicit(&tail->next, NULL, memory_order_relaxed);
    chunk_put(tail);
}

/* Thread states are mapped, not malloc'd: a thread's first record may come
 * from inside a malloc interposer, which must not see the profiler's own
 * allocations (or recurse into it). */
static op_tstate *state_new(void)
{
    void *p = mmap(NULL, sizeof(op_tstate), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void state_free(op_tstate *t)
{
    op_stacktab_free(&t->stacks);
    op_drops_free(t->drops);
    op_agg_free(t);
    munmap(t, sizeof *t);
}

static void unlink_state(op_tstate *t)
{
    for (op_tstate **p = &g_reg_head; *p; p = &(*p)->next) {
        if (*p == t) {
            *p = t->next;
            return;
        }
    }
}

static void on_thread_exit(void *arg)
{
    op_tstate *t = arg;
    op_tls = NULL;
    pthread_mutex_lock(&g_reg_lock);
    t->exit_ticks = op_now(t);
    if (t->gen != 0 && t->gen == op_gen_load_acquire()) {
        /* Give the unused part of its grant back for the threads still running. */
        if (t->budget > 0) atomic_fetch_add_explicit(&op_g.remaining, t->budget, memory_order_relaxed);
        t->budget = 0;
        retire_tail(t);
        /* The running session still needs its events: the collector frees it. */
        atomic_store_explicit(&t->dead, 1, memory_order_release);
    } else {
        unlink_state(t);
        op_chunks_free(t->head);
        state_free(t);
    }
    pthread_mutex_unlock(&g_reg_lock);
}

static void make_key(void)
{
    pthread_key_create(&g_key, on_thread_exit);
}

void op_registry_lock(void)
{
    pthread_mutex_lock(&g_reg_lock);
}

void op_registry_unlock(void)
{
    pthread_mutex_unlock(&g_reg_lock);
}

op_tstate *op_registry_first(void)
{
    return g_reg_head;
}

void op_registry_reap(uint64_t g)
{
    for (op_tstate **p = &g_reg_head; *p;) {
        op_tstate *t = *p;
        if (atomic_load_explicit(&t->dead, memory_order_acquire) && t->gen == g) {
            *p = t->next;
            op_chunks_free(t->head);
            state_free(t);
        } else {
            p = &t->next;
        }
    }
}

/* Forgets the input tuples of the thread's last session (record.c): their
 * numbers start again from 0. The cache is touched only by threads that
 * used it, so that others never fault its pages in. */
static void reset_tuples(op_tstate *t)
{
    if ((t->opts & OP_OPT_INPUT_REFS) && t->ntuples) memset(t->tuples, 0, sizeof t->tuples);
    t->ntuples = 0;
}

/* Called with the registry lock held, by the owner thread only. */
static int reset_for(op_tstate *t, uint64_t g)
{
    if (!t->head) {
        t->head = chunk_new(POOL_FIRST);
        if (!t->head) return -1;
    }
    /* Keep the first chunk for reuse; give the rest back. */
    op_chunks_free(atomic_load_explicit(&t->head->next, memory_order_relaxed));
    atomic_store_explicit(&t->head->next, NULL, memory_order_relaxed);
    atomic_store_explicit(&t->head->end, NULL, memory_order_relaxed);
    t->tail = t->head;
    t->lim = t->head->words + t->head->nwords;
    atomic_store_explicit(&t->cur, t->head->words, memory_order_relaxed);
    t->ring_max = op_g.ring_chunks;
    t->ring_n = 1;
    t->depth = 0;
    t->overflow = 0;
    t->budget = 0;
    atomic_store_explicit(&t->dropped, 0, memory_order_relaxed);
    t->cap_ticks = 0;
    OP_STORE(&t->has_gaps, 0);
    op_drops_clear(t->drops);
    reset_tuples(t);
    t->opts = op_g.opts;
    /* A ring overwrites the records that references would point back to; a
     * streamed trace's writer reads chunks one by one, without the earlier tuples. */
    if ((t->opts & (OP_OPT_SHAPES | OP_OPT_AGG | OP_OPT_STREAM)) == OP_OPT_SHAPES && !t->ring_max) t->opts |= OP_OPT_INPUT_REFS;
    t->clock = op_g.clock;
    t->clock_ctx = op_g.clock_ctx;
    /* Without its stack table a thread records its ranges stackless rather
     * than not at all. */
    if ((t->opts & OP_OPT_STACK) && op_stacktab_reset(&t->stacks, op_g.max_stack_depth) != 0)
        t->opts &= ~(uint32_t)OP_OPT_STACK;
    if ((t->opts & OP_OPT_AGG) && op_agg_reset(t) != 0) return -1;
    t->gen = g;
    /* Plain begins take the slow path when every record needs an extension,
     * and both begin and end when a clock function must be called: the fast
     * paths then make no call and need no saved registers. */
    t->fast_gen = (t->opts & (OP_OPT_FLOPS | OP_OPT_STACK | OP_OPT_AGG)) || t->clock ? 0 : g;
    t->end_gen = (t->opts & OP_OPT_AGG) || t->clock || OP_LOAD(&op_g.watch_name) ? 0 : g;
    t->agg_gen = (t->opts & OP_OPT_AGG) && !t->clock ? g : 0;
    return 0;
}

op_tstate *op_thread_attach(uint64_t g)
{
    if (op_spill_norecord) return NULL; /* a streamed trace's writer */
    pthread_once(&g_key_once, make_key);
    op_tstate *t = op_tls;
    pthread_mutex_lock(&g_reg_lock);
    if (op_gen_load_acquire() != g) {
        /* The session stopped while we were getting here. */
        pthread_mutex_unlock(&g_reg_lock);
        return NULL;
    }
    if (!t) {
        t = state_new();
        if (!t) {
            pthread_mutex_unlock(&g_reg_lock);
            return NULL;
        }
        t->pid = getpid();
        t->tid = (int64_t)syscall(SYS_gettid);
        pthread_getname_np(pthread_self(), t->name, sizeof t->name);
        t->next = g_reg_head;
        g_reg_head = t;
        op_tls = t;
        pthread_setspecific(g_key, t);
    } else if (t->pid != getpid()) {
        /* First use in a forked child: the parent's buffers are not ours. */
        t->pid = getpid();
        t->tid = (int64_t)syscall(SYS_gettid);
    }
    if (reset_for(t, g) != 0) {
        t->gen = 0;
        t = NULL;
    }
    pthread_mutex_unlock(&g_reg_lock);
    return t;
}

static int take_budget(op_tstate *t)
{
    int64_t left = atomic_load_explicit(&op_g.remaining, memory_order_relaxed);
    for (;;) {
        if (left <= 0) return -1;
        int64_t want = left / 64;
        if (want > BUDGET_BLOCK) want = BUDGET_BLOCK;
        if (want < 1) want = 1;
        if (atomic_compare_exchange_weak_explicit(&op_g.remaining, &left, left - want, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            t->budget += want;
            return 0;
        }
    }
}

/* The cap reached: the ranges open on this thread end now, so that none of
 * them absorbs the time of the children it can no longer record. */
static void cap_close(op_tstate *t)
{
    uint64_t ts = op_now(t);
    OP_STORE(&t->cap_ticks, ts ? ts : 1); /* a collector may read it beside us */
    for (uint32_t i = 0; i < t->depth; i++) {
        op_word *rec = t->stack[i].rec;
        if (!rec) continue;
        OP_STORE(&rec[0], OP_LOAD(&rec[0]) | OP_REC_FORCED);
        OP_STORE(&rec[2], ts);
        t->stack[i].rec = NULL; /* its end stores nothing */
    }
}

void op_chunk_link(op_tstate *t, op_word *cur, op_chunk *c)
{
    /* Publish where the old chunk's data ends before moving on. */
    atomic_store_explicit(&t->tail->end, cur, memory_order_release);
    atomic_store_explicit(&t->tail->next, c, memory_order_release);
    t->tail = c;
    t->lim = c->words + c->nwords;
    atomic_store_explicit(&t->cur, c->words, memory_order_release);
}

/* Room for `words` more words in the current chunk, moving to a new one
 * when needed (in a flight session, the ring's next); 0 or -1. */
static int make_room(op_tstate *t, uint32_t words)
{
    op_word *cur = atomic_load_explicit(&t->cur, memory_order_relaxed);
    if (cur + words <= t->lim) return 0;
    if (t->ring_max) return op_ring_advance(t, cur);
    if (t->opts & OP_OPT_STREAM) return op_spill_advance(t, cur);
    op_chunk *c = chunk_new(POOL_FULL);
    if (!c) return -1;
    op_chunk_link(t, cur, c);
    return 0;
}

void op_thread_gap(op_tstate *t, uint64_t from)
{
    if (t->opts & OP_OPT_AGG) {
        op_agg_gap(t, from, op_now(t));
        return;
    }
    if (make_room(t, OP_REC_GAP_WORDS) != 0) return;
    op_word *c = atomic_load_explicit(&t->cur, memory_order_relaxed);
    c[0] = OP_REC_GAP;
    c[1] = from;
    c[2] = op_now(t);
    OP_STORE(&t->has_gaps, 1);
    op_publish(t, c + OP_REC_GAP_WORDS);
}

int op_thread_reserve(op_tstate *t, uint32_t words)
{
    if (OP_UNLIKELY(t->cap_ticks)) goto drop;
    if (t->budget <= 0 && take_budget(t) != 0) {
        cap_close(t);
        goto drop;
    }
    if (make_room(t, words) != 0) goto drop;
    return 0;
drop:
    atomic_store_explicit(&t->dropped, atomic_load_explicit(&t->dropped, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    return -1;
}

uint64_t op_thread_quiet_begin(void)
{
    uint64_t g = op_gen_load();
    op_tstate *t = g ? op_state_for(g) : NULL;
    if (!t || !(t->opts & OP_OPT_MEMORY)) return 0;
    t->opts &= ~(uint32_t)OP_OPT_MEMORY;
    return g;
}

void op_thread_quiet_end(uint64_t saved)
{
    op_tstate *t = op_tls;
    /* A thread that moved on to a new session meanwhile has its options from it. */
    if (saved && t && t->gen == saved) t->opts |= OP_OPT_MEMORY;
}

/* The chunk functions the ring (ring.c) shares with the registry: full-size
 * chunks from the pool, and chunks given back to it. */
op_chunk *op_chunk_new(void)
{
    return chunk_new(POOL_FULL);
}

void op_chunks_free(op_chunk *c)
{
    free_chunks(c);
}

/* The thread registry: per-thread buffers, their chunks, the event cap, and
 * what happens when a thread exits. Everything here is off the hot path. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

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

/* Chunks given back by earlier sessions, already faulted in: reusing them
 * keeps page faults off the recording of later sessions and schedule
 * cycles. Bounded so that one large session does not pin memory forever. */
#define POOL_MAX 64
static pthread_mutex_t g_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static op_chunk *g_pool;
static unsigned g_pool_n;

/* Chunks are populated up front so that the page faults happen here, in the
 * slow path, not in later stores. (On this project's VMs fresh memory costs
 * about 0.5 ms per MiB to fault in; 2 MiB transparent huge pages were slower
 * still, so plain pages it is.) */
static op_chunk *map_chunk(void)
{
    void *p = mmap(NULL, OP_CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

op_chunk *op_chunk_new(void)
{
    pthread_mutex_lock(&g_pool_lock);
    op_chunk *c = g_pool;
    if (c) {
        g_pool = atomic_load_explicit(&c->next, memory_order_relaxed);
        g_pool_n--;
    }
    pthread_mutex_unlock(&g_pool_lock);
    if (c) {
        atomic_store_explicit(&c->next, NULL, memory_order_relaxed);
        atomic_store_explicit(&c->end, NULL, memory_order_relaxed);
        return c;
    }
    c = map_chunk();
    if (!c) return NULL;
    atomic_init(&c->next, NULL);
    atomic_init(&c->end, NULL);
    c->nwords = (OP_CHUNK_BYTES - sizeof(op_chunk)) / sizeof(op_word);
    return c;
}

static void chunk_free(op_chunk *c)
{
    munmap(c, OP_CHUNK_BYTES);
}

void op_capture_prefill(unsigned nchunks)
{
    while (1) {
        pthread_mutex_lock(&g_pool_lock);
        unsigned have = g_pool_n;
        pthread_mutex_unlock(&g_pool_lock);
        if (have >= nchunks) return;
        op_chunk *c = map_chunk();
        if (!c) return;
        c->nwords = (OP_CHUNK_BYTES - sizeof(op_chunk)) / sizeof(op_word);
        pthread_mutex_lock(&g_pool_lock);
        atomic_store_explicit(&c->next, g_pool, memory_order_relaxed);
        g_pool = c;
        g_pool_n++;
        pthread_mutex_unlock(&g_pool_lock);
    }
}

void op_chunks_free(op_chunk *c)
{
    while (c) {
        op_chunk *n = atomic_load_explicit(&c->next, memory_order_relaxed);
        pthread_mutex_lock(&g_pool_lock);
        int keep = g_pool_n < POOL_MAX;
        if (keep) {
            atomic_store_explicit(&c->next, g_pool, memory_order_relaxed);
            g_pool = c;
            g_pool_n++;
        }
        pthread_mutex_unlock(&g_pool_lock);
        if (!keep) chunk_free(c);
        c = n;
    }
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

/* Called with the registry lock held, by the owner thread only. */
static int reset_for(op_tstate *t, uint64_t g)
{
    if (!t->head) {
        t->head = op_chunk_new();
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
    t->opts = op_g.opts;
    t->clock = op_g.clock;
    t->clock_ctx = op_g.clock_ctx;
    /* Without its stack table a thread records its ranges stackless rather
     * than not at all. */
    if ((t->opts & OP_OPT_STACK) && op_stacktab_reset(&t->stacks, op_g.max_stack_depth) != 0)
        t->opts &= ~(uint32_t)OP_OPT_STACK;
    t->gen = g;
    /* Plain begins take the slow path when every record needs an extension,
     * and both begin and end when a clock function must be called: the fast
     * paths then make no call and need no saved registers. */
    t->fast_gen = (t->opts & (OP_OPT_FLOPS | OP_OPT_STACK)) || t->clock ? 0 : g;
    t->end_gen = t->clock || OP_LOAD(&op_g.watch_name) ? 0 : g;
    return 0;
}

op_tstate *op_thread_attach(uint64_t g)
{
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

void op_chunk_link(op_tstate *t, op_word *cur, op_chunk *c)
{
    /* Publish where the old chunk's data ends before moving on. */
    atomic_store_explicit(&t->tail->end, cur, memory_order_release);
    atomic_store_explicit(&t->tail->next, c, memory_order_release);
    t->tail = c;
    t->lim = c->words + c->nwords;
    atomic_store_explicit(&t->cur, c->words, memory_order_release);
}

int op_thread_reserve(op_tstate *t, uint32_t words)
{
    if (t->budget <= 0 && take_budget(t) != 0) goto drop;
    op_word *cur = atomic_load_explicit(&t->cur, memory_order_relaxed);
    if (cur + words > t->lim) {
        if (t->ring_max) {
            if (op_ring_advance(t, cur) == 0) return 0;
            goto drop;
        }
        op_chunk *c = op_chunk_new();
        if (!c) goto drop;
        op_chunk_link(t, cur, c);
    }
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

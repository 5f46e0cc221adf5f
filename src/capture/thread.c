/* The thread registry (thread.h): thread states made at a thread's first
 * record of a session, reset for each session, and what happens when a
 * thread exits. Everything here is off the hot path. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "capture/sample.h"
#include "capture/agg.h"
#include "capture/arena.h"
#include "capture/pool.h"
#include "capture/ring.h"
#include "capture/thread.h"

static pthread_mutex_t g_reg_lock = PTHREAD_MUTEX_INITIALIZER;
static op_tstate *g_reg_head;
static pthread_key_t g_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
static _Thread_local int g_never_record OP_TLS_MODEL;

/* An exiting thread's tail larger than this keeps its chunk: copying it
 * would cost more than it saves. */
#define RETIRE_MAX_BYTES OP_FIRST_CHUNK_BYTES

void op_thread_never_record(void)
{
    g_never_record = 1;
}

/* An exiting thread's records stay for the collector; its part-filled last
 * chunk need not (arena.h). Called with the registry lock held, so no
 * collector reads the chunk while it moves, and after the thread's last
 * record. */
static void retire_tail(op_tstate *t)
{
    op_chunk *tail = t->tail;
    if (!tail || tail->arena) return;
    op_word *cur = atomic_load_explicit(&t->cur, memory_order_relaxed);
    size_t used = (size_t)(cur - tail->words);
    if (used * sizeof(op_word) > RETIRE_MAX_BYTES) return;
    op_chunk *c = op_arena_copy(tail->words, used);
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
    op_chunks_free(tail);
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
    if (t->prev) t->prev->next = t->next;
    else g_reg_head = t->next;
    if (t->next) t->next->prev = t->prev;
}

void op_registry_drop(op_tstate *t)
{
    unlink_state(t);
    op_chunks_free(t->head);
    state_free(t);
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
        /* A flight recorder's exited threads share one budget: this may free it. */
        if (t->ring_max) op_ring_exited(t);
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
    for (op_tstate *t = g_reg_head, *next; t; t = next) {
        next = t->next;
        if (atomic_load_explicit(&t->dead, memory_order_acquire) && t->gen == g) op_registry_drop(t);
    }
    op_ring_reaped(g);
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
        t->head = op_chunk_first();
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
    t->ring_n = op_chunk_is_full(t->head); /* full-size chunks only (ring.c) */
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
    if (g_never_record) return NULL; /* a streamed trace's writer */
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
        t->prev = NULL;
        if (g_reg_head) g_reg_head->prev = t;
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
    } else if (t->ring_max) {
        op_ring_attached(t); /* the exited threads' share shrinks */
    }
    pthread_mutex_unlock(&g_reg_lock);
    /* A thread that records is sampled too (when the session samples),
     * whoever started it. */
    if (t && op_sample_on()) (void)op_sample_join();
    return t;
}

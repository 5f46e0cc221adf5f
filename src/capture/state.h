/* Capture state shared by the hot path, the thread registry, the session and
 * the collector that turns buffers into the event model: each thread's
 * state and the process-wide one (defined in state.c). What the threads
 * write into their chunks is the record format (capture/format.h); the
 * registry of thread states is thread.h. */
#ifndef OPPROF_CAPTURE_STATE_H
#define OPPROF_CAPTURE_STATE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/clock.h"
#include "capture/drops.h"
#include "capture/format.h"
#include "capture/stacktab.h"
#include "common/compiler.h"
#include "opprof.h"

#define OP_MAX_DEPTH 256

/* Input tuples a thread recorded in full in this session, by site, so
 * that a site repeating one of its last few tuples stores a reference
 * instead of a copy (record.c). A set per site hash, a few ways each; each
 * entry holds its own copy of the tuple, so that it never depends on
 * chunks that may have moved on. Tuples of more than OP_TUPLE_DIMS dims,
 * or with an input of more than OPPROF_MAX_DIMS, are always copied. */
#define OP_TUPLE_SETS 16
#define OP_TUPLE_WAYS 4
#define OP_TUPLE_DIMS 24
typedef struct op_tuple {
    const opprof_site *site; /* NULL: empty */
    uint32_t n;              /* inputs */
    uint32_t ordinal;        /* its number among the thread's tuples (OP_EXT_REF) */
    uint16_t type[OPPROF_MAX_INPUTS]; /* each input's dtype and ndim bytes, as one */
    int64_t dims[OP_TUPLE_DIMS];      /* the dims of each input in turn */
} op_tuple;

typedef struct op_tuple_set {
    op_tuple way[OP_TUPLE_WAYS];
    uint32_t last; /* the way that hit or was filled last: looked at first */
    uint32_t next; /* the way to fill next (round robin) */
} op_tuple_set;

typedef struct op_open {
    op_word *rec; /* NULL: dropped */
    const opprof_site *site;
} op_open;

/* Session options as the hot path sees them. */
enum {
    OP_OPT_SHAPES = 1u << 0,
    OP_OPT_MEMORY = 1u << 1,
    OP_OPT_FLOPS = 1u << 2,
    OP_OPT_STACK = 1u << 3,
    OP_OPT_AGG = 1u << 4, /* online key averages instead of records (capture/agg.h) */
    /* Per thread only (never in op_g.opts): repeated input tuples are
     * stored as references (shapes on, not a ring). */
    OP_OPT_INPUT_REFS = 1u << 5,
    OP_OPT_STREAM = 1u << 6, /* full chunks go to the trace's writer (capture/spill.h) */
    OP_OPT_PATHS = 1u << 7   /* with OP_OPT_AGG: sums also keyed by call path (capture/agg.h); never with OP_OPT_STACK */
};

typedef struct op_tstate {
    /* Hot: touched by every begin/end. */
    _Atomic(op_word *) cur;   /* next free word; published with release */
    op_word *lim;             /* end of the current chunk */
    uint64_t fast_gen;        /* == gen when a plain begin may take the fast path */
    uint64_t end_gen;         /* == gen when an end may take the fast path */
    uint64_t agg_gen;         /* == gen when begin and end may take the aggregating fast paths */
    struct op_agg *agg;       /* OP_OPT_AGG: the thread's sums; kept from session to session */
    uint64_t gen;             /* session generation this state records for */
    uint32_t depth;
    uint32_t overflow;        /* begins past OP_MAX_DEPTH still to be ended */
    int64_t budget;           /* events this thread may record before asking for more */
    opprof_clock_fn clock;    /* NULL: op_cycles() */
    void *clock_ctx;
    uint32_t opts;            /* OP_OPT_* */
    /* Cold. */
    _Atomic uint64_t dropped;
    /* The clock when this thread first found the cap reached, 0 before.
     * Its ranges open then were closed at that time; it records nothing
     * more in this session (a grant given back later would let children
     * appear after their parent's end). */
    uint64_t cap_ticks;
    op_dropsite *drops;       /* dropped begins by site; NULL until the first */
    int has_gaps;             /* gap records in the buffer: the collector reads it twice */
    op_chunk *head, *tail;
    _Atomic int dead;         /* the thread has exited */
    uint64_t exit_ticks;      /* its clock at exit */
    int64_t pid, tid;
    char name[32];
    struct op_tstate *next;   /* registry list */
    struct op_tstate *prev;   /* the one before, NULL first: exited threads leave it one by one */
    uint32_t ring_max;        /* flight recorder: chunks in the ring, 0 when not a ring */
    uint32_t ring_n;          /* chunks linked now */
    _Atomic int ring_busy;    /* moving the ring's head (ring.c) */
    const op_word *ring_until; /* while frozen: where the thread's data ended at the freeze */
    op_stacktab stacks;       /* with_stack: this thread's distinct stacks */
    uint32_t ntuples;         /* input tuples recorded in full in this session */
    op_open stack[OP_MAX_DEPTH];
    op_tuple_set tuples[OP_TUPLE_SETS]; /* OP_OPT_INPUT_REFS; emptied at attach when used */
} op_tstate;

/* Process-wide capture state. The recording generation is the public
 * opprof_active_ (0 when no session records), so that the header's inline
 * wrappers can test it without a call. */
typedef struct op_global {
    _Atomic int64_t remaining; /* events left under the cap */
    uint32_t opts;
    opprof_clock_fn clock;
    void *clock_ctx;
    unsigned max_stack_depth;
    uint32_t ring_chunks;      /* flight recorder: chunks per thread; 0 for a plain session */
    /* Flight recorder: the ends of ranges of this name are reported to
     * watch_fn (a slow "step" that is a named range). Set before the session
     * starts; every end then takes the slow path, which checks the name. */
    const char *watch_name;
    void (*watch_fn)(uint64_t t0, uint64_t t1);
    _Atomic int ring_freeze;   /* > 0 while a collector reads the rings: nothing is overwritten */
} op_global;

extern op_global op_g;

/* opprof_active_ is read through the GOT even inside the library: a program
 * that reads it from the header's inline wrappers may hold the only copy
 * (a copy relocation), and both sides must see the same one. */

static inline uint64_t op_gen_load(void)
{
    return __atomic_load_n(&opprof_active_, __ATOMIC_RELAXED);
}

static inline uint64_t op_gen_load_acquire(void)
{
    return __atomic_load_n(&opprof_active_, __ATOMIC_ACQUIRE);
}

static inline void op_gen_store(uint64_t g)
{
    __atomic_store_n(&opprof_active_, g, __ATOMIC_RELEASE);
}
extern _Thread_local op_tstate *op_tls OP_TLS_MODEL;


static inline uint64_t op_now(const op_tstate *t)
{
    return OP_UNLIKELY(t->clock != NULL) ? (uint64_t)t->clock(t->clock_ctx) : op_cycles();
}

/* Publishes the records written up to `end` to a concurrent collector. */
static inline void op_publish(op_tstate *t, op_word *end)
{
    atomic_store_explicit(&t->cur, end, memory_order_release);
}

/* Where chunk c of thread t holds data up to, and the chunk after it in
 * *next: the end it published when the thread left it, or the thread's
 * cursor while it is the current one; NULL when the thread left c
 * meanwhile (read again: its end is published now). */
static inline const op_word *op_chunk_data(const op_tstate *t, op_chunk *c, op_chunk **next)
{
    *next = atomic_load_explicit(&c->next, memory_order_acquire);
    const op_word *end = atomic_load_explicit(&c->end, memory_order_acquire);
    if (*next) return end;
    const op_word *cur = atomic_load_explicit(&t->cur, memory_order_acquire);
    return cur >= c->words && cur <= c->words + c->nwords ? cur : NULL;
}

/* Bytes t's buffers hold now, walked from its first chunk; the owner
 * thread's view (benchmarks and tests of record sizes). */
static inline size_t op_thread_bytes(const op_tstate *t)
{
    size_t words = 0;
    for (const op_chunk *c = t->head; c; c = atomic_load_explicit(&c->next, memory_order_acquire)) {
        const op_word *end = atomic_load_explicit(&c->next, memory_order_acquire)
                                 ? atomic_load_explicit(&c->end, memory_order_acquire)
                                 : atomic_load_explicit(&t->cur, memory_order_relaxed);
        words += (size_t)(end - c->words);
    }
    return words * sizeof(op_word);
}

/* Makes c the thread's current chunk, after its full one whose data ends
 * at cur (the chunk-full slow paths: reserve.c, ring.c, spill.c). */
static inline void op_chunk_link(op_tstate *t, op_word *cur, op_chunk *c)
{
    /* Publish where the old chunk's data ends before moving on. */
    atomic_store_explicit(&t->tail->end, cur, memory_order_release);
    atomic_store_explicit(&t->tail->next, c, memory_order_release);
    t->tail = c;
    t->lim = c->words + c->nwords;
    atomic_store_explicit(&t->cur, c->words, memory_order_release);
}

#endif

/* Capture state shared by the hot path, the thread registry, the session and
 * the collector that turns buffers into the event model. What the threads
 * write into their chunks is the record format (capture/format.h). */
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
#include "common/seam.h"
#include "opprof.h"

#define OP_CHUNK_BYTES ((size_t)1 << 20) /* 1 MiB per chunk */
#define OP_PREFILL_CHUNKS 4              /* mapped at start: ~175k events without a page fault */
/* A thread's first chunk is small: a program that starts many threads which
 * record a little each pays 64 KiB per live thread, not 1 MiB; a thread that
 * records more moves on to full-size chunks. */
#define OP_FIRST_CHUNK_BYTES ((size_t)64 << 10)
#define OP_PREFILL_FIRST_CHUNKS 16
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

/* Slow paths (thread.c). */

/* Makes the calling thread's state current for generation g: registers the
 * thread on first use, resets buffers left from an earlier session. NULL
 * when g is no longer the active generation or memory ran out. */
op_tstate *op_thread_attach(uint64_t g);

/* The calling thread's state for generation g, attaching when needed. */
static inline op_tstate *op_state_for(uint64_t g)
{
    op_tstate *t = op_tls;
    if (OP_LIKELY(t != NULL && t->gen == g)) return t;
    return op_thread_attach(g);
}

/* Ensures room for `words` more words and one more event under the cap.
 * Returns 0, or -1 after counting a drop. The first time the cap stops the
 * thread, its open ranges are closed then and flagged forced, and their
 * ends will store nothing (state.h: cap_ticks). */
int op_thread_reserve(op_tstate *t, uint32_t words);

/* Writes a gap record [from, now] into t's buffer: the profiler worked on
 * this thread meanwhile, and the collector takes that time out. Not an
 * event: no cap budget. */
void op_thread_gap(op_tstate *t, uint64_t from);

/* A chunk from the pool (or newly mapped), and chunks given back to it:
 * the ring (ring.c) uses them as the thread registry does. */
op_chunk *op_chunk_new(void);
void op_chunks_free(op_chunk *c);

/* The collector has decoded chunk c of a closed generation (nothing writes
 * it again before it is given back). When the pool will not keep it, its
 * pages go back to the system now rather than at the end of the collection,
 * so that records and the model built from them are never both resident.
 * *seen counts the full-size chunks decoded so far in this collection. */
OP_SEAM void op_chunk_decoded(op_chunk *c, unsigned *seen);

/* Makes c the thread's current chunk, after its full one whose data ends at cur. */
void op_chunk_link(op_tstate *t, op_word *cur, op_chunk *c);

/* Ring buffers (ring.c). The thread's chunk is full: link the next one,
 * the ring's oldest when it is full and no collector reads, a new one
 * otherwise. cur is where the full chunk's data ends. 0, or -1 when no
 * memory is left. */
int op_ring_advance(op_tstate *t, op_word *cur);

/* While frozen no ring overwrites a chunk (threads grow their rings
 * instead), so that a collector may read every thread's records while the
 * threads record on. Nests. */
void op_ring_freeze(void);
void op_ring_thaw(void);

/* Maps chunks into the pool until it holds nchunks (at session start, so
 * that a session's first events do not pay for page faults). */
void op_capture_prefill(unsigned nchunks);

/* Chunks recording threads have mapped themselves (the pool was empty),
 * for tests of reuse; chunks mapped into the pool are not counted. */
uint64_t op_capture_chunks_mapped(void);

/* Full-size chunks in the pool now, for tests of the keeper. */
unsigned op_capture_pool_full(void);

/* The pool keeper (keeper.c): maps full-size chunks into the pool in the
 * background, so that it holds OP_KEEP_AHEAD_CHUNKS again soon after a
 * thread takes one. op_keeper_start at a session's start (under the
 * session lock; it runs from then on); op_keeper_wake from the chunk slow
 * path. */
#define OP_KEEP_AHEAD_CHUNKS 8
void op_keeper_start(void);
void op_keeper_wake(void);

/* Registry walk for the collector; the registry lock is held between
 * op_registry_lock and op_registry_unlock. */
OP_SEAM void op_registry_lock(void);
OP_SEAM void op_registry_unlock(void);
OP_SEAM op_tstate *op_registry_first(void);

/* Frees the states of exited threads that generation g has collected. */
OP_SEAM void op_registry_reap(uint64_t g);

/* Keeps the calling thread's memory events out while the profiler itself
 * allocates on a path that runs during a session (a symbol lookup under a
 * malloc interposer): op_thread_quiet_begin returns what to hand back to
 * op_thread_quiet_end. */
OP_SEAM uint64_t op_thread_quiet_begin(void);
OP_SEAM void op_thread_quiet_end(uint64_t saved);

/* Work of the profiler's own on a recording thread (a symbol lookup taking
 * milliseconds) taken out of its timeline: op_own_begin notes the calling
 * thread's clock when it records; op_own_end writes the gap record from
 * then to now (owntime.c), unless the session moved on meanwhile. */
typedef struct op_own {
    op_tstate *t; /* NULL: the thread does not record */
    uint64_t from;
} op_own;
OP_SEAM op_own op_own_begin(void);
OP_SEAM void op_own_end(op_own o);

#endif

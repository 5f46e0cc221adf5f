/* with_stack capture: the call stack of each begin, taken with libunwind
 * (loaded when a session first asks for stacks) and deduplicated into a
 * per-thread stack table, so that a record carries one word (the address of
 * its stack's entry) instead of its frames.
 *
 * An entry is [hash][nframes][ip...], return addresses innermost first, in
 * an arena of segments that never move: a collector running beside a thread
 * that still records can follow a record's pointer without a lock. The
 * thread's record publication (release) orders the entry before the record.
 * The hash index is private to the owner thread. */
#ifndef OPPROF_CAPTURE_STACKTAB_H
#define OPPROF_CAPTURE_STACKTAB_H

#include <stddef.h>
#include <stdint.h>

#define OP_STACK_MAX_DEPTH 128 /* frames kept per stack; max_stack_depth is clamped to it */

typedef struct op_stackseg {
    struct op_stackseg *next;
    size_t nwords;
    uint64_t words[];
} op_stackseg;

typedef struct op_stacktab {
    uint64_t **slots;   /* entries by hash, NULL empty; owner only */
    size_t nslots, nentries;
    op_stackseg *head;  /* first segment, kept from session to session */
    op_stackseg *seg;   /* segment being filled */
    uint64_t *p, *lim;  /* free words of seg */
    uint32_t depth;     /* frames to keep (the session's max_stack_depth) */
    uint32_t own;       /* profiler frames above the caller's at the last capture */
} op_stacktab;

/* Entry accessors for the collector. */
#define OP_STACK_NFRAMES(e) ((uint32_t)(e)[1])
#define OP_STACK_FRAMES(e) ((const uint64_t *)(e) + 2)

/* Loads the unwinder (libunwind, with dlopen) once: a session that asks for
 * stacks calls it at its start, never a recording thread (which may be
 * inside a malloc interposer). 0, or -1 with the reason in
 * op_stack_load_error(). */
int op_stack_load(void);
const char *op_stack_load_error(void);

/* op_stack_load, and libunwind set up for walks from signal handlers (a
 * cache per thread); 0, or -1 when it cannot walk from a signal frame. */
int op_stack_load_for_signals(void);

/* The sampler's walk, from a signal handler: the return addresses above the
 * interrupted frame of ucontext (the handler's third argument), outermost
 * last, at most max. The count, or -1 when libunwind is not loaded. */
int op_stack_walk_signal(void *ucontext, uint64_t *out, int max);

/* Prepares the table for a new session keeping depth frames: maps the first
 * segment and index (kept from an earlier session when there is one), empties
 * them and warms libunwind's per-thread cache, so that the hot path finds
 * everything in place. Off the hot path; 0, or -1 when out of memory or
 * the unwinder was not loaded. */
int op_stacktab_reset(op_stacktab *s, unsigned depth);

/* Unmaps everything (the thread's state goes away). */
void op_stacktab_free(op_stacktab *s);

/* The calling thread's stack, from the frame that returns to ra (the return
 * address of the public begin call, so that the profiler's own frames are left
 * out) outward: the address of its entry in s, added when new; 0 when it
 * could not be kept (out of memory). No lock, no allocation unless the table
 * must grow. */
uint64_t op_stack_capture(op_stacktab *s, const void *ra);

#endif

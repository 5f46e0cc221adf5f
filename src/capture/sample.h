/* The sampler (opprof_config.sample_hz): each thread that joins gets a
 * timer on its own CPU clock (timer_create on the thread's CPU-time clock,
 * SIGEV_THREAD_ID), so a thread is sampled in proportion to the CPU it
 * uses, whoever else runs. The signal's handler takes the interrupted
 * thread's stack (libunwind from the signal frame when it loads, frame
 * pointers otherwise) into buffers the thread got when it joined: it
 * allocates nothing and takes no lock. Stacks are kept in the entry layout
 * of the stack table (capture/stacktab.h), deduplicated per thread, so the
 * model reads them as it reads with_stack's; addresses are symbolized at the
 * end, by the analysis library.
 *
 * The signal is a real-time one that the program has no handler for when
 * the session starts (the highest free from SIGRTMAX down, or
 * OPPROF_SAMPLE_SIGNAL); a program that installs its own handler for it
 * later is found at the next join and at the end (op_sample_lost). */
#ifndef OPPROF_CAPTURE_SAMPLE_H
#define OPPROF_CAPTURE_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "common/compiler.h"

enum { OP_UNWIND_AUTO = 0, OP_UNWIND_FP = 1, OP_UNWIND_LIBUNWIND = 2 };

/* Starts sampling every thread that joins, at hz per second of its CPU
 * time, keeping depth frames; the calling thread joins. 0, or -1 after
 * op_fail. Called by opprof_start with the session lock held. */
int op_sample_start(unsigned hz, unsigned depth, unsigned unwind);

/* Stops every timer; samples stay readable until the next start. */
void op_sample_stop(void);

/* 1 while a sampling session runs. */
int op_sample_on(void);

/* The calling thread joins the running sampling (no-op when it has, or
 * when none runs). 0, or -1 when it cannot (too many threads, no memory,
 * no timer). */
int op_sample_join(void);

/* One sample as the collector gets it. */
typedef struct op_sample_rec {
    uint64_t ticks;       /* the session clock when taken */
    const uint64_t *stack; /* its entry: [hash][nframes][ip...], leaf first; the leaf is pc + 1 */
    uint64_t weight;      /* periods it stands for: 1 + the timer's overruns (a CPU timer fires at
                           * the scheduler's tick, so at most HZ times a second) */
    int64_t cpu_ns;       /* the thread's CPU time since its previous sample (or its join), read in
                           * the handler; 0 when its clock could not be read. On a busy machine the
                           * overruns undercount: 1 + overruns summed came to 85-93% of the CPU time
                           * a thread measured, this to within a tick of it */
} op_sample_rec;

/* Hands fn each thread's samples taken so far and not handed out before,
 * those in [from, to] ticks (earlier ones are let go); fn gets the thread's
 * pid, tid and name. Returns what the sampler could not keep (buffers full)
 * since the last call. */
typedef void (*op_sample_fn)(void *ctx, int64_t pid, int64_t tid, const char *name, const op_sample_rec *s,
                             size_t n);
OP_SEAM uint64_t op_sample_take(uint64_t from, uint64_t to, op_sample_fn fn, void *ctx);

/* The sampling period in ns (0 when not sampling), the signal used, and
 * whether the program took that signal over (its own handler replaced ours:
 * sampling stopped there). */
OP_SEAM int64_t op_sample_period_ns(void);
OP_SEAM int op_sample_signal(void);
OP_SEAM int op_sample_lost(void);

#endif

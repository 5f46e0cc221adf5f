/* The recording clock: raw ticks on the hot path (rdtsc where the TSC is
 * invariant), converted to nanoseconds after the session with a ratio
 * calibrated against CLOCK_MONOTONIC. */
#ifndef OPPROF_CAPTURE_CLOCK_H
#define OPPROF_CAPTURE_CLOCK_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#include "common/compiler.h"
#define OP_HAVE_CYCLE_COUNTER 1
static inline uint64_t op_cycles(void)
{
    return __rdtsc();
}
#elif defined(__aarch64__)
#define OP_HAVE_CYCLE_COUNTER 1
static inline uint64_t op_cycles(void)
{
    uint64_t v;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
    return v;
}
#else
#define OP_HAVE_CYCLE_COUNTER 0
static inline uint64_t op_cycles(void)
{
    return 0;
}
#endif

static inline int64_t op_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int64_t op_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* 1 when op_cycles() is a usable invariant counter on this machine. */
OP_SEAM int op_clock_cycles_usable(void);

/* The clock of a session: ticks at its start and the conversion to ns. */
typedef struct op_timebase {
    uint64_t tick0;       /* ticks at the session's start */
    int64_t mono0;        /* CLOCK_MONOTONIC at the same instant */
    int64_t wall0;        /* CLOCK_REALTIME at the same instant */
    uint64_t mult;        /* ns per tick, 32.32 fixed point */
    int ticks_are_ns;     /* the ticks are already nanoseconds */
} op_timebase;

/* Samples the start of a session. */
void op_timebase_start(op_timebase *tb, int ticks_are_ns, uint64_t now_ticks);

/* Fixes the ratio at the session's end, against the longest baseline the
 * process has (at least 2 ms, waited for if the process is younger). */
OP_SEAM void op_timebase_finish(op_timebase *tb);

/* op_cycles() ticks per nanosecond now, against the same baseline as
 * op_timebase_finish (1 without a cycle counter): for figures given in
 * nanoseconds that the hot path applies in ticks. */
double op_clock_ticks_per_ns(void);

static inline int64_t op_timebase_ns(const op_timebase *tb, uint64_t ticks)
{
    if (tb->ticks_are_ns) return (int64_t)(ticks - tb->tick0);
    int64_t d = (int64_t)(ticks - tb->tick0);
    if (d < 0) return -(int64_t)(((unsigned __int128)(uint64_t)-d * tb->mult) >> 32);
    return (int64_t)(((unsigned __int128)(uint64_t)d * tb->mult) >> 32);
}

#endif

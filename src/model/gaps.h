/* The profiler's own time inside a thread's recording: intervals (gaps) in
 * which the thread did the profiler's work (the symbol lookup of a function
 * called for the first time under -finstrument-functions), recorded as gap
 * records. The collector removes them from that thread's timeline, as if
 * its clock had stopped, so that no enclosing range is charged for them:
 * every later timestamp moves earlier by the gaps before it, which keeps
 * the nesting of the thread's ranges. */
#ifndef OPPROF_MODEL_GAPS_H
#define OPPROF_MODEL_GAPS_H

#include <stddef.h>
#include <stdint.h>

typedef struct op_gaps {
    struct op_gap {
        uint64_t from, to; /* ticks */
        uint64_t before;   /* total length of the gaps before this one */
    } * g;
    size_t n, cap;
    size_t near; /* the gap the last lookup found (+ 1, 0 none): times mostly come in order */
} op_gaps;

/* Adds a gap; gaps come in time order (one thread's buffer). 0 or -1. */
int op_gaps_add(op_gaps *s, uint64_t from, uint64_t to);

/* ticks with the gaps before it taken out (a tick inside a gap maps to
 * its start). A time at or after the last one asked costs a compare or
 * two; others a binary search. */
uint64_t op_gaps_apply(op_gaps *s, uint64_t ticks);

/* The same, inline for the common case: no gaps, or a time after the last
 * one (the gaps are a thread's first calls of each function, so nearly
 * every later time is past them all). */
static inline uint64_t op_gaps_map(op_gaps *s, uint64_t ticks)
{
    if (!s->n) return ticks;
    const struct op_gap *last = &s->g[s->n - 1];
    if (ticks >= last->to) return ticks - last->before - (last->to - last->from);
    return op_gaps_apply(s, ticks);
}

void op_gaps_free(op_gaps *s);

#endif

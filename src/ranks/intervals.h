/* Sets of time as sorted, disjoint intervals: what the overlap of
 * communication and computation is measured with. */
#ifndef OPPROF_RANKS_INTERVALS_H
#define OPPROF_RANKS_INTERVALS_H

#include <stddef.h>
#include <stdint.h>

typedef struct op_ival {
    int64_t s, e; /* [s, e) */
} op_ival;

typedef struct op_ivals {
    op_ival *v;
    size_t n, cap;
    int oom;
} op_ivals;

void op_ivals_add(op_ivals *a, int64_t s, int64_t e);
/* Sorts and merges in place: afterwards disjoint and in order. */
void op_ivals_union(op_ivals *a);
/* a minus b (both unions), into out (a union). */
void op_ivals_subtract(const op_ivals *a, const op_ivals *b, op_ivals *out);
/* Length of the intersection of two unions. */
int64_t op_ivals_overlap(const op_ivals *a, const op_ivals *b);
int64_t op_ivals_length(const op_ivals *a);
void op_ivals_free(op_ivals *a);

#endif

/* Growable arrays: one doubling rule and one out-of-memory check for every
 * array the library appends to.
 *
 * op_grow() works on any (pointer, capacity) pair, so arrays that live in
 * wider structs (the trace's events, threads, strings) grow by it without
 * changing shape; OP_VEC(T) is the same thing packaged for new code.
 *
 * Out of memory: op_grow() returns -1 and leaves the array and its capacity
 * as they were, so what was appended so far stays valid and freeable. */
#ifndef OPPROF_COMMON_VEC_H
#define OPPROF_COMMON_VEC_H

#include <stddef.h>
#include <stdlib.h>

/* Room for at least `need` elements of `elem` bytes at *(T **)pp, whose
 * capacity is *cap: doubles from 16 until it fits. 0, or -1 when out of
 * memory or when need * elem does not fit in size_t. pp is the address of
 * the array pointer (a T **, passed as void * so any T will do). */
int op_grow_to(void *pp, size_t *cap, size_t need, size_t elem);

/* Inline, since most calls find room (a streamed trace's end asks once per
 * range for its frame, its event and its place in the order: the call was
 * 2% of that end); op_grow_to grows. */
static inline int op_grow(void *pp, size_t *cap, size_t need, size_t elem)
{
    return need <= *cap ? 0 : op_grow_to(pp, cap, need, elem);
}

/* realloc(p, n) through the test hook below: every allocation of the common
 * containers goes through it. */
void *op_realloc(void *p, size_t n);

/* calloc(n, size) through the same hook. */
void *op_calloc(size_t n, size_t size);

/* Tests: the next `n` allocations through op_realloc succeed and the ones
 * after fail, until called again; n < 0 (the default) never fails. */
void op_alloc_fail_after(long n);

/* A growable array of T: v[0 .. n) in use, cap allocated. Zero-initialised
 * is empty. */
#define OP_VEC(T)        \
    struct {             \
        T *v;            \
        size_t n, cap;   \
    }

/* Room for k more elements: 0 or -1. */
#define op_vec_reserve(a, k) op_grow(&(a)->v, &(a)->cap, (a)->n + (k), sizeof *(a)->v)

/* Appends x: 0 or -1 (out of memory: the array is unchanged). */
#define op_vec_push(a, x) (op_vec_reserve((a), 1) ? -1 : ((a)->v[(a)->n++] = (x), 0))

#define op_vec_free(a) (free((a)->v), (a)->v = NULL, (a)->n = (a)->cap = 0)

#endif

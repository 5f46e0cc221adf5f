/* A stable sort of indices, for orders the analysis floors ask of rows and
 * events alike (the model's events and memory events, the key averages'
 * rows). */
#ifndef OPPROF_COMMON_SORT_H
#define OPPROF_COMMON_SORT_H

#include <stddef.h>
#include <stdint.h>

/* Sorts the indices k[0..n) stably: by before(ctx, a, b), equal ones in
 * their order. A second array of n indices while it runs (a merge sort:
 * qsort is neither stable nor fast enough for millions of events). 0, or -1
 * when out of memory. */
int op_sort_index(uint32_t *k, size_t n, int (*before)(const void *ctx, uint32_t a, uint32_t b), const void *ctx);

#endif

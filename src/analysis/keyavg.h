/* The key averages object shared by the grouping pass, sorting, the table
 * and the CSV/JSON writers. */
#ifndef OPPROF_ANALYSIS_KEYAVG_H
#define OPPROF_ANALYSIS_KEYAVG_H

#include <stddef.h>
#include <stdint.h>

#include "opprof_trace.h"

typedef struct op_avg {
    opprof_avg_row r; /* strings point into the owner's text block */
    uint8_t device;   /* a device activity row: its self time makes "Self CUDA time total" */
    int64_t oncpu_ns, self_oncpu_ns; /* CPU time of the samples inside its ranges (a sampled trace) */
} op_avg;

struct opprof_key_averages {
    op_avg *rows;
    size_t n;
    char *text;               /* every row string, one block */
    int64_t sum_self_cpu_ns;  /* over every host event, also those top_level_only leaves out */
    uint32_t trace_options;   /* the trace's OP_TRACE_* bits: which columns exist */
    uint64_t dropped;         /* events the capture could not keep */
    uint64_t attempted;       /* events it was asked for, 0 when unknown */
    double comp_inside_ns;    /* overhead compensation the sums had (0 0: none) */
    double comp_outside_ns;
    opprof_avg_options opt;
};

/* Sort keys: one comparison of two rows, "a is larger than b". */
typedef int (*op_avg_greater_fn)(const op_avg *a, const op_avg *b);

/* The comparison for a sort key, NULL (and the error detail set) when the
 * key is unknown. */
op_avg_greater_fn op_avg_sort_key(const char *sort_by);

/* Fills perm with 0..n-1 ordered by greater, largest first, stable;
 * greater NULL keeps the rows' order. */
int op_avg_sorted_order(const op_avg *rows, size_t n, op_avg_greater_fn greater, uint32_t *perm);

#endif

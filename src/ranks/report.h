/* The ranks report's storage, shared by its computation (report.c) and its
 * writers (report_write.c). Strings live in the report's own table. */
#ifndef OPPROF_RANKS_REPORT_H
#define OPPROF_RANKS_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "model/strtab.h"
#include "opprof_trace.h"

typedef struct op_coll_rec {
    uint32_t name, coll, group; /* strtab ids */
    int64_t seq, bytes;
    unsigned ranks;
    int64_t straggler, first, last, wait;
} op_coll_rec;

typedef struct op_op_rec {
    uint32_t name;
    unsigned ranks;
    uint64_t calls;
    /* the sum is exact in a long double (64-bit mantissa) even when the
     * ranks' times are each at the limit, so their mean is too */
    long double sum_ns;
    int64_t mean_ns, min_ns, max_ns, min_rank, max_rank;
} op_op_rec;

struct opprof_ranks_report {
    op_strtab str;
    uint32_t backend;        /* strtab id */
    size_t nranks;
    opprof_rank_stats *ranks;
    size_t ncoll;
    op_coll_rec *coll;       /* ordered by (group, seq) */
    int64_t *wait;           /* ncoll x nranks, -1: no part */
    size_t nops;
    op_op_rec *ops;          /* by mean time, largest first */
    int saturated;           /* a sum passed the 64-bit range and is shown at its limit */
};

#endif

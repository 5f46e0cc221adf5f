/* Several ranks' traces taken together (opprof_ranks_merge, the ranks
 * report): which trace is which rank, each rank's clock put on rank 0's,
 * and the collective args the comparisons key on. */
#ifndef OPPROF_RANKS_RANKS_H
#define OPPROF_RANKS_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

typedef struct op_rank_trace {
    const opprof_trace *t;
    int64_t rank;
    opprof_distributed_info d;
    int64_t origin_ns; /* this trace's start_ns 0 on rank 0's clock, ns since the epoch */
} op_rank_trace;

/* The traces in rank order: a trace's rank is its distributedInfo's, or its
 * position when it has none. *out is freed with free(). OPPROF_E_INVAL
 * (with a detail) when two traces claim one rank or none is given;
 * OPPROF_E_RANGE when the ranks' times, each on rank 0's clock, span more
 * than 2^61 ns (OP_TIME_LIMIT_NS), so that every time relative to the
 * earliest (op_ranks_origin) fits as read times do. */
int op_ranks_order(const opprof_trace *const *traces, size_t n, op_rank_trace **out);

/* A time of the trace (start_ns form) on rank 0's clock, ns since the epoch:
 * the trace's wall clock plus the offset measured at (or interpolated to)
 * that moment. */
int64_t op_rank_time(const op_rank_trace *r, int64_t t_ns);

/* The earliest origin among the ranks: the merged trace's zero. */
int64_t op_ranks_origin(const op_rank_trace *r, size_t n);

/* An arg of an event's args text (`"k": v, ...`, as the capture and the
 * reader write it). op_args_int: 1 and *out when key has an integer value.
 * op_args_str: 1 and the string's raw (still escaped) text. */
int op_args_int(const char *args, const char *key, int64_t *out);
int op_args_str(const char *args, const char *key, const char **s, size_t *n);

/* Whether an event is communication: it has a "Collective name" arg (MPI
 * calls recorded by libopprof_mpi, PyTorch's record_param_comms). */
static inline int op_args_is_comm(const char *args)
{
    const char *s;
    size_t n;
    return args && *args && op_args_str(args, "Collective name", &s, &n);
}

#endif

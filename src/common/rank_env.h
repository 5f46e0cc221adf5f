/* The launcher variables that tell a process its rank and world size
 * (torchrun, Open MPI, PMI), read by the environment's configuration and by
 * the trace writer's distributedInfo. */
#ifndef OPPROF_COMMON_RANK_ENV_H
#define OPPROF_COMMON_RANK_ENV_H

#include <stdint.h>

/* Rank from RANK, else OMPI_COMM_WORLD_RANK, else PMI_RANK; world size from
 * WORLD_SIZE, OMPI_COMM_WORLD_SIZE or PMI_SIZE. Each is -1 when unset (or
 * not a whole number). Returns 1 when a rank was found. */
int op_rank_from_env(int64_t *rank, int64_t *world);

/* The rank a trace writer records: *rank and *world come in as the
 * options' (-1: none) and go out as the first known of the options', the
 * trace's (trace_rank, trace_world) and the environment's. */
void op_rank_pick(int64_t *rank, int64_t *world, int64_t trace_rank, int64_t trace_world);

#endif

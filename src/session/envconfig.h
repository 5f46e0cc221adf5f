/* Configuration from the environment (Accelerate's ProfileKwargs), and the
 * launcher variables that tell a process its rank. */
#ifndef OPPROF_SESSION_ENVCONFIG_H
#define OPPROF_SESSION_ENVCONFIG_H

#include <stdint.h>

/* Rank from RANK, else OMPI_COMM_WORLD_RANK, else PMI_RANK; world size from
 * WORLD_SIZE, OMPI_COMM_WORLD_SIZE or PMI_SIZE. Each is -1 when unset (or
 * not a whole number). Returns 1 when a rank was found. */
int op_rank_from_env(int64_t *rank, int64_t *world);

#endif

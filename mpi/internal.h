/* libopprof_mpi's shared pieces: communicators as the wrappers describe
 * them, the table of outstanding requests, datatypes, the clock comparison
 * and the setup done at MPI_Init. Everything here is a user of opprof.h and
 * of MPI's PMPI entry points only. */
#ifndef OPPROF_MPI_INTERNAL_H
#define OPPROF_MPI_INTERNAL_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>

#include "opprof_trace.h"

/* The wrappers (MPI_*) are the library's interface; these are its own. */
#pragma GCC visibility push(hidden)

/* Recording costs one load and one branch while no session records: the
 * wrappers test this before building any args. */
#define OPMPI_RECORDING() OPPROF_ACTIVE_()

/* A communicator as its members agree on it, made at its first recorded
 * use and kept (as an MPI attribute) until it is freed. */
typedef struct opmpi_comm {
    int size, rank;
    const char *name;     /* "Process Group Name": "0" for MPI_COMM_WORLD */
    const char *ranks;    /* "Process Group Ranks": its members' world ranks, "[0, 2]" */
    int *world;           /* world rank of each member */
    _Atomic int64_t seq;  /* collectives begun on it so far */
} opmpi_comm;

/* NULL when it cannot be described (out of memory, an intercommunicator). */
opmpi_comm *opmpi_comm_get(MPI_Comm c);
int opmpi_comm_setup(void);   /* at MPI_Init: the world and the attribute key */
void opmpi_comm_teardown(void);

/* The world rank of member r of c, r itself when unknown (MPI_ANY_SOURCE,
 * MPI_PROC_NULL). */
static inline int opmpi_world_rank(const opmpi_comm *c, int r)
{
    return c && c->world && r >= 0 && r < c->size ? c->world[r] : r;
}

/* "dtype" as PyTorch spells its tensors' types ("Float", "Int", ...), and
 * the size of one element in bytes (0 when MPI cannot say). */
const char *opmpi_dtype_name(MPI_Datatype t);
int64_t opmpi_type_size(MPI_Datatype t);

/* The message as an operator input, for record_shapes: a 1-d tensor of
 * its elements ([count], its dtype), as c10d's ops show their tensors. */
void opmpi_input(opprof_input *in, MPI_Datatype t, int64_t count);

/* Outstanding non-blocking operations, so that the call completing one
 * (MPI_Wait, MPI_Test, ...) can name it. Lock-free; a full table leaves
 * the operation untracked. */
typedef struct opmpi_req_info {
    int64_t id;           /* "Request id": the post's, unique in the process */
    const char *coll;     /* its "Collective name" */
    const char *group;    /* its "Process Group Name" */
    int64_t seq;          /* its "Seq" (collectives), else -1 */
} opmpi_req_info;

int64_t opmpi_req_next_id(void);
void opmpi_req_track(MPI_Request r, const opmpi_req_info *info);
/* 1 and *out filled when r is tracked, else 0. */
int opmpi_req_find(MPI_Request r, opmpi_req_info *out);
void opmpi_req_forget(MPI_Request r);

/* Compares this rank's wall clock with rank 0's over MPI_COMM_WORLD: a
 * collective call. */
int opmpi_clock_measure(opprof_clock_sync *out);

#pragma GCC visibility pop

#endif

/*
 * opprof_mpi.h - libopprof_mpi, MPI calls as operators.
 *
 * Link it before the MPI library (cc app.c -lopprof_mpi -lopprof_trace
 * -lopprof $(mpicc --showme:link)) or preload it (LD_PRELOAD=libopprof_mpi.so): through the
 * standard PMPI interface, each MPI call a session sees becomes an operator
 * named after the function ("MPI_Allreduce", "MPI_Isend", "MPI_Wait", ...)
 * with the args Kineto gives PyTorch's collectives:
 *
 *   "Collective name"      "allreduce", "broadcast", "send", "recv", ...
 *   "In msg nelems", "Out msg nelems", "In msg bytes", "Out msg bytes"
 *   "dtype"                "Float", "Double", "Int", "Long", "Byte", ...
 *   "Group size", "Rank", "Process Group Name", "Process Group Ranks"
 *   "Seq"                  the collective's place on its communicator
 *   "Root", "Src Rank", "Dst Rank", "Tag"      (world ranks)
 *   "Request id"           a non-blocking call's, repeated by MPI_Wait, ...
 *
 * At MPI_Init it sets the process's distributedInfo (backend "mpi", rank,
 * world size) with the clock offset to rank 0, and measures the offset again
 * at MPI_Finalize (section 14 of opprof.h). When the environment asks for
 * profiling (OPPROF_OUTPUT_TRACE_DIR, OPPROF_CONFIG, ... section 10) and no
 * session is active, it starts one at MPI_Init and stops it at MPI_Finalize,
 * each rank writing profile_{rank}.json:
 *
 *   mpirun -x OPPROF_OUTPUT_TRACE_DIR=traces -x LD_PRELOAD=libopprof_mpi.so -np 4 ./app
 *   opprof merge traces/profile_*.json -o merged.json
 */
#ifndef OPPROF_MPI_H
#define OPPROF_MPI_H

#include "opprof_trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Measures the clock offset to rank 0 again, now, as the end measurement of
 * the traces made from here on: a collective call on MPI_COMM_WORLD. For a
 * program that stops its session before MPI_Finalize. */
OPPROF_API int opprof_mpi_clock_sync(void);

#ifdef __cplusplus
}
#endif

#endif /* OPPROF_MPI_H */

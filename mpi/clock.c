/* The clock comparison with rank 0: round trips over a private copy of
 * MPI_COMM_WORLD, the estimate NTP makes. Rank r sends at t1 (its clock),
 * rank 0 answers with its clock t0, the answer arrives at t2; if the two
 * legs took equally long, rank 0's clock read t0 at r's (t1 + t2) / 2, and
 * however unequal they were the truth lies within (t2 - t1) / 2 of that.
 * The fastest of ROUNDS exchanges gives the tightest bound. Rank 0 serves
 * the ranks one after another: the whole costs world_size * ROUNDS round
 * trips, a few milliseconds at most. */
#include <time.h>

#include "internal.h"

#define ROUNDS 24
#define TAG 0x5eed

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int opmpi_clock_measure(opprof_clock_sync *out)
{
    MPI_Comm comm;
    int rank, size;
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) return -1;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    int64_t best_rtt = INT64_MAX, offset = 0, at = wall_ns();
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            for (int k = 0; k < ROUNDS; k++) {
                int64_t t0;
                PMPI_Recv(&t0, 1, MPI_INT64_T, r, TAG, comm, MPI_STATUS_IGNORE);
                t0 = wall_ns();
                PMPI_Send(&t0, 1, MPI_INT64_T, r, TAG, comm);
            }
        }
        best_rtt = 0;
    } else {
        for (int k = 0; k < ROUNDS; k++) {
            int64_t t1 = wall_ns(), t0 = 0;
            PMPI_Send(&t1, 1, MPI_INT64_T, 0, TAG, comm);
            PMPI_Recv(&t0, 1, MPI_INT64_T, 0, TAG, comm, MPI_STATUS_IGNORE);
            int64_t t2 = wall_ns();
            if (t2 - t1 < best_rtt) {
                best_rtt = t2 - t1;
                at = t1 + (t2 - t1) / 2;
                offset = t0 - at;
            }
        }
    }
    PMPI_Comm_free(&comm);
    out->valid = 1;
    out->at_ns = at;
    out->offset_ns = offset;
    out->uncertainty_ns = (best_rtt + 1) / 2;
    return 0;
}

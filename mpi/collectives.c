/* Collectives, blocking and non-blocking, recorded as operators named after
 * the MPI function, with Kineto's collective args (record.h). Counts follow
 * PyTorch's record_param_comms: "In msg nelems" is what this rank puts in,
 * "Out msg nelems" what it gets out; an MPI_IN_PLACE input counts as the
 * output buffer it is. */
#include "record.h"

OPMPI_SITE(s_allreduce, "MPI_Allreduce");
OPMPI_SITE(s_reduce, "MPI_Reduce");
OPMPI_SITE(s_bcast, "MPI_Bcast");
OPMPI_SITE(s_allgather, "MPI_Allgather");
OPMPI_SITE(s_gather, "MPI_Gather");
OPMPI_SITE(s_scatter, "MPI_Scatter");
OPMPI_SITE(s_reduce_scatter, "MPI_Reduce_scatter");
OPMPI_SITE(s_reduce_scatter_block, "MPI_Reduce_scatter_block");
OPMPI_SITE(s_alltoall, "MPI_Alltoall");
OPMPI_SITE(s_barrier, "MPI_Barrier");
OPMPI_SITE(s_iallreduce, "MPI_Iallreduce");
OPMPI_SITE(s_ireduce, "MPI_Ireduce");
OPMPI_SITE(s_ibcast, "MPI_Ibcast");
OPMPI_SITE(s_iallgather, "MPI_Iallgather");
OPMPI_SITE(s_ireduce_scatter, "MPI_Ireduce_scatter");
OPMPI_SITE(s_ireduce_scatter_block, "MPI_Ireduce_scatter_block");
OPMPI_SITE(s_ialltoall, "MPI_Ialltoall");
OPMPI_SITE(s_ibarrier, "MPI_Ibarrier");

static int comm_size(MPI_Comm comm)
{
    int n = 0;
    PMPI_Comm_size(comm, &n);
    return n;
}

static int comm_rank(MPI_Comm comm)
{
    int r = 0;
    PMPI_Comm_rank(comm, &r);
    return r;
}

static int64_t sum_counts(const int *counts, MPI_Comm comm)
{
    int64_t s = 0;
    for (int i = 0, n = comm_size(comm); i < n; i++) s += counts[i];
    return s;
}

int MPI_Allreduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
    OPMPI_COLL(s_allreduce, "allreduce", comm, n, t, n, t, -1, PMPI_Allreduce(sb, rb, n, t, op, comm));
}

int MPI_Reduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm)
{
    int out = comm_rank(comm) == root ? n : 0;
    OPMPI_COLL(s_reduce, "reduce", comm, n, t, out, t, root, PMPI_Reduce(sb, rb, n, t, op, root, comm));
}

int MPI_Bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm)
{
    OPMPI_COLL(s_bcast, "broadcast", comm, n, t, n, t, root, PMPI_Bcast(buf, n, t, root, comm));
}

int MPI_Allgather(const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt, MPI_Comm comm)
{
    int in_place = sb == MPI_IN_PLACE;
    OPMPI_COLL(s_allgather, "allgather", comm, in_place ? rn : sn, in_place ? rt : st,
               (int64_t)rn * comm_size(comm), rt, -1, PMPI_Allgather(sb, sn, st, rb, rn, rt, comm));
}

int MPI_Gather(const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt, int root,
               MPI_Comm comm)
{
    int is_root = comm_rank(comm) == root, in_place = sb == MPI_IN_PLACE;
    OPMPI_COLL(s_gather, "gather", comm, in_place ? rn : sn, in_place ? rt : st,
               is_root ? (int64_t)rn * comm_size(comm) : 0, is_root ? rt : st, root,
               PMPI_Gather(sb, sn, st, rb, rn, rt, root, comm));
}

int MPI_Scatter(const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt, int root,
                MPI_Comm comm)
{
    int is_root = comm_rank(comm) == root;
    OPMPI_COLL(s_scatter, "scatter", comm, is_root ? (int64_t)sn * comm_size(comm) : 0, is_root ? st : rt,
               rb == MPI_IN_PLACE ? sn : rn, rb == MPI_IN_PLACE ? st : rt, root,
               PMPI_Scatter(sb, sn, st, rb, rn, rt, root, comm));
}

int MPI_Reduce_scatter(const void *sb, void *rb, const int rcounts[], MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
    OPMPI_COLL(s_reduce_scatter, "reduce_scatter", comm, sum_counts(rcounts, comm), t, rcounts[comm_rank(comm)], t,
               -1, PMPI_Reduce_scatter(sb, rb, rcounts, t, op, comm));
}

int MPI_Reduce_scatter_block(const void *sb, void *rb, int rn, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
    OPMPI_COLL(s_reduce_scatter_block, "reduce_scatter", comm, (int64_t)rn * comm_size(comm), t, rn, t, -1,
               PMPI_Reduce_scatter_block(sb, rb, rn, t, op, comm));
}

int MPI_Alltoall(const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt, MPI_Comm comm)
{
    int in_place = sb == MPI_IN_PLACE;
    int64_t size = comm_size(comm);
    OPMPI_COLL(s_alltoall, "all_to_all", comm, (in_place ? rn : sn) * size, in_place ? rt : st, rn * size, rt, -1,
               PMPI_Alltoall(sb, sn, st, rb, rn, rt, comm));
}

int MPI_Barrier(MPI_Comm comm)
{
    OPMPI_COLL(s_barrier, "barrier", comm, 0, MPI_DATATYPE_NULL, 0, MPI_DATATYPE_NULL, -1, PMPI_Barrier(comm));
}

int MPI_Iallreduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    OPMPI_ICOLL(s_iallreduce, "allreduce", comm, n, t, n, t, -1, req, PMPI_Iallreduce(sb, rb, n, t, op, comm, req));
}

int MPI_Ireduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm,
                MPI_Request *req)
{
    int out = comm_rank(comm) == root ? n : 0;
    OPMPI_ICOLL(s_ireduce, "reduce", comm, n, t, out, t, root, req, PMPI_Ireduce(sb, rb, n, t, op, root, comm, req));
}

int MPI_Ibcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm, MPI_Request *req)
{
    OPMPI_ICOLL(s_ibcast, "broadcast", comm, n, t, n, t, root, req, PMPI_Ibcast(buf, n, t, root, comm, req));
}

int MPI_Iallgather(const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt, MPI_Comm comm,
                   MPI_Request *req)
{
    int in_place = sb == MPI_IN_PLACE;
    OPMPI_ICOLL(s_iallgather, "allgather", comm, in_place ? rn : sn, in_place ? rt : st,
                (int64_t)rn * comm_size(comm), rt, -1, req, PMPI_Iallgather(sb, sn, st, rb, rn, rt, comm, req));
}

int MPI_Ireduce_scatter(const void *sb, void *rb, const int rcounts[], MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                        MPI_Request *req)
{
    OPMPI_ICOLL(s_ireduce_scatter, "reduce_scatter", comm, sum_counts(rcounts, comm), t, rcounts[comm_rank(comm)],
                t, -1, req, PMPI_Ireduce_scatter(sb, rb, rcounts, t, op, comm, req));
}

int MPI_Ireduce_scatter_block(const void *sb, void *rb, int rn, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                              MPI_Request *req)
{
    OPMPI_ICOLL(s_ireduce_scatter_block, "reduce_scatter", comm, (int64_t)rn * comm_size(comm), t, rn, t, -1, req,
                PMPI_Ireduce_scatter_block(sb, rb, rn, t, op, comm, req));
}

int MPI_Ialltoall(const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt, MPI_Comm comm,
                  MPI_Request *req)
{
    int in_place = sb == MPI_IN_PLACE;
    int64_t size = comm_size(comm);
    OPMPI_ICOLL(s_ialltoall, "all_to_all", comm, (in_place ? rn : sn) * size, in_place ? rt : st, rn * size, rt, -1,
                req, PMPI_Ialltoall(sb, sn, st, rb, rn, rt, comm, req));
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
    OPMPI_ICOLL(s_ibarrier, "barrier", comm, 0, MPI_DATATYPE_NULL, 0, MPI_DATATYPE_NULL, -1, req,
                PMPI_Ibarrier(comm, req));
}

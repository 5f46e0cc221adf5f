/* How a wrapper records an MPI call: the args Kineto gives PyTorch's
 * collectives ("Collective name", "In msg nelems", "Out msg nelems",
 * "dtype", "Group size", "Process Group Name", "Process Group Ranks",
 * "Seq", ...), byte counts beside the element counts, and for non-blocking
 * calls the "Request id" that the completing call repeats. */
#ifndef OPPROF_MPI_RECORD_H
#define OPPROF_MPI_RECORD_H

#include "internal.h"

/* Keys: one static copy per translation unit, compared by address only
 * within the wrapper that gives them. */
static const char K_COLL[] = "Collective name", K_IN_N[] = "In msg nelems", K_OUT_N[] = "Out msg nelems",
                  K_IN_B[] = "In msg bytes", K_OUT_B[] = "Out msg bytes", K_DTYPE[] = "dtype",
                  K_SIZE[] = "Group size", K_RANK[] = "Rank", K_PG[] = "Process Group Name",
                  K_PG_RANKS[] = "Process Group Ranks", K_SEQ[] = "Seq", K_ROOT[] = "Root",
                  K_REQ[] = "Request id", K_SRC[] = "Src Rank", K_DST[] = "Dst Rank", K_TAG[] = "Tag",
                  K_DONE[] = "Completed";

typedef struct opmpi_args {
    opprof_arg a[OPPROF_MAX_ARGS];
    unsigned n;
    opprof_input in; /* point-to-point: the message */
} opmpi_args;

static inline void arg_i(opmpi_args *x, const char *k, int64_t v)
{
    x->a[x->n++] = opprof_arg_int(k, v);
}

static inline void arg_s(opmpi_args *x, const char *k, const char *v)
{
    x->a[x->n++] = opprof_arg_str(k, v);
}

/* One collective call: its communicator and its place in the sequence of
 * collectives on it, counted whether or not a session records, so that the
 * k-th collective of a communicator is the k-th on every member. */
typedef struct opmpi_coll {
    opmpi_comm *c;
    int64_t seq;
    int64_t req_id;
    const char *name;
} opmpi_coll;

/* Returns 1 when the call is to be recorded. */
static inline int coll_enter(opmpi_coll *k, MPI_Comm comm, const char *name)
{
    k->c = opmpi_comm_get(comm);
    k->seq = k->c ? atomic_fetch_add_explicit(&k->c->seq, 1, memory_order_relaxed) + 1 : -1;
    k->req_id = 0;
    k->name = name;
    return OPMPI_RECORDING();
}

static inline void coll_begin(opmpi_coll *k, const opprof_site *site, int64_t in_n, MPI_Datatype tin,
                              int64_t out_n, MPI_Datatype tout, int root, int async)
{
    opmpi_args x;
    x.n = 0;
    int64_t s_in = opmpi_type_size(tin), s_out = tout == tin ? s_in : opmpi_type_size(tout);
    arg_s(&x, K_COLL, k->name);
    arg_i(&x, K_IN_N, in_n);
    arg_i(&x, K_OUT_N, out_n);
    arg_i(&x, K_IN_B, in_n * s_in);
    arg_i(&x, K_OUT_B, out_n * s_out);
    arg_s(&x, K_DTYPE, opmpi_dtype_name(in_n ? tin : tout));
    if (k->c) {
        arg_i(&x, K_SIZE, k->c->size);
        arg_i(&x, K_RANK, opmpi_world_rank(k->c, k->c->rank));
        arg_s(&x, K_PG, k->c->name);
        arg_s(&x, K_PG_RANKS, k->c->ranks);
        arg_i(&x, K_SEQ, k->seq);
    }
    if (root >= 0) arg_i(&x, K_ROOT, opmpi_world_rank(k->c, root));
    if (async) {
        k->req_id = opmpi_req_next_id();
        arg_i(&x, K_REQ, k->req_id);
    }
    opprof_input in;
    opmpi_input(&in, in_n ? tin : tout, in_n ? in_n : out_n);
    opprof_begin_inputs_args(site, &in, tin == MPI_DATATYPE_NULL ? 0 : 1, x.a, x.n);
}

/* After a non-blocking call returned its request. */
static inline void coll_track(const opmpi_coll *k, MPI_Request r)
{
    if (!k->req_id) return;
    opmpi_req_info info = {k->req_id, k->name, k->c ? k->c->name : "", k->seq};
    opmpi_req_track(r, &info);
}

/* A blocking collective: CALL is the PMPI call's expression. */
#define OPMPI_COLL(site, name, comm, in_n, tin, out_n, tout, root, CALL)                                         \
    do {                                                                                                       \
        opmpi_coll k_;                                                                                         \
        if (!coll_enter(&k_, (comm), (name))) return (CALL);                                                   \
        coll_begin(&k_, &(site), (in_n), (tin), (out_n), (tout), (root), 0);                                   \
        int rc_ = (CALL);                                                                                      \
        opprof_end(&(site));                                                                                   \
        return rc_;                                                                                            \
    } while (0)

/* A non-blocking one, whose request *req the completing call will name. */
#define OPMPI_ICOLL(site, name, comm, in_n, tin, out_n, tout, root, req, CALL)                                   \
    do {                                                                                                       \
        opmpi_coll k_;                                                                                         \
        if (!coll_enter(&k_, (comm), (name))) return (CALL);                                                   \
        coll_begin(&k_, &(site), (in_n), (tin), (out_n), (tout), (root), 1);                                   \
        int rc_ = (CALL);                                                                                      \
        opprof_end(&(site));                                                                                   \
        if (rc_ == MPI_SUCCESS) coll_track(&k_, *(req));                                                       \
        return rc_;                                                                                            \
    } while (0)

#define OPMPI_SITE(var, name) static const opprof_site var = OPPROF_SITE_INIT(name, OPPROF_CAT_CPU_OP, NULL)

#endif

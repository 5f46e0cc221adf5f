/* Point-to-point calls and the calls that complete non-blocking operations.
 * A completing call carries the "Request id", "Collective name",
 * "Process Group Name" and "Seq" of the operation it completes, so that
 * the operation's whole span, post to completion, is known (opprof's rank
 * report measures communication overlapping computation with it).
 * MPI_Waitall completes its tracked requests one at a time, each in an
 * MPI_Wait range of its own inside the MPI_Waitall range (the standard
 * defines Waitall as that); MPI_Waitany and MPI_Testany name the one that
 * completed when they return. MPI_Waitsome, MPI_Testsome and MPI_Testall
 * are recorded without naming what they completed. */
#include <string.h>

#include "record.h"

OPMPI_SITE(s_send, "MPI_Send");
OPMPI_SITE(s_ssend, "MPI_Ssend");
OPMPI_SITE(s_recv, "MPI_Recv");
OPMPI_SITE(s_sendrecv, "MPI_Sendrecv");
OPMPI_SITE(s_isend, "MPI_Isend");
OPMPI_SITE(s_irecv, "MPI_Irecv");
OPMPI_SITE(s_wait, "MPI_Wait");
OPMPI_SITE(s_waitall, "MPI_Waitall");
OPMPI_SITE(s_waitany, "MPI_Waitany");
OPMPI_SITE(s_waitsome, "MPI_Waitsome");
OPMPI_SITE(s_test, "MPI_Test");
OPMPI_SITE(s_testall, "MPI_Testall");
OPMPI_SITE(s_testany, "MPI_Testany");
OPMPI_SITE(s_testsome, "MPI_Testsome");

/* Requests remembered across a call that may consume them: larger arrays
 * are completed without naming what completed. */
#define MAX_NAMED 64

static void p2p_args(opmpi_args *x, const char *coll, MPI_Comm comm, int n, MPI_Datatype t, int peer, int tag,
                     int sending)
{
    opmpi_input(&x->in, t, n);
    opmpi_comm *c = opmpi_comm_get(comm);
    int64_t bytes = (int64_t)n * opmpi_type_size(t);
    x->n = 0;
    arg_s(x, K_COLL, coll);
    arg_i(x, K_IN_N, sending ? n : 0);
    arg_i(x, K_OUT_N, sending ? 0 : n);
    arg_i(x, K_IN_B, sending ? bytes : 0);
    arg_i(x, K_OUT_B, sending ? 0 : bytes);
    arg_s(x, K_DTYPE, opmpi_dtype_name(t));
    if (c) {
        arg_i(x, K_SIZE, c->size);
        arg_s(x, K_PG, c->name);
    }
    arg_i(x, sending ? K_DST : K_SRC, opmpi_world_rank(c, peer));
    arg_i(x, K_TAG, tag);
}

/* What a receive got: its source, tag and size replace the posted ones. */
static void recv_end(const opprof_site *site, MPI_Comm comm, MPI_Datatype t, const MPI_Status *st)
{
    int n = 0;
    PMPI_Get_count(st, t, &n);
    opprof_arg e[4] = {
        opprof_arg_int(K_SRC, opmpi_world_rank(opmpi_comm_get(comm), st->MPI_SOURCE)),
        opprof_arg_int(K_TAG, st->MPI_TAG),
        opprof_arg_int(K_OUT_N, n),
        opprof_arg_int(K_OUT_B, (int64_t)n * opmpi_type_size(t)),
    };
    opprof_end_args(site, e, n == MPI_UNDEFINED ? 2 : 4);
}

int MPI_Send(const void *buf, int n, MPI_Datatype t, int dest, int tag, MPI_Comm comm)
{
    if (!OPMPI_RECORDING()) return PMPI_Send(buf, n, t, dest, tag, comm);
    opmpi_args x;
    p2p_args(&x, "send", comm, n, t, dest, tag, 1);
    opprof_begin_inputs_args(&s_send, &x.in, 1, x.a, x.n);
    int rc = PMPI_Send(buf, n, t, dest, tag, comm);
    opprof_end(&s_send);
    return rc;
}

int MPI_Ssend(const void *buf, int n, MPI_Datatype t, int dest, int tag, MPI_Comm comm)
{
    if (!OPMPI_RECORDING()) return PMPI_Ssend(buf, n, t, dest, tag, comm);
    opmpi_args x;
    p2p_args(&x, "send", comm, n, t, dest, tag, 1);
    opprof_begin_inputs_args(&s_ssend, &x.in, 1, x.a, x.n);
    int rc = PMPI_Ssend(buf, n, t, dest, tag, comm);
    opprof_end(&s_ssend);
    return rc;
}

int MPI_Recv(void *buf, int n, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Status *status)
{
    if (!OPMPI_RECORDING()) return PMPI_Recv(buf, n, t, src, tag, comm, status);
    opmpi_args x;
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    p2p_args(&x, "recv", comm, n, t, src, tag, 0);
    opprof_begin_inputs_args(&s_recv, &x.in, 1, x.a, x.n);
    int rc = PMPI_Recv(buf, n, t, src, tag, comm, status);
    if (rc == MPI_SUCCESS) recv_end(&s_recv, comm, t, status);
    else opprof_end(&s_recv);
    return rc;
}

int MPI_Sendrecv(const void *sb, int sn, MPI_Datatype st, int dest, int stag, void *rb, int rn, MPI_Datatype rt,
                 int src, int rtag, MPI_Comm comm, MPI_Status *status)
{
    if (!OPMPI_RECORDING()) return PMPI_Sendrecv(sb, sn, st, dest, stag, rb, rn, rt, src, rtag, comm, status);
    opmpi_args x;
    p2p_args(&x, "sendrecv", comm, rn, rt, src, rtag, 0);
    opmpi_comm *c = opmpi_comm_get(comm);
    x.a[1] = opprof_arg_int(K_IN_N, sn);
    x.a[3] = opprof_arg_int(K_IN_B, (int64_t)sn * opmpi_type_size(st));
    arg_i(&x, K_DST, opmpi_world_rank(c, dest));
    opprof_begin_inputs_args(&s_sendrecv, &x.in, 1, x.a, x.n);
    int rc = PMPI_Sendrecv(sb, sn, st, dest, stag, rb, rn, rt, src, rtag, comm, status);
    opprof_end(&s_sendrecv);
    return rc;
}

/* A non-blocking post: its "Request id" in the args and in the table. */
static int64_t post_begin(const opprof_site *site, opmpi_args *x)
{
    int64_t id = opmpi_req_next_id();
    arg_i(x, K_REQ, id);
    opprof_begin_inputs_args(site, &x->in, 1, x->a, x->n);
    return id;
}

static void post_end(const opprof_site *site, int rc, const char *coll, MPI_Comm comm, int64_t id, MPI_Request r)
{
    opprof_end(site);
    if (rc != MPI_SUCCESS) return;
    opmpi_comm *c = opmpi_comm_get(comm);
    opmpi_req_info info = {id, coll, c ? c->name : "", -1};
    opmpi_req_track(r, &info);
}

int MPI_Isend(const void *buf, int n, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    if (!OPMPI_RECORDING()) return PMPI_Isend(buf, n, t, dest, tag, comm, req);
    opmpi_args x;
    p2p_args(&x, "send", comm, n, t, dest, tag, 1);
    int64_t id = post_begin(&s_isend, &x);
    int rc = PMPI_Isend(buf, n, t, dest, tag, comm, req);
    post_end(&s_isend, rc, "send", comm, id, *req);
    return rc;
}

int MPI_Irecv(void *buf, int n, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Request *req)
{
    if (!OPMPI_RECORDING()) return PMPI_Irecv(buf, n, t, src, tag, comm, req);
    opmpi_args x;
    p2p_args(&x, "recv", comm, n, t, src, tag, 0);
    int64_t id = post_begin(&s_irecv, &x);
    int rc = PMPI_Irecv(buf, n, t, src, tag, comm, req);
    post_end(&s_irecv, rc, "recv", comm, id, *req);
    return rc;
}

/* The args of a completing call, naming info's operation (none: -1, "").
 * "Completed" marks it as a completing call; MPI_Test and the like give 0
 * until they return having completed it. */
static unsigned completion_args(opprof_arg *a, const opmpi_req_info *info, int done)
{
    a[0] = opprof_arg_int(K_REQ, info ? info->id : -1);
    a[1] = opprof_arg_str(K_COLL, info ? info->coll : "");
    a[2] = opprof_arg_str(K_PG, info ? info->group : "");
    a[3] = opprof_arg_int(K_SEQ, info ? info->seq : -1);
    a[4] = opprof_arg_int(K_DONE, done);
    return 5;
}

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    if (!OPMPI_RECORDING()) {
        MPI_Request r = *req;
        int rc = PMPI_Wait(req, status);
        opmpi_req_forget(r); /* posted while a session recorded */
        return rc;
    }
    MPI_Request r = *req;
    opmpi_req_info info;
    int known = opmpi_req_find(r, &info);
    opprof_arg a[5];
    opprof_begin_args(&s_wait, a, completion_args(a, known ? &info : NULL, 1));
    int rc = PMPI_Wait(req, status);
    opprof_end(&s_wait);
    if (known) opmpi_req_forget(r);
    return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    MPI_Request r = *req;
    if (!OPMPI_RECORDING()) {
        int rc = PMPI_Test(req, flag, status);
        if (rc == MPI_SUCCESS && *flag) opmpi_req_forget(r);
        return rc;
    }
    opmpi_req_info info;
    int known = opmpi_req_find(r, &info);
    opprof_arg a[5];
    opprof_begin_args(&s_test, a, completion_args(a, known ? &info : NULL, 0));
    int rc = PMPI_Test(req, flag, status);
    opprof_arg done = opprof_arg_int(K_DONE, rc == MPI_SUCCESS && *flag);
    opprof_end_args(&s_test, &done, 1);
    if (rc == MPI_SUCCESS && *flag) opmpi_req_forget(r);
    return rc;
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[])
{
    if (!OPMPI_RECORDING() || n > MAX_NAMED) {
        MPI_Request saved[MAX_NAMED];
        int keep = n <= MAX_NAMED;
        if (keep) memcpy(saved, reqs, (size_t)n * sizeof *reqs);
        int recording = OPMPI_RECORDING();
        opprof_arg a[5];
        if (recording) opprof_begin_args(&s_waitall, a, completion_args(a, NULL, 1));
        int rc = PMPI_Waitall(n, reqs, statuses);
        if (recording) opprof_end(&s_waitall);
        for (int i = 0; keep && i < n; i++) opmpi_req_forget(saved[i]);
        return rc;
    }
    opprof_arg wa[5];
    opprof_begin_args(&s_waitall, wa, completion_args(wa, NULL, 1));
    int rc = MPI_SUCCESS;
    /* The tracked ones first, each in its own MPI_Wait. Their statuses are
     * kept aside: the final PMPI_Waitall sets a null request's status to
     * empty. */
    MPI_Status done[MAX_NAMED];
    int named[MAX_NAMED] = {0};
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        opmpi_req_info info;
        named[i] = opmpi_req_find(reqs[i], &info);
        if (!named[i]) continue;
        MPI_Request r = reqs[i];
        opprof_arg a[5];
        opprof_begin_args(&s_wait, a, completion_args(a, &info, 1));
        rc = PMPI_Wait(&reqs[i], statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &done[i]);
        opprof_end(&s_wait);
        opmpi_req_forget(r);
    }
    if (rc == MPI_SUCCESS) rc = PMPI_Waitall(n, reqs, statuses);
    if (statuses != MPI_STATUSES_IGNORE)
        for (int i = 0; i < n; i++)
            if (named[i]) statuses[i] = done[i];
    opprof_end(&s_waitall);
    return rc;
}

/* Waitany and Testany: placeholders at the start, the completed operation's
 * names at the end. */
static int any_call(const opprof_site *site, int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *status,
                    int testing)
{
    MPI_Request saved[MAX_NAMED];
    int keep = n <= MAX_NAMED;
    if (keep) memcpy(saved, reqs, (size_t)n * sizeof *reqs);
    int recording = OPMPI_RECORDING();
    opprof_arg a[5];
    unsigned na = completion_args(a, NULL, !testing);
    if (recording) opprof_begin_args(site, a, na);
    int rc = testing ? PMPI_Testany(n, reqs, idx, flag, status) : PMPI_Waitany(n, reqs, idx, status);
    int completed = rc == MPI_SUCCESS && (!testing || *flag) && *idx != MPI_UNDEFINED && keep;
    opmpi_req_info info;
    int known = completed && opmpi_req_find(saved[*idx], &info);
    if (recording) {
        na = completion_args(a, known ? &info : NULL, rc == MPI_SUCCESS && (!testing || *flag));
        opprof_end_args(site, a, na);
    }
    if (known) opmpi_req_forget(saved[*idx]);
    return rc;
}

int MPI_Waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *status)
{
    return any_call(&s_waitany, n, reqs, idx, NULL, status, 0);
}

int MPI_Testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *status)
{
    return any_call(&s_testany, n, reqs, idx, flag, status, 1);
}

/* Testall, Waitsome, Testsome: recorded, and what they completed forgotten. */
int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    MPI_Request saved[MAX_NAMED];
    int keep = n <= MAX_NAMED, recording = OPMPI_RECORDING();
    if (keep) memcpy(saved, reqs, (size_t)n * sizeof *reqs);
    opprof_arg a[5];
    if (recording) opprof_begin_args(&s_testall, a, completion_args(a, NULL, 0));
    int rc = PMPI_Testall(n, reqs, flag, statuses);
    int done = rc == MPI_SUCCESS && *flag;
    a[4] = opprof_arg_int(K_DONE, done);
    if (recording) opprof_end_args(&s_testall, &a[4], 1);
    for (int i = 0; keep && done && i < n; i++) opmpi_req_forget(saved[i]);
    return rc;
}

static int some_call(const opprof_site *site, int n, MPI_Request reqs[], int *outcount, int idx[],
                     MPI_Status statuses[], int testing)
{
    MPI_Request saved[MAX_NAMED];
    int keep = n <= MAX_NAMED, recording = OPMPI_RECORDING();
    if (keep) memcpy(saved, reqs, (size_t)n * sizeof *reqs);
    opprof_arg a[5];
    if (recording) opprof_begin_args(site, a, completion_args(a, NULL, !testing));
    int rc = testing ? PMPI_Testsome(n, reqs, outcount, idx, statuses) : PMPI_Waitsome(n, reqs, outcount, idx, statuses);
    if (recording) opprof_end(site);
    if (keep && rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED)
        for (int i = 0; i < *outcount; i++) opmpi_req_forget(saved[idx[i]]);
    return rc;
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status statuses[])
{
    return some_call(&s_waitsome, n, reqs, outcount, idx, statuses, 0);
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status statuses[])
{
    return some_call(&s_testsome, n, reqs, outcount, idx, statuses, 1);
}

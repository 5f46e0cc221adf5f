/* oneDNN engine, stream and primitive execution. Reorders between plain and
 * blocked layouts are compiled with their primitive, and a weight's blocked
 * copy stays on its tensor until the tensor changes (version), so repeated
 * inference pays for each weight's reorder once. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static dnnl_engine_t g_engine;

static void init_engine(void)
{
    if (dnnl_engine_create(&g_engine, dnnl_cpu, 0) != dnnl_success) g_engine = NULL;
}

dnnl_engine_t op_nn_engine(void)
{
    pthread_once(&g_once, init_engine);
    return g_engine;
}

/* A stream per thread: oneDNN streams are not to be shared between threads
 * that execute at the same time. */
static _Thread_local dnnl_stream_t tl_stream;
static pthread_key_t g_stream_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

static void stream_destroy(void *s)
{
    dnnl_stream_destroy((dnnl_stream_t)s);
}

static void make_key(void)
{
    pthread_key_create(&g_stream_key, stream_destroy);
}

static dnnl_stream_t stream(void)
{
    if (tl_stream) return tl_stream;
    dnnl_engine_t e = op_nn_engine();
    if (!e || dnnl_stream_create(&tl_stream, e, dnnl_stream_default_flags) != dnnl_success) return NULL;
    pthread_once(&g_key_once, make_key);
    pthread_setspecific(g_stream_key, tl_stream);
    return tl_stream;
}

void op_nn_md_plain(dnnl_memory_desc_t *md, int ndim, const int64_t *dims)
{
    dnnl_dims_t d;
    for (int i = 0; i < ndim; i++) d[i] = dims[i];
    static const dnnl_format_tag_t tags[] = {dnnl_format_tag_undef, dnnl_a, dnnl_ab, dnnl_abc, dnnl_abcd, dnnl_abcde};
    dnnl_memory_desc_init_by_tag(md, ndim, d, dnnl_f32, tags[ndim]);
}

static dnnl_primitive_t make_reorder(const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to)
{
    dnnl_primitive_desc_t rpd;
    dnnl_primitive_t r = NULL;
    dnnl_engine_t e = op_nn_engine();
    if (dnnl_reorder_primitive_desc_create(&rpd, from, e, to, e, NULL) != dnnl_success) return NULL;
    if (dnnl_primitive_create(&r, rpd) != dnnl_success) r = NULL;
    dnnl_primitive_desc_destroy(rpd);
    return r;
}

void op_nn_prim_destroy(op_nn_prim *p)
{
    for (int i = 0; i < p->nargs; i++)
        if (p->args[i].reorder) dnnl_primitive_destroy(p->args[i].reorder);
    if (p->prim) dnnl_primitive_destroy(p->prim);
    if (p->pd) dnnl_primitive_desc_destroy(p->pd);
    memset(p, 0, sizeof *p);
}

int op_nn_prim_init(op_nn_prim *p, dnnl_primitive_desc_t pd, int nargs, const int *arg_ids,
                    const dnnl_memory_desc_t *users, const int *outs, const int *keep)
{
    memset(p, 0, sizeof *p);
    p->pd = pd;
    if (dnnl_primitive_create(&p->prim, pd) != dnnl_success) goto fail;
    p->nargs = nargs;
    for (int i = 0; i < nargs; i++) {
        op_nn_prim_arg *a = &p->args[i];
        a->arg = arg_ids[i];
        a->out = outs[i];
        a->keep = keep ? keep[i] : 0;
        a->user = users[i];
        const dnnl_memory_desc_t *w = dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, a->arg);
        if (!w) goto fail;
        if (w->ndims == 0) { /* not used by this primitive (a bias it has not got) */
            a->want = a->user;
            continue;
        }
        a->want = *w;
        a->want_bytes = dnnl_memory_desc_get_size(w);
        if (!dnnl_memory_desc_equal(&a->user, &a->want)) {
            a->reorder = a->out ? make_reorder(&a->want, &a->user) : make_reorder(&a->user, &a->want);
            if (!a->reorder) goto fail;
        }
    }
    return OPPROF_OK;
fail:
    op_nn_prim_destroy(p);
    return OPPROF_E_UNSUPPORTED;
}

/* Converted copies of one tensor, one per layout asked for (a weight is
 * wanted in one layout by the forward and in another by the backward). */
enum { PACKED_SLOTS = 2 };
typedef struct packed {
    struct {
        dnnl_memory_desc_t md;
        void *buf;
        size_t bytes;
        uint64_t version;
        int valid;
    } s[PACKED_SLOTS];
    int next;
} packed;

void op_nn_packed_free(tensor *t)
{
    packed *pk = t->packed;
    if (!pk) return;
    for (int i = 0; i < PACKED_SLOTS; i++) op_nn_free(pk->s[i].buf, pk->s[i].bytes);
    free(pk);
    t->packed = NULL;
}

static int run_reorder(dnnl_primitive_t r, const dnnl_memory_desc_t *from_md, void *from,
                       const dnnl_memory_desc_t *to_md, void *to, dnnl_stream_t s)
{
    dnnl_engine_t e = op_nn_engine();
    dnnl_memory_t a = NULL, b = NULL;
    int rc = OPPROF_E_NOMEM;
    if (dnnl_memory_create(&a, from_md, e, from) == dnnl_success &&
        dnnl_memory_create(&b, to_md, e, to) == dnnl_success) {
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, a}, {DNNL_ARG_TO, b}};
        rc = dnnl_primitive_execute(r, s, 2, args) == dnnl_success ? OPPROF_OK : OPPROF_E_UNSUPPORTED;
    }
    if (a) dnnl_memory_destroy(a);
    if (b) dnnl_memory_destroy(b);
    return rc;
}

/* The kept copy of t in layout a->want, refreshed when t changed. */
static void *packed_get(tensor *t, const op_nn_prim_arg *a, void *user, dnnl_stream_t s)
{
    packed *pk = t->packed;
    if (!pk) {
        pk = calloc(1, sizeof *pk);
        if (!pk) return NULL;
        t->packed = pk;
    }
    int k = -1;
    for (int i = 0; i < PACKED_SLOTS; i++)
        if (pk->s[i].buf && dnnl_memory_desc_equal(&pk->s[i].md, &a->want)) k = i;
    if (k >= 0 && pk->s[k].valid && pk->s[k].version == t->version) return pk->s[k].buf;
    if (k < 0) {
        k = pk->next;
        pk->next = (pk->next + 1) % PACKED_SLOTS;
        op_nn_free(pk->s[k].buf, pk->s[k].bytes);
        pk->s[k].buf = op_nn_alloc(a->want_bytes);
        pk->s[k].bytes = a->want_bytes;
        pk->s[k].md = a->want;
        if (!pk->s[k].buf) return NULL;
    }
    pk->s[k].valid = 0;
    if (run_reorder(a->reorder, &a->user, user, &a->want, pk->s[k].buf, s) != OPPROF_OK) return NULL;
    pk->s[k].valid = 1;
    pk->s[k].version = t->version;
    return pk->s[k].buf;
}

int op_nn_prim_run(const op_nn_prim *p, void *const *data, tensor *const *keep_owner)
{
    dnnl_stream_t s = stream();
    dnnl_engine_t e = op_nn_engine();
    if (!s || !e) return OPPROF_E_UNSUPPORTED;
    void *tmp[OP_NN_MAX_PRIM_ARGS] = {0};
    dnnl_memory_t mem[OP_NN_MAX_PRIM_ARGS] = {0};
    dnnl_exec_arg_t args[OP_NN_MAX_PRIM_ARGS];
    int n = 0, rc = OPPROF_OK;
    for (int i = 0; i < p->nargs && rc == OPPROF_OK; i++) {
        const op_nn_prim_arg *a = &p->args[i];
        if (!data[i]) continue;
        void *ptr = data[i];
        if (a->reorder) {
            if (!a->out && a->keep && keep_owner && keep_owner[i]) {
                ptr = packed_get(keep_owner[i], a, data[i], s);
                if (!ptr) rc = OPPROF_E_NOMEM;
            } else {
                ptr = tmp[i] = op_nn_alloc(a->want_bytes);
                if (!ptr)
                    rc = OPPROF_E_NOMEM;
                else if (!a->out)
                    rc = run_reorder(a->reorder, &a->user, data[i], &a->want, ptr, s);
            }
        }
        if (rc == OPPROF_OK && dnnl_memory_create(&mem[i], a->reorder ? &a->want : &a->user, e, ptr) != dnnl_success)
            rc = OPPROF_E_NOMEM;
        if (rc == OPPROF_OK) {
            args[n].arg = a->arg;
            args[n].memory = mem[i];
            n++;
        }
    }
    if (rc == OPPROF_OK && dnnl_primitive_execute(p->prim, s, n, args) != dnnl_success) rc = OPPROF_E_UNSUPPORTED;
    for (int i = 0; i < p->nargs && rc == OPPROF_OK; i++) {
        const op_nn_prim_arg *a = &p->args[i];
        if (data[i] && a->out && a->reorder) rc = run_reorder(a->reorder, &a->want, tmp[i], &a->user, data[i], s);
    }
    if (dnnl_stream_wait(s) != dnnl_success && rc == OPPROF_OK) rc = OPPROF_E_UNSUPPORTED;
    for (int i = 0; i < p->nargs; i++) {
        if (mem[i]) dnnl_memory_destroy(mem[i]);
        op_nn_free(tmp[i], p->args[i].want_bytes);
    }
    return rc;
}

/* aten::linear on oneDNN's GEMM (row-major sgemm), its backward, and
 * flatten (a view). PyTorch runs linear with a bias as addmm, which is the
 * range that owns the work and the FLOPs. */
#include <oneapi/dnnl/dnnl.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

OPPROF_SITE(site_linear, "aten::linear");
OP_NN_SITE_FLOPS(site_addmm, "aten::addmm", opprof_nn_flops_addmm);
OPPROF_SITE(site_matmul, "aten::matmul");
OP_NN_SITE_FLOPS(site_mm, "aten::mm", opprof_nn_flops_mm);
OP_NN_BACKWARD_SITES(site_addmm_bwd, "AddmmBackward0");
OP_NN_BACKWARD_SITES(site_mm_bwd, "MmBackward0");
OPPROF_SITE(site_sum, "aten::sum");
OPPROF_SITE(site_flatten, "aten::flatten");
OPPROF_SITE(site_reshape_alias, "aten::_reshape_alias");

/* C[M,N] = op(A) op(B) + beta C, row-major. */
static int gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
                int64_t ldb, float beta, float *c)
{
    if (m == 0 || n == 0) return OPPROF_OK;
    if (k == 0) { /* oneDNN rejects an empty inner dimension; the product is zero */
        for (int64_t i = 0; i < m * n; i++) c[i] = beta ? beta * c[i] : 0.0f;
        return OPPROF_OK;
    }
    return dnnl_sgemm(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, n) == dnnl_success ? OPPROF_OK
                                                                                       : OPPROF_E_UNSUPPORTED;
}

int opprof_nn_linear(const tensor *x, const tensor *w, const tensor *b, tensor **y)
{
    if (!y) return OPPROF_E_INVAL;
    *y = NULL;
    if (!x || !w || x->ndim != 2 || w->ndim != 2 || x->dims[1] != w->dims[1]) return OPPROF_E_INVAL;
    if (b && (b->ndim != 1 || b->dims[0] != w->dims[0])) return OPPROF_E_INVAL;
    int64_t m = x->dims[0], k = x->dims[1], n = w->dims[0];
    opprof_input in[3] = {op_nn_in(x), op_nn_in(w), op_nn_in(b)};
    opprof_input wt = op_nn_in(w);
    wt.dims[0] = k;
    wt.dims[1] = n;
    opprof_begin_inputs(&site_linear, in, 3);
    const opprof_site *inner = b ? &site_addmm : &site_mm;
    if (b) {
        /* self (the bias), mat1, mat2 (w transposed), beta, alpha */
        opprof_input am[5] = {in[2], in[0], wt, op_nn_in_scalar(), op_nn_in_scalar()};
        opprof_begin_inputs(&site_addmm, am, 5);
    } else {
        opprof_input mm[2] = {in[0], wt};
        opprof_begin_inputs(&site_matmul, mm, 2);
        opprof_begin_inputs(&site_mm, mm, 2);
    }
    int64_t d[2] = {m, n};
    tensor *out = op_nn_empty(2, d);
    int rc = out ? OPPROF_OK : OPPROF_E_NOMEM;
    if (out) {
        if (b)
            for (int64_t i = 0; i < m; i++) memcpy(out->data + i * n, b->data, (size_t)n * sizeof(float));
        rc = gemm('N', 'T', m, n, k, x->data, k, w->data, k, b ? 1.0f : 0.0f, out->data);
    }
    opprof_end(inner);
    if (!b) opprof_end(&site_matmul);
    opprof_end(&site_linear);
    if (rc)
        opprof_nn_tensor_release(out);
    else
        *y = out;
    return rc;
}

static int mm(const opprof_input *in, char ta, char tb, int64_t m, int64_t n, int64_t k, const float *a,
              int64_t lda, const float *b, int64_t ldb, tensor **out)
{
    opprof_begin_inputs(&site_mm, in, 2);
    int64_t d[2] = {m, n};
    tensor *c = op_nn_empty(2, d);
    int rc = c ? gemm(ta, tb, m, n, k, a, lda, b, ldb, 0.0f, c->data) : OPPROF_E_NOMEM;
    opprof_end(&site_mm);
    if (rc)
        opprof_nn_tensor_release(c);
    else
        *out = c;
    return rc;
}

int opprof_nn_linear_backward(const tensor *x, const tensor *w, const tensor *dy, tensor **dx, tensor **dw,
                              tensor **db)
{
    if (!x || !w || !dy || x->ndim != 2 || w->ndim != 2 || dy->ndim != 2 || x->dims[1] != w->dims[1] ||
        dy->dims[0] != x->dims[0] || dy->dims[1] != w->dims[0])
        return OPPROF_E_INVAL;
    int64_t m = x->dims[0], k = x->dims[1], n = w->dims[0];
    if (dx) *dx = NULL;
    if (dw) *dw = NULL;
    if (db) *db = NULL;
    const opprof_site *eval = db ? &site_addmm_bwd_eval : &site_mm_bwd_eval;
    const opprof_site *node = db ? &site_addmm_bwd : &site_mm_bwd;
    op_nn_backward_begin(eval, node);
    int rc = OPPROF_OK;
    if (dx) { /* dx[M,K] = dy[M,N] w[N,K] */
        opprof_input in[2] = {op_nn_in(dy), op_nn_in(w)};
        rc = mm(in, 'N', 'N', m, k, n, dy->data, n, w->data, k, dx);
    }
    if (!rc && dw) { /* dw[N,K] = dy^T[N,M] x[M,K] */
        opprof_input in[2] = {op_nn_in(dy), op_nn_in(x)};
        in[0].dims[0] = n;
        in[0].dims[1] = m;
        rc = mm(in, 'T', 'N', n, k, m, dy->data, n, x->data, k, dw);
    }
    opprof_end(node);
    if (!rc && db) { /* the bias' gradient is reduced outside the node, as PyTorch does */
        opprof_input in[3] = {op_nn_in(dy), op_nn_in_list(), op_nn_in_scalar()};
        opprof_begin_inputs(&site_sum, in, 3);
        tensor *g = *db = op_nn_empty(1, &n);
        if (g) {
            for (int64_t j = 0; j < n; j++) g->data[j] = 0.0f;
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) g->data[j] += dy->data[i * n + j];
        } else
            rc = OPPROF_E_NOMEM;
        opprof_end(&site_sum);
    }
    opprof_end(eval);
    if (rc) {
        if (dx) opprof_nn_tensor_release(*dx), *dx = NULL;
        if (dw) opprof_nn_tensor_release(*dw), *dw = NULL;
        if (db) opprof_nn_tensor_release(*db), *db = NULL;
    }
    return rc;
}

int opprof_nn_flatten(tensor *x, tensor **y)
{
    if (!x || !y || x->ndim < 1) return OPPROF_E_INVAL;
    opprof_input in[3] = {op_nn_in(x), op_nn_in_scalar(), op_nn_in_scalar()};
    opprof_begin_inputs(&site_flatten, in, 3);
    opprof_begin_inputs(&site_reshape_alias, in, 1);
    tensor *v = calloc(1, sizeof *v);
    if (v) {
        v->ndim = x->ndim >= 2 ? 2 : 1;
        v->dims[0] = x->dims[0];
        if (v->ndim == 2) v->dims[1] = x->dims[0] ? x->numel / x->dims[0] : 0;
        v->numel = x->numel;
        v->data = x->data;
        v->refs = 1;
        v->base = opprof_nn_tensor_retain(x->base ? x->base : x);
    }
    opprof_end(&site_reshape_alias);
    opprof_end(&site_flatten);
    *y = v;
    return v ? OPPROF_OK : OPPROF_E_NOMEM;
}

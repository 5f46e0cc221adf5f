/* softmax and cross-entropy (log_softmax then nll_loss, mean over the batch),
 * forward and backward, ranged as PyTorch's autograd shows them. */
#include <math.h>

#include "internal.h"

OPPROF_SITE(site_softmax, "aten::softmax");
OPPROF_SITE(site__softmax, "aten::_softmax");
OPPROF_SITE(site_ce, "aten::cross_entropy_loss");
OPPROF_SITE(site_log_softmax, "aten::log_softmax");
OPPROF_SITE(site__log_softmax, "aten::_log_softmax");
OPPROF_SITE(site_nll_nd, "aten::nll_loss_nd");
OPPROF_SITE(site_nll, "aten::nll_loss");
OPPROF_SITE(site_nll_fwd, "aten::nll_loss_forward");
OP_NN_BACKWARD_SITES(site_softmax_bwd, "SoftmaxBackward0");
OPPROF_SITE(site_softmax_backward, "aten::_softmax_backward_data");
OP_NN_BACKWARD_SITES(site_nll_bwd, "NllLossBackward0");
OPPROF_SITE(site_nll_backward, "aten::nll_loss_backward");
OP_NN_BACKWARD_SITES(site_lsm_bwd, "LogSoftmaxBackward0");
OPPROF_SITE(site_lsm_backward, "aten::_log_softmax_backward_data");

/* Softmax (or log-softmax) along `dim`: outer x len x inner. */
static void softmax_dim(const tensor *x, int dim, int take_log, tensor *y)
{
    int64_t outer = 1, len = x->dims[dim], inner = 1;
    for (int i = 0; i < dim; i++) outer *= x->dims[i];
    for (int i = dim + 1; i < x->ndim; i++) inner *= x->dims[i];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            const float *p = x->data + o * len * inner + in;
            float *q = y->data + o * len * inner + in;
            float mx = -INFINITY;
            for (int64_t i = 0; i < len; i++) mx = p[i * inner] > mx ? p[i * inner] : mx;
            double s = 0;
            for (int64_t i = 0; i < len; i++) s += exp((double)p[i * inner] - mx);
            double ls = log(s);
            for (int64_t i = 0; i < len; i++)
                q[i * inner] = take_log ? (float)((double)p[i * inner] - mx - ls) : (float)(exp((double)p[i * inner] - mx) / s);
        }
}

int opprof_nn_softmax(const tensor *x, int dim, tensor **y)
{
    if (!x || !y || x->ndim < 1) return OPPROF_E_INVAL;
    if (dim < 0) dim += x->ndim;
    if (dim < 0 || dim >= x->ndim) return OPPROF_E_INVAL;
    opprof_input in[3] = {op_nn_in(x), op_nn_in_scalar(), op_nn_in(NULL)};
    opprof_begin_inputs(&site_softmax, in, 3);
    opprof_begin_inputs(&site__softmax, in, 3);
    *y = op_nn_empty_like(x);
    if (*y) softmax_dim(x, dim, 0, *y);
    opprof_end(&site__softmax);
    opprof_end(&site_softmax);
    return *y ? OPPROF_OK : OPPROF_E_NOMEM;
}

/* dx = y * (dy - sum(dy * y)) along dim, y the softmax's output */
int opprof_nn_softmax_backward(const tensor *y, const tensor *dy, int dim, tensor **dx)
{
    if (!y || !dy || !dx || !op_nn_same_shape(y, dy) || y->ndim < 1) return OPPROF_E_INVAL;
    if (dim < 0) dim += y->ndim;
    if (dim < 0 || dim >= y->ndim) return OPPROF_E_INVAL;
    /* grad_output, output, dim, input_dtype */
    opprof_input in[4] = {op_nn_in(dy), op_nn_in(y), op_nn_in_scalar(), op_nn_in_scalar()};
    op_nn_backward_begin(&site_softmax_bwd_eval, &site_softmax_bwd);
    opprof_begin_inputs(&site_softmax_backward, in, 4);
    tensor *g = *dx = op_nn_empty_like(y);
    if (g) {
        int64_t outer = 1, len = y->dims[dim], inner = 1;
        for (int i = 0; i < dim; i++) outer *= y->dims[i];
        for (int i = dim + 1; i < y->ndim; i++) inner *= y->dims[i];
        for (int64_t o = 0; o < outer; o++)
            for (int64_t k = 0; k < inner; k++) {
                int64_t base = o * len * inner + k;
                double s = 0;
                for (int64_t i = 0; i < len; i++) s += (double)dy->data[base + i * inner] * y->data[base + i * inner];
                for (int64_t i = 0; i < len; i++)
                    g->data[base + i * inner] = y->data[base + i * inner] * (float)(dy->data[base + i * inner] - s);
            }
    }
    opprof_end(&site_softmax_backward);
    op_nn_backward_end(&site_softmax_bwd_eval, &site_softmax_bwd);
    return g ? OPPROF_OK : OPPROF_E_NOMEM;
}

static int check_targets(const tensor *logits, const int64_t *targets)
{
    if (!logits || !targets || logits->ndim != 2) return OPPROF_E_INVAL;
    for (int64_t i = 0; i < logits->dims[0]; i++)
        if (targets[i] < 0 || targets[i] >= logits->dims[1]) return OPPROF_E_INVAL;
    return OPPROF_OK;
}

int opprof_nn_cross_entropy(const tensor *logits, const int64_t *targets, float *loss, tensor **logp)
{
    if (!loss || check_targets(logits, targets)) return OPPROF_E_INVAL;
    if (logp) *logp = NULL;
    int64_t n = logits->dims[0], c = logits->dims[1];
    opprof_input tgt = {OPPROF_DTYPE_INT64, 1, {n}};
    /* self, target, weight, reduction, ignore_index, label_smoothing */
    opprof_input in[6] = {op_nn_in(logits), tgt, op_nn_in(NULL), op_nn_in_scalar(), op_nn_in_scalar(),
                          op_nn_in_scalar()};
    opprof_begin_inputs(&site_ce, in, 6);
    opprof_input lin[3] = {in[0], op_nn_in_scalar(), op_nn_in(NULL)};
    opprof_begin_inputs(&site_log_softmax, lin, 3);
    opprof_begin_inputs(&site__log_softmax, lin, 3);
    tensor *lp = op_nn_empty_like(logits);
    if (lp) softmax_dim(logits, 1, 1, lp);
    opprof_end(&site__log_softmax);
    opprof_end(&site_log_softmax);
    if (lp) {
        opprof_input nin[5] = {op_nn_in(lp), tgt, op_nn_in(NULL), op_nn_in_scalar(), op_nn_in_scalar()};
        opprof_begin_inputs(&site_nll_nd, nin, 5);
        opprof_begin_inputs(&site_nll, nin, 5);
        opprof_begin_inputs(&site_nll_fwd, nin, 5);
        double s = 0;
        for (int64_t i = 0; i < n; i++) s -= lp->data[i * c + targets[i]];
        *loss = n ? (float)(s / (double)n) : NAN;
        opprof_end(&site_nll_fwd);
        opprof_end(&site_nll);
        opprof_end(&site_nll_nd);
    }
    opprof_end(&site_ce);
    if (!lp) return OPPROF_E_NOMEM;
    if (logp)
        *logp = lp;
    else
        opprof_nn_tensor_release(lp);
    return OPPROF_OK;
}

int opprof_nn_cross_entropy_backward(const tensor *logp, const int64_t *targets, float dloss, tensor **dlogits)
{
    if (!dlogits || check_targets(logp, targets)) return OPPROF_E_INVAL;
    *dlogits = NULL;
    int64_t n = logp->dims[0], c = logp->dims[1];
    opprof_input tgt = {OPPROF_DTYPE_INT64, 1, {n}};
    opprof_input one = {OPPROF_DTYPE_FLOAT, 0, {0}};
    /* grad_output, self, target, weight, reduction, ignore_index, total_weight */
    opprof_input nin[7] = {one, op_nn_in(logp), tgt, op_nn_in(NULL), op_nn_in_scalar(), op_nn_in_scalar(), one};
    op_nn_backward_begin(&site_nll_bwd_eval, &site_nll_bwd);
    opprof_begin_inputs(&site_nll_backward, nin, 7);
    tensor *g = op_nn_empty_like(logp);
    if (g) { /* d loss / d logp: -dloss/n at each target */
        for (int64_t i = 0; i < n * c; i++) g->data[i] = 0.0f;
        for (int64_t i = 0; i < n; i++) g->data[i * c + targets[i]] = -dloss / (float)n;
    }
    opprof_end(&site_nll_backward);
    op_nn_backward_end(&site_nll_bwd_eval, &site_nll_bwd);
    if (!g) return OPPROF_E_NOMEM;
    /* grad_output, output, dim, input_dtype */
    opprof_input lin[4] = {op_nn_in(g), op_nn_in(logp), op_nn_in_scalar(), op_nn_in_scalar()};
    op_nn_backward_begin(&site_lsm_bwd_eval, &site_lsm_bwd);
    opprof_begin_inputs(&site_lsm_backward, lin, 4);
    tensor *dx = op_nn_empty_like(logp);
    if (dx) /* dx = g - softmax * sum(g) */
        for (int64_t i = 0; i < n; i++) {
            double s = 0;
            for (int64_t j = 0; j < c; j++) s += g->data[i * c + j];
            for (int64_t j = 0; j < c; j++)
                dx->data[i * c + j] = g->data[i * c + j] - (float)(exp((double)logp->data[i * c + j]) * s);
        }
    opprof_end(&site_lsm_backward);
    op_nn_backward_end(&site_lsm_bwd_eval, &site_lsm_bwd);
    opprof_nn_tensor_release(g);
    *dlogits = dx;
    return dx ? OPPROF_OK : OPPROF_E_NOMEM;
}

/* aten::batch_norm over dim 1 of an NCHW (or NC) tensor, forward in eval and
 * training mode, and its backward. Ranges nest as PyTorch's: batch_norm >
 * _batch_norm_impl_index > native_batch_norm. Sums are taken per plane in
 * float with vector lanes, then across planes in double. */
#include <math.h>

#include "internal.h"

OPPROF_SITE(site_bn, "aten::batch_norm");
OPPROF_SITE(site_bn_impl, "aten::_batch_norm_impl_index");
OPPROF_SITE(site_native_bn, "aten::native_batch_norm");
OP_NN_BACKWARD_SITES(site_bn_bwd, "NativeBatchNormBackward0");
OPPROF_SITE(site_native_bn_bwd, "aten::native_batch_norm_backward");

static int check_vec(const tensor *v, int64_t c)
{
    return !v || (v->ndim == 1 && v->dims[0] == c);
}

/* Mean and biased variance of channel c. */
static void channel_stats(const tensor *x, int64_t c, double *mean, double *var)
{
    int64_t n = x->dims[0], ch = x->dims[1], hw = op_nn_spatial(x);
    double s = 0;
    for (int64_t i = 0; i < n; i++) {
        const float *p = x->data + (i * ch + c) * hw;
        float ps = 0;
#pragma omp simd reduction(+ : ps)
        for (int64_t j = 0; j < hw; j++) ps += p[j];
        s += ps;
    }
    double m = s / (double)(n * hw), q = 0;
    float mf = (float)m;
    for (int64_t i = 0; i < n; i++) {
        const float *p = x->data + (i * ch + c) * hw;
        float pq = 0;
#pragma omp simd reduction(+ : pq)
        for (int64_t j = 0; j < hw; j++) pq += (p[j] - mf) * (p[j] - mf);
        q += pq;
    }
    *mean = m;
    *var = q / (double)(n * hw);
}

static void normalize(const tensor *x, tensor *y, const tensor *w, const tensor *b, const tensor *mean,
                      const tensor *invstd)
{
    int64_t planes = x->dims[0] * x->dims[1], ch = x->dims[1], hw = op_nn_spatial(x);
    int nt = op_nn_threads_for(x->numel);
#pragma omp parallel for num_threads(nt) if (parallel : nt > 1)
    for (int64_t pl = 0; pl < planes; pl++) {
        int64_t c = pl % ch;
        const float a = (w ? w->data[c] : 1.0f) * invstd->data[c];
        const float sh = (b ? b->data[c] : 0.0f) - mean->data[c] * a;
        const float *src = x->data + pl * hw;
        float *dst = y->data + pl * hw;
#pragma omp simd
        for (int64_t j = 0; j < hw; j++) dst[j] = src[j] * a + sh;
    }
}

static void forward(const tensor *x, const tensor *w, const tensor *b, tensor *rm, tensor *rv, int training,
                    float momentum, float eps, tensor *y, tensor *mean, tensor *invstd)
{
    int64_t ch = x->dims[1], count = x->numel / ch;
    int nt = op_nn_threads_for(training ? x->numel : 0);
#pragma omp parallel for num_threads(nt) if (parallel : nt > 1)
    for (int64_t c = 0; c < ch; c++) {
        double m, v;
        if (training) {
            channel_stats(x, c, &m, &v);
            if (rm) rm->data[c] = (float)((1 - momentum) * rm->data[c] + momentum * m);
            if (rv) {
                double unbiased = v * (double)count / (double)(count - 1);
                rv->data[c] = (float)((1 - momentum) * rv->data[c] + momentum * unbiased);
            }
        } else {
            m = rm->data[c];
            v = rv->data[c];
        }
        mean->data[c] = (float)m;
        invstd->data[c] = (float)(1.0 / sqrt(v + eps));
    }
    if (training) {
        opprof_nn_tensor_touch(rm);
        opprof_nn_tensor_touch(rv);
    }
    normalize(x, y, w, b, mean, invstd);
}

int opprof_nn_batch_norm(const tensor *x, const tensor *w, const tensor *b, tensor *rm, tensor *rv, int training,
                         float momentum, float eps, tensor **y, tensor **save_mean, tensor **save_invstd)
{
    if (!x || !y || x->ndim < 2) return OPPROF_E_INVAL;
    int64_t ch = x->dims[1];
    if (!check_vec(w, ch) || !check_vec(b, ch) || !check_vec(rm, ch) || !check_vec(rv, ch)) return OPPROF_E_INVAL;
    if (!training && (!rm || !rv)) return OPPROF_E_INVAL;
    if (training && x->numel / (ch ? ch : 1) < 2) return OPPROF_E_INVAL; /* as PyTorch: one value per channel */
    *y = NULL;
    if (save_mean) *save_mean = NULL;
    if (save_invstd) *save_invstd = NULL;
    /* input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled */
    opprof_input in[9] = {op_nn_in(x),        op_nn_in(w),        op_nn_in(b),
                          op_nn_in(rm),       op_nn_in(rv),       op_nn_in_scalar(),
                          op_nn_in_scalar(),  op_nn_in_scalar(),  op_nn_in_scalar()};
    opprof_begin_inputs(&site_bn, in, 9);
    opprof_begin_inputs(&site_bn_impl, in, 9);
    opprof_begin_inputs(&site_native_bn, in, 8);
    tensor *out = op_nn_empty_like(x);
    tensor *mean = op_nn_empty(1, &ch), *invstd = op_nn_empty(1, &ch);
    int rc = out && mean && invstd ? OPPROF_OK : OPPROF_E_NOMEM;
    if (!rc) forward(x, w, b, rm, rv, training, momentum, eps, out, mean, invstd);
    opprof_end(&site_native_bn);
    opprof_end(&site_bn_impl);
    opprof_end(&site_bn);
    if (rc == OPPROF_OK) {
        *y = out;
        out = NULL;
        if (save_mean) {
            *save_mean = mean;
            mean = NULL;
        }
        if (save_invstd) {
            *save_invstd = invstd;
            invstd = NULL;
        }
    }
    opprof_nn_tensor_release(out);
    opprof_nn_tensor_release(mean);
    opprof_nn_tensor_release(invstd);
    return rc;
}

/* Per-channel sums for the backward: sum(dy) and sum(dy * (x - mean)). */
static void grad_sums(const tensor *x, const tensor *dy, int64_t c, float mean, double *sdy, double *sdyx)
{
    int64_t n = x->dims[0], ch = x->dims[1], hw = op_nn_spatial(x);
    double a = 0, b = 0;
    for (int64_t i = 0; i < n; i++) {
        const float *px = x->data + (i * ch + c) * hw, *pg = dy->data + (i * ch + c) * hw;
        float s1 = 0, s2 = 0;
#pragma omp simd reduction(+ : s1, s2)
        for (int64_t j = 0; j < hw; j++) {
            s1 += pg[j];
            s2 += pg[j] * (px[j] - mean);
        }
        a += s1;
        b += s2;
    }
    *sdy = a;
    *sdyx = b;
}

static void backward(const tensor *x, const tensor *w, const tensor *mean, const tensor *invstd, int training,
                     const tensor *dy, tensor *dx, tensor *dw, tensor *db)
{
    int64_t n = x->dims[0], ch = x->dims[1], hw = op_nn_spatial(x), m = n * hw;
    int nt = op_nn_threads_for(x->numel);
#pragma omp parallel for num_threads(nt) if (parallel : nt > 1)
    for (int64_t c = 0; c < ch; c++) {
        double sdy, sdyx;
        float mu = mean->data[c], is = invstd->data[c], g = w ? w->data[c] : 1.0f;
        grad_sums(x, dy, c, mu, &sdy, &sdyx);
        if (dw) dw->data[c] = (float)(sdyx * is);
        if (db) db->data[c] = (float)sdy;
        if (!dx) continue;
        /* training: dx = g*is*(dy - mean(dy) - (x-mu)*is^2*mean(dy*(x-mu))) */
        float k = training ? (float)(sdyx / (double)m) * is * is : 0.0f;
        float off = training ? (float)(sdy / (double)m) : 0.0f;
        float gs = g * is;
        for (int64_t i = 0; i < n; i++) {
            const float *px = x->data + (i * ch + c) * hw, *pg = dy->data + (i * ch + c) * hw;
            float *pd = dx->data + (i * ch + c) * hw;
#pragma omp simd
            for (int64_t j = 0; j < hw; j++) pd[j] = (pg[j] - off - (px[j] - mu) * k) * gs;
        }
    }
}

int opprof_nn_batch_norm_backward(const tensor *x, const tensor *w, const tensor *save_mean,
                                  const tensor *save_invstd, int training, const tensor *dy, tensor **dx,
                                  tensor **dw, tensor **db)
{
    if (!x || !dy || !save_mean || !save_invstd || x->ndim < 2 || !op_nn_same_shape(x, dy)) return OPPROF_E_INVAL;
    int64_t ch = x->dims[1];
    if (!check_vec(w, ch) || !check_vec(save_mean, ch) || !check_vec(save_invstd, ch)) return OPPROF_E_INVAL;
    if (dx) *dx = NULL;
    if (dw) *dw = NULL;
    if (db) *db = NULL;
    /* grad_out, input, weight, running_mean, running_var, save_mean,
     * save_invstd, train, eps, output_mask */
    opprof_input in[10] = {op_nn_in(dy),       op_nn_in(x),          op_nn_in(w),       op_nn_in(NULL),
                           op_nn_in(NULL),     op_nn_in(save_mean),  op_nn_in(save_invstd), op_nn_in_scalar(),
                           op_nn_in_scalar(),  op_nn_in_list()};
    op_nn_backward_begin(&site_bn_bwd_eval, &site_bn_bwd);
    opprof_begin_inputs(&site_native_bn_bwd, in, 10);
    tensor *gx = dx ? op_nn_empty_like(x) : NULL;
    tensor *gw = dw ? op_nn_empty(1, &ch) : NULL, *gb = db ? op_nn_empty(1, &ch) : NULL;
    int rc = (dx && !gx) || (dw && !gw) || (db && !gb) ? OPPROF_E_NOMEM : OPPROF_OK;
    if (!rc) backward(x, w, save_mean, save_invstd, training, dy, gx, gw, gb);
    opprof_end(&site_native_bn_bwd);
    op_nn_backward_end(&site_bn_bwd_eval, &site_bn_bwd);
    if (rc) {
        opprof_nn_tensor_release(gx);
        opprof_nn_tensor_release(gw);
        opprof_nn_tensor_release(gb);
        return rc;
    }
    if (dx) *dx = gx;
    if (dw) *dw = gw;
    if (db) *db = gb;
    return OPPROF_OK;
}

/* Pooling: max_pool2d (and its backward, which finds each window's maximum
 * again instead of keeping an index tensor) and adaptive_avg_pool2d. */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

OPPROF_SITE(site_max_pool, "aten::max_pool2d");
OPPROF_SITE(site_max_pool_idx, "aten::max_pool2d_with_indices");
OP_NN_BACKWARD_SITES(site_max_pool_bwd, "MaxPool2DWithIndicesBackward0");
OPPROF_SITE(site_max_pool_idx_bwd, "aten::max_pool2d_with_indices_backward");
OPPROF_SITE(site_avg_pool, "aten::adaptive_avg_pool2d");
OPPROF_SITE(site_mean, "aten::mean");
OPPROF_SITE(site_avg_pool_impl, "aten::_adaptive_avg_pool2d");
OP_NN_BACKWARD_SITES(site_mean_bwd, "MeanBackward1");
OP_NN_BACKWARD_SITES(site_avg_pool_bwd, "AdaptiveAvgPool2DBackward0");
OPPROF_SITE(site_avg_pool_impl_bwd, "aten::_adaptive_avg_pool2d_backward");

static int64_t pool_out(int64_t in, int k, int s, int p)
{
    return (in + 2 * p - k) / s + 1;
}

static int check_pool(const tensor *x, const opprof_nn_pool_params *p)
{
    if (!x || !p || x->ndim != 4) return OPPROF_E_INVAL;
    for (int i = 0; i < 2; i++) {
        if (p->kernel[i] < 1 || p->stride[i] < 1 || p->padding[i] < 0 || p->padding[i] * 2 > p->kernel[i])
            return OPPROF_E_INVAL;
        if (pool_out(x->dims[2 + i], p->kernel[i], p->stride[i], p->padding[i]) < 1) return OPPROF_E_INVAL;
    }
    return OPPROF_OK;
}

/* Index (within the plane) of the window's maximum, by PyTorch's rule: in
 * scan order, a value replaces the best when greater or NaN. */
static inline int64_t window_argmax(const float *plane, int64_t h, int64_t w, int64_t oy, int64_t ox,
                                    const opprof_nn_pool_params *p)
{
    int64_t y0 = oy * p->stride[0] - p->padding[0], x0 = ox * p->stride[1] - p->padding[1];
    int64_t y1 = y0 + p->kernel[0], x1 = x0 + p->kernel[1];
    if (y0 < 0) y0 = 0;
    if (x0 < 0) x0 = 0;
    if (y1 > h) y1 = h;
    if (x1 > w) x1 = w;
    int64_t best = y0 * w + x0;
    float bv = -INFINITY;
    for (int64_t y = y0; y < y1; y++)
        for (int64_t xx = x0; xx < x1; xx++) {
            float v = plane[y * w + xx];
            if (v > bv || isnan(v)) {
                bv = v;
                best = y * w + xx;
            }
        }
    return best;
}

/* The outputs whose windows lie wholly inside a row of width w: [lo, hi). */
static void inner_range(int64_t w, int64_t ow, const opprof_nn_pool_params *p, int64_t *lo, int64_t *hi)
{
    int64_t sx = p->stride[1], px = p->padding[1], kx = p->kernel[1];
    *lo = (px + sx - 1) / sx;
    *hi = (w - kx + px) / sx + 1;
    if (*hi > ow) *hi = ow;
    if (*lo > *hi) *lo = *hi;
}

/* window_argmax for a whole output row, the inner windows as a vector loop
 * over the outputs (same scan order, same rule). */
OP_NN_VECTOR_CLONES static void row_argmax(const float *src, int64_t h, int64_t w, int64_t oy, int64_t ow, const opprof_nn_pool_params *p,
                       float *best, int64_t *idx)
{
    int64_t lo, hi;
    inner_range(w, ow, p, &lo, &hi);
    for (int64_t ox = 0; ox < ow; ox++)
        if (ox < lo || ox >= hi) idx[ox] = window_argmax(src, h, w, oy, ox, p);
    int64_t y0 = oy * p->stride[0] - p->padding[0], y1 = y0 + p->kernel[0];
    if (y0 < 0) y0 = 0;
    if (y1 > h) y1 = h;
    int64_t sx = p->stride[1], px = p->padding[1];
    for (int64_t o = lo; o < hi; o++) {
        best[o] = -INFINITY;
        idx[o] = y0 * w + o * sx - px;
    }
    for (int64_t y = y0; y < y1; y++)
        for (int64_t k = 0; k < p->kernel[1]; k++) {
            const int64_t base = y * w - px + k;
#pragma omp simd
            for (int64_t o = lo; o < hi; o++) {
                float v = src[base + o * sx];
                int take = v > best[o] || v != v;
                best[o] = take ? v : best[o];
                idx[o] = take ? base + o * sx : idx[o];
            }
        }
}

static inline float max_nan(float a, float b)
{
    return b > a || b != b ? b : a;
}

/* One plane: the max over the window's rows first (a vector loop over the
 * whole row), then over each window's columns. */
static void max_pool_plane(const float *src, int64_t h, int64_t w, float *dst, int64_t oh, int64_t ow,
                           const opprof_nn_pool_params *p, float *row)
{
    for (int64_t oy = 0; oy < oh; oy++) {
        int64_t y0 = oy * p->stride[0] - p->padding[0], y1 = y0 + p->kernel[0];
        if (y0 < 0) y0 = 0;
        if (y1 > h) y1 = h;
        for (int64_t x = 0; x < w; x++) row[x] = src[y0 * w + x];
        for (int64_t y = y0 + 1; y < y1; y++) {
            const float *r = src + y * w;
#pragma omp simd
            for (int64_t x = 0; x < w; x++) row[x] = max_nan(row[x], r[x]);
        }
        /* windows wholly inside the row need no clamping: a loop the compiler vectorises */
        int64_t sx = p->stride[1], px = p->padding[1], kx = p->kernel[1], in_lo, in_hi;
        inner_range(w, ow, p, &in_lo, &in_hi);
        for (int64_t ox = 0; ox < ow; ox++) {
            if (ox == in_lo && in_hi > in_lo) {
                float *d = dst + oy * ow;
                for (int64_t o = in_lo; o < in_hi; o++) d[o] = row[o * sx - px];
                for (int64_t k = 1; k < kx; k++)
#pragma omp simd
                    for (int64_t o = in_lo; o < in_hi; o++) d[o] = max_nan(d[o], row[o * sx - px + k]);
                ox = in_hi - 1;
                continue;
            }
            int64_t x0 = ox * sx - px, x1 = x0 + kx;
            if (x0 < 0) x0 = 0;
            if (x1 > w) x1 = w;
            float m = row[x0];
            for (int64_t x = x0 + 1; x < x1; x++) m = max_nan(m, row[x]);
            dst[oy * ow + ox] = m;
        }
    }
}

int opprof_nn_max_pool2d(const tensor *x, const opprof_nn_pool_params *p, tensor **y)
{
    if (!y) return OPPROF_E_INVAL;
    *y = NULL;
    int rc = check_pool(x, p);
    if (rc) return rc;
    /* self, kernel_size, stride, padding, dilation, ceil_mode */
    opprof_input in[6] = {op_nn_in(x),      op_nn_in_list(), op_nn_in_list(),
                          op_nn_in_list(),  op_nn_in_list(), op_nn_in_scalar()};
    opprof_begin_inputs(&site_max_pool, in, 6);
    opprof_begin_inputs(&site_max_pool_idx, in, 6);
    int64_t h = x->dims[2], w = x->dims[3];
    int64_t d[4] = {x->dims[0], x->dims[1], pool_out(h, p->kernel[0], p->stride[0], p->padding[0]),
                    pool_out(w, p->kernel[1], p->stride[1], p->padding[1])};
    tensor *out = op_nn_empty(4, d);
    if (out) {
        int64_t planes = d[0] * d[1];
        int nt = op_nn_threads_for(x->numel);
#pragma omp parallel num_threads(nt) if (parallel : nt > 1)
        {
            float *row = malloc((size_t)w * sizeof(float));
#pragma omp for
            for (int64_t pl = 0; pl < planes; pl++)
                if (row) max_pool_plane(x->data + pl * h * w, h, w, out->data + pl * d[2] * d[3], d[2], d[3], p, row);
            if (!row) rc = OPPROF_E_NOMEM;
            free(row);
        }
    }
    opprof_end(&site_max_pool_idx);
    opprof_end(&site_max_pool);
    if (!out) rc = OPPROF_E_NOMEM;
    if (rc)
        opprof_nn_tensor_release(out);
    else
        *y = out;
    return rc;
}

int opprof_nn_max_pool2d_backward(const tensor *x, const opprof_nn_pool_params *p, const tensor *dy, tensor **dx)
{
    if (!dx) return OPPROF_E_INVAL;
    *dx = NULL;
    int rc = check_pool(x, p);
    if (rc) return rc;
    int64_t h = x->dims[2], w = x->dims[3];
    int64_t oh = pool_out(h, p->kernel[0], p->stride[0], p->padding[0]);
    int64_t ow = pool_out(w, p->kernel[1], p->stride[1], p->padding[1]);
    if (!dy || dy->ndim != 4 || dy->dims[0] != x->dims[0] || dy->dims[1] != x->dims[1] || dy->dims[2] != oh ||
        dy->dims[3] != ow)
        return OPPROF_E_INVAL;
    /* grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices */
    opprof_input in[8] = {op_nn_in(dy),    op_nn_in(x),     op_nn_in_list(),   op_nn_in_list(),
                          op_nn_in_list(), op_nn_in_list(), op_nn_in_scalar(), op_nn_in(dy)};
    op_nn_backward_begin(&site_max_pool_bwd_eval, &site_max_pool_bwd);
    opprof_begin_inputs(&site_max_pool_idx_bwd, in, 8);
    tensor *g = op_nn_empty_like(x);
    if (g) {
        int64_t planes = x->dims[0] * x->dims[1];
        int nt = op_nn_threads_for(x->numel);
#pragma omp parallel num_threads(nt) if (parallel : nt > 1)
        {
            float *best = malloc((size_t)ow * sizeof *best);
            int64_t *idx = malloc((size_t)ow * sizeof *idx);
#pragma omp for
            for (int64_t pl = 0; pl < planes; pl++) {
                if (!best || !idx) continue;
                const float *src = x->data + pl * h * w, *gy = dy->data + pl * oh * ow;
                float *gx = g->data + pl * h * w;
                for (int64_t i = 0; i < h * w; i++) gx[i] = 0.0f;
                for (int64_t oy = 0; oy < oh; oy++) {
                    row_argmax(src, h, w, oy, ow, p, best, idx);
                    for (int64_t ox = 0; ox < ow; ox++) gx[idx[ox]] += gy[oy * ow + ox];
                }
            }
            if (!best || !idx) rc = OPPROF_E_NOMEM;
            free(best);
            free(idx);
        }
    }
    opprof_end(&site_max_pool_idx_bwd);
    op_nn_backward_end(&site_max_pool_bwd_eval, &site_max_pool_bwd);
    if (!g) rc = OPPROF_E_NOMEM;
    if (rc)
        opprof_nn_tensor_release(g);
    else
        *dx = g;
    return rc;
}

/* Adaptive pooling windows: [floor(i*in/out), ceil((i+1)*in/out)). */
static inline int64_t win_start(int64_t i, int64_t in, int64_t out)
{
    return (i * in) / out;
}

static inline int64_t win_end(int64_t i, int64_t in, int64_t out)
{
    return ((i + 1) * in + out - 1) / out;
}

int opprof_nn_adaptive_avg_pool2d(const tensor *x, int out_h, int out_w, tensor **y)
{
    if (!y) return OPPROF_E_INVAL;
    *y = NULL;
    if (!x || x->ndim != 4 || out_h < 1 || out_w < 1) return OPPROF_E_INVAL;
    int global = out_h == 1 && out_w == 1; /* PyTorch takes the mean over H, W then */
    opprof_input in[2] = {op_nn_in(x), op_nn_in_list()};
    opprof_input mean_in[4] = {in[0], op_nn_in_list(), op_nn_in_scalar(), op_nn_in(NULL)};
    const opprof_site *inner = global ? &site_mean : &site_avg_pool_impl;
    opprof_begin_inputs(&site_avg_pool, in, 2);
    if (global)
        opprof_begin_inputs(inner, mean_in, 4);
    else
        opprof_begin_inputs(inner, in, 2);
    int64_t h = x->dims[2], w = x->dims[3];
    int64_t d[4] = {x->dims[0], x->dims[1], out_h, out_w};
    tensor *out = op_nn_empty(4, d);
    if (out) {
        int64_t planes = d[0] * d[1];
        int nt = op_nn_threads_for(x->numel);
#pragma omp parallel for num_threads(nt) if (parallel : nt > 1)
        for (int64_t pl = 0; pl < planes; pl++) {
            const float *src = x->data + pl * h * w;
            for (int64_t oy = 0; oy < out_h; oy++)
                for (int64_t ox = 0; ox < out_w; ox++) {
                    int64_t y0 = win_start(oy, h, out_h), y1 = win_end(oy, h, out_h);
                    int64_t x0 = win_start(ox, w, out_w), x1 = win_end(ox, w, out_w);
                    float s = 0;
                    for (int64_t yy = y0; yy < y1; yy++)
                        for (int64_t xx = x0; xx < x1; xx++) s += src[yy * w + xx];
                    out->data[pl * out_h * out_w + oy * out_w + ox] = s / (float)((y1 - y0) * (x1 - x0));
                }
        }
    }
    opprof_end(inner);
    opprof_end(&site_avg_pool);
    *y = out;
    return out ? OPPROF_OK : OPPROF_E_NOMEM;
}

int opprof_nn_adaptive_avg_pool2d_backward(const tensor *x, const tensor *dy, tensor **dx)
{
    if (!dx) return OPPROF_E_INVAL;
    *dx = NULL;
    if (!x || !dy || x->ndim != 4 || dy->ndim != 4 || dy->dims[0] != x->dims[0] || dy->dims[1] != x->dims[1])
        return OPPROF_E_INVAL;
    int64_t h = x->dims[2], w = x->dims[3], oh = dy->dims[2], ow = dy->dims[3];
    int global = oh == 1 && ow == 1;
    opprof_input in[2] = {op_nn_in(dy), op_nn_in(x)};
    if (global)
        op_nn_backward_begin(&site_mean_bwd_eval, &site_mean_bwd);
    else {
        op_nn_backward_begin(&site_avg_pool_bwd_eval, &site_avg_pool_bwd);
        opprof_begin_inputs(&site_avg_pool_impl_bwd, in, 2);
    }
    tensor *g = op_nn_empty_like(x);
    if (g) {
        int64_t planes = x->dims[0] * x->dims[1];
        int nt = op_nn_threads_for(x->numel);
#pragma omp parallel for num_threads(nt) if (parallel : nt > 1)
        for (int64_t pl = 0; pl < planes; pl++) {
            float *gx = g->data + pl * h * w;
            const float *gy = dy->data + pl * oh * ow;
            for (int64_t i = 0; i < h * w; i++) gx[i] = 0.0f;
            for (int64_t oy = 0; oy < oh; oy++)
                for (int64_t ox = 0; ox < ow; ox++) {
                    int64_t y0 = win_start(oy, h, oh), y1 = win_end(oy, h, oh);
                    int64_t x0 = win_start(ox, w, ow), x1 = win_end(ox, w, ow);
                    float v = gy[oy * ow + ox] / (float)((y1 - y0) * (x1 - x0));
                    for (int64_t yy = y0; yy < y1; yy++)
                        for (int64_t xx = x0; xx < x1; xx++) gx[yy * w + xx] += v;
                }
        }
    }
    if (global)
        op_nn_backward_end(&site_mean_bwd_eval, &site_mean_bwd);
    else {
        opprof_end(&site_avg_pool_impl_bwd);
        op_nn_backward_end(&site_avg_pool_bwd_eval, &site_avg_pool_bwd);
    }
    *dx = g;
    return g ? OPPROF_OK : OPPROF_E_NOMEM;
}

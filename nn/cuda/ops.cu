/* The operators: convolutions and batch norm on cuDNN, the classifier's
 * product on cuBLAS, the rest as CUDA C kernels. Each is a range named as PyTorch names it. */
#include <float.h>
#include <limits.h>
#include <string.h>

#include "internal.h"

/* ---- kernels ---- */

__global__ void op_nc_relu_kernel(float *x, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

__global__ void op_nc_add_kernel(float *a, const float *b, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        a[i] += b[i];
}

__global__ void op_nc_max_pool_kernel(const float *x, float *y, int64_t n, int h, int w, int oh, int ow, int k,
                                      int s, int p)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        int ox = (int)(i % ow), oy = (int)(i / ow % oh);
        const float *src = x + i / ((int64_t)ow * oh) * h * w;
        float m = -FLT_MAX;
        for (int ky = 0; ky < k; ky++) {
            int iy = oy * s - p + ky;
            if (iy < 0 || iy >= h) continue;
            for (int kx = 0; kx < k; kx++) {
                int ix = ox * s - p + kx;
                if (ix < 0 || ix >= w) continue;
                float v = src[iy * w + ix];
                if (v > m) m = v;
            }
        }
        y[i] = m;
    }
}

/* One warp per plane: the planes are small (7x7 in ResNet-18). */
__global__ void op_nc_mean_plane_kernel(const float *x, float *y, int64_t planes, int64_t plane)
{
    int64_t warp = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (warp >= planes) return;
    const float *src = x + warp * plane;
    float s = 0.0f;
    for (int64_t i = lane; i < plane; i += 32) s += src[i];
    for (int off = 16; off > 0; off /= 2) s += __shfl_down_sync(0xffffffffu, s, off);
    if (lane == 0) y[warp] = s / (float)plane;
}

__global__ void op_nc_bias_rows_kernel(float *y, const float *b, int64_t n, int64_t cols)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        y[i] = b[i % cols];
}

static int launched(const char *what)
{
    return op_nc_cuda(cudaGetLastError(), what);
}

/* ---- convolution (cuDNN) ---- */

typedef struct conv_plan {
    int64_t xd[4], wd[4];
    int stride, padding;
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    cudnnConvolutionFwdAlgo_t algo;
    size_t workspace;
    int64_t yd[4];
} conv_plan;

#define MAX_PLANS 64
static conv_plan g_plans[MAX_PLANS];
static int g_nplans;

static int plan_make(conv_plan *p)
{
    int rc;
    if ((rc = op_nc_cudnn(cudnnCreateTensorDescriptor(&p->x), "cudnnCreateTensorDescriptor")) ||
        (rc = op_nc_cudnn(cudnnCreateTensorDescriptor(&p->y), "cudnnCreateTensorDescriptor")) ||
        (rc = op_nc_cudnn(cudnnCreateFilterDescriptor(&p->w), "cudnnCreateFilterDescriptor")) ||
        (rc = op_nc_cudnn(cudnnCreateConvolutionDescriptor(&p->conv), "cudnnCreateConvolutionDescriptor")))
        return rc;
    if ((rc = op_nc_cudnn(cudnnSetTensor4dDescriptor(p->x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, (int)p->xd[0],
                                                     (int)p->xd[1], (int)p->xd[2], (int)p->xd[3]),
                          "cudnnSetTensor4dDescriptor")) ||
        (rc = op_nc_cudnn(cudnnSetFilter4dDescriptor(p->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, (int)p->wd[0],
                                                     (int)p->wd[1], (int)p->wd[2], (int)p->wd[3]),
                          "cudnnSetFilter4dDescriptor")) ||
        (rc = op_nc_cudnn(cudnnSetConvolution2dDescriptor(p->conv, p->padding, p->padding, p->stride, p->stride, 1, 1,
                                                          CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                          "cudnnSetConvolution2dDescriptor")) ||
        /* No tensor-core TF32: results must stay within 1e-3 of the CPU's. */
        (rc = op_nc_cudnn(cudnnSetConvolutionMathType(p->conv, CUDNN_FMA_MATH), "cudnnSetConvolutionMathType")))
        return rc;
    int n, c, h, w;
    if ((rc = op_nc_cudnn(cudnnGetConvolution2dForwardOutputDim(p->conv, p->x, p->w, &n, &c, &h, &w),
                          "cudnnGetConvolution2dForwardOutputDim")))
        return rc;
    p->yd[0] = n;
    p->yd[1] = c;
    p->yd[2] = h;
    p->yd[3] = w;
    if ((rc = op_nc_cudnn(cudnnSetTensor4dDescriptor(p->y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w),
                          "cudnnSetTensor4dDescriptor")))
        return rc;
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int got = 0;
    if ((rc = op_nc_cudnn(cudnnGetConvolutionForwardAlgorithm_v7(op_nc.cudnn, p->x, p->w, p->conv, p->y,
                                                                 CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf),
                          "cudnnGetConvolutionForwardAlgorithm_v7")))
        return rc;
    for (int i = 0; i < got; i++) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].mathType == CUDNN_TENSOR_OP_MATH ||
            perf[i].mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
            continue;
        p->algo = perf[i].algo;
        return op_nc_cudnn(cudnnGetConvolutionForwardWorkspaceSize(op_nc.cudnn, p->x, p->w, p->conv, p->y, p->algo,
                                                                   &p->workspace),
                           "cudnnGetConvolutionForwardWorkspaceSize");
    }
    return op_nc_fail(OPPROF_E_UNSUPPORTED, "cuDNN offers no float32 algorithm for this convolution");
}

/* Plans are made once per shape: descriptor set-up and the algorithm
 * choice stay out of every later call. */
static int plan_for(const opprof_nn_cuda_tensor *x, const opprof_nn_cuda_tensor *w, const opprof_nn_cuda_conv *c,
                    conv_plan **out)
{
    for (int i = 0; i < g_nplans; i++) {
        conv_plan *p = &g_plans[i];
        if (!memcmp(p->xd, x->dims, sizeof p->xd) && !memcmp(p->wd, w->dims, sizeof p->wd) && p->stride == c->stride &&
            p->padding == c->padding) {
            *out = p;
            return 0;
        }
    }
    if (g_nplans == MAX_PLANS) return op_nc_fail(OPPROF_E_RANGE, "more than %d convolution shapes", MAX_PLANS);
    conv_plan *p = &g_plans[g_nplans];
    memset(p, 0, sizeof *p);
    memcpy(p->xd, x->dims, sizeof p->xd);
    memcpy(p->wd, w->dims, sizeof p->wd);
    p->stride = c->stride;
    p->padding = c->padding;
    int rc = plan_make(p);
    if (rc) return rc;
    g_nplans++;
    *out = p;
    return 0;
}

OPPROF_SITE(site_conv2d, "aten::conv2d");
OPPROF_SITE(site_convolution, "aten::convolution");
OPPROF_SITE(site__convolution, "aten::_convolution");
OPPROF_SITE(site_cudnn_conv, "aten::cudnn_convolution");

extern "C" int opprof_nn_cuda_conv2d(const opprof_nn_cuda_tensor *x, const opprof_nn_cuda_tensor *w,
                                     const opprof_nn_cuda_conv *c, opprof_nn_cuda_tensor **y)
{
    *y = NULL;
    if (x->ndim != 4 || w->ndim != 4 || x->dims[1] != w->dims[1])
        return op_nc_fail(OPPROF_E_INVAL, "conv2d: x [N,C,H,W] and w [O,C,KH,KW] expected");
    opprof_input in[2];
    op_nc_input(&in[0], x);
    op_nc_input(&in[1], w);
    opprof_begin_inputs(&site_conv2d, in, 2);
    opprof_begin_inputs(&site_convolution, in, 2);
    opprof_begin_inputs(&site__convolution, in, 2);
    opprof_begin_inputs(&site_cudnn_conv, in, 2);
    conv_plan *p = NULL;
    int rc = plan_for(x, w, c, &p);
    if (!rc) rc = op_nc_tensor_new(4, p->yd, y);
    if (!rc) rc = op_nc_workspace(p->workspace);
    if (!rc) {
        const float one = 1.0f, zero = 0.0f;
        rc = op_nc_cudnn(cudnnConvolutionForward(op_nc.cudnn, &one, p->x, x->data, p->w, w->data, p->conv, p->algo,
                                                 op_nc.workspace, p->workspace, &zero, p->y, (*y)->data),
                         "cudnnConvolutionForward");
    }
    uint64_t flops = p ? 2ull * (uint64_t)(p->yd[0] * p->yd[1] * p->yd[2] * p->yd[3]) *
                             (uint64_t)(w->dims[1] * w->dims[2] * w->dims[3])
                       : 0;
    opprof_end(&site_cudnn_conv);
    opprof_end(&site__convolution);
    opprof_end(&site_convolution);
    opprof_end_flops(&site_conv2d, flops);
    if (rc) {
        opprof_nn_cuda_tensor_free(*y);
        *y = NULL;
    }
    return rc;
}

/* ---- batch norm (cuDNN, as PyTorch runs it on CUDA) ---- */

OPPROF_SITE(site_bn, "aten::batch_norm");
OPPROF_SITE(site_bn_impl, "aten::_batch_norm_impl_index");
OPPROF_SITE(site_cudnn_bn, "aten::cudnn_batch_norm");

/* The descriptors of one input shape, made once: x and y as N, C, plane, 1
 * and the per-channel parameters as 1, C, 1, 1. */
typedef struct bn_plan {
    int64_t n, c, plane;
    cudnnTensorDescriptor_t x, param;
} bn_plan;

#define MAX_BN_PLANS 64
static bn_plan g_bn_plans[MAX_BN_PLANS];
static int g_nbn_plans;

static int bn_plan_for(int64_t n, int64_t c, int64_t plane, bn_plan **out)
{
    for (int i = 0; i < g_nbn_plans; i++) {
        bn_plan *p = &g_bn_plans[i];
        if (p->n == n && p->c == c && p->plane == plane) {
            *out = p;
            return 0;
        }
    }
    if (g_nbn_plans == MAX_BN_PLANS) return op_nc_fail(OPPROF_E_RANGE, "more than %d batch norm shapes", MAX_BN_PLANS);
    if (n > INT_MAX || c > INT_MAX || plane > INT_MAX)
        return op_nc_fail(OPPROF_E_RANGE, "batch_norm: a dimension past cuDNN's int");
    bn_plan *p = &g_bn_plans[g_nbn_plans];
    memset(p, 0, sizeof *p);
    int rc;
    if ((rc = op_nc_cudnn(cudnnCreateTensorDescriptor(&p->x), "cudnnCreateTensorDescriptor")) ||
        (rc = op_nc_cudnn(cudnnCreateTensorDescriptor(&p->param), "cudnnCreateTensorDescriptor")) ||
        (rc = op_nc_cudnn(cudnnSetTensor4dDescriptor(p->x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, (int)n, (int)c,
                                                     (int)plane, 1),
                          "cudnnSetTensor4dDescriptor")) ||
        (rc = op_nc_cudnn(cudnnSetTensor4dDescriptor(p->param, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, (int)c, 1, 1),
                          "cudnnSetTensor4dDescriptor"))) {
        if (p->x) cudnnDestroyTensorDescriptor(p->x);
        if (p->param) cudnnDestroyTensorDescriptor(p->param);
        return rc;
    }
    p->n = n;
    p->c = c;
    p->plane = plane;
    g_nbn_plans++;
    *out = p;
    return 0;
}

extern "C" int opprof_nn_cuda_batch_norm(const opprof_nn_cuda_tensor *x, const opprof_nn_cuda_tensor *w,
                                         const opprof_nn_cuda_tensor *b, const opprof_nn_cuda_tensor *mean,
                                         const opprof_nn_cuda_tensor *var, float eps, opprof_nn_cuda_tensor **y)
{
    *y = NULL;
    if (x->ndim < 2 || w->numel != x->dims[1] || b->numel != x->dims[1] || mean->numel != x->dims[1] ||
        var->numel != x->dims[1])
        return op_nc_fail(OPPROF_E_INVAL, "batch_norm: one value per channel expected");
    opprof_input in[5];
    op_nc_input(&in[0], x);
    op_nc_input(&in[1], w);
    op_nc_input(&in[2], b);
    op_nc_input(&in[3], mean);
    op_nc_input(&in[4], var);
    opprof_begin_inputs(&site_bn, in, 5);
    opprof_begin_inputs(&site_bn_impl, in, 5);
    opprof_begin_inputs(&site_cudnn_bn, in, 5);
    bn_plan *p = NULL;
    int rc = bn_plan_for(x->dims[0], x->dims[1], x->numel / (x->dims[0] * x->dims[1]), &p);
    if (!rc) rc = op_nc_tensor_new(x->ndim, x->dims, y);
    if (!rc) {
        const float one = 1.0f, zero = 0.0f;
        double e = eps < CUDNN_BN_MIN_EPSILON ? CUDNN_BN_MIN_EPSILON : (double)eps;
        rc = op_nc_cudnn(cudnnBatchNormalizationForwardInference(op_nc.cudnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero,
                                                                 p->x, x->data, p->x, (*y)->data, p->param, w->data,
                                                                 b->data, mean->data, var->data, e),
                         "cudnnBatchNormalizationForwardInference");
    }
    opprof_end(&site_cudnn_bn);
    opprof_end(&site_bn_impl);
    opprof_end(&site_bn);
    if (rc) {
        opprof_nn_cuda_tensor_free(*y);
        *y = NULL;
    }
    return rc;
}

/* ---- relu, add, pooling (kernels) ---- */

OPPROF_SITE(site_relu_, "aten::relu_");
OPPROF_SITE(site_clamp_min_, "aten::clamp_min_");

extern "C" int opprof_nn_cuda_relu_(opprof_nn_cuda_tensor *x)
{
    opprof_input in;
    op_nc_input(&in, x);
    opprof_begin_inputs(&site_relu_, &in, 1);
    opprof_begin_inputs(&site_clamp_min_, &in, 1);
    op_nc_relu_kernel<<<op_nc_blocks(x->numel), 256, 0, op_nc.stream>>>(x->data, x->numel);
    int rc = launched("relu kernel");
    opprof_end(&site_clamp_min_);
    opprof_end(&site_relu_);
    return rc;
}

OPPROF_SITE(site_add_, "aten::add_");

extern "C" int opprof_nn_cuda_add_(opprof_nn_cuda_tensor *a, const opprof_nn_cuda_tensor *b)
{
    if (a->numel != b->numel) return op_nc_fail(OPPROF_E_INVAL, "add_: sizes differ");
    opprof_input in[2];
    op_nc_input(&in[0], a);
    op_nc_input(&in[1], b);
    opprof_begin_inputs(&site_add_, in, 2);
    op_nc_add_kernel<<<op_nc_blocks(a->numel), 256, 0, op_nc.stream>>>(a->data, b->data, a->numel);
    int rc = launched("add kernel");
    opprof_end_flops(&site_add_, (uint64_t)a->numel);
    return rc;
}

OPPROF_SITE(site_max_pool, "aten::max_pool2d");
OPPROF_SITE(site_max_pool_idx, "aten::max_pool2d_with_indices");

extern "C" int opprof_nn_cuda_max_pool2d(const opprof_nn_cuda_tensor *x, int k, int s, int p,
                                         opprof_nn_cuda_tensor **y)
{
    *y = NULL;
    if (x->ndim != 4 || k < 1 || s < 1 || p < 0) return op_nc_fail(OPPROF_E_INVAL, "max_pool2d: bad arguments");
    int h = (int)x->dims[2], w = (int)x->dims[3];
    int64_t d[4] = {x->dims[0], x->dims[1], (h + 2 * p - k) / s + 1, (w + 2 * p - k) / s + 1};
    opprof_input in;
    op_nc_input(&in, x);
    opprof_begin_inputs(&site_max_pool, &in, 1);
    opprof_begin_inputs(&site_max_pool_idx, &in, 1);
    int rc = op_nc_tensor_new(4, d, y);
    if (!rc) {
        int64_t n = (*y)->numel;
        op_nc_max_pool_kernel<<<op_nc_blocks(n), 256, 0, op_nc.stream>>>(x->data, (*y)->data, n, h, w, (int)d[2],
                                                                         (int)d[3], k, s, p);
        rc = launched("max_pool2d kernel");
    }
    opprof_end(&site_max_pool_idx);
    opprof_end(&site_max_pool);
    return rc;
}

OPPROF_SITE(site_avg_pool, "aten::adaptive_avg_pool2d");
OPPROF_SITE(site_mean, "aten::mean");

extern "C" int opprof_nn_cuda_adaptive_avg_pool2d(const opprof_nn_cuda_tensor *x, opprof_nn_cuda_tensor **y)
{
    *y = NULL;
    if (x->ndim != 4) return op_nc_fail(OPPROF_E_INVAL, "adaptive_avg_pool2d: x [N,C,H,W] expected");
    int64_t d[4] = {x->dims[0], x->dims[1], 1, 1};
    opprof_input in;
    op_nc_input(&in, x);
    opprof_begin_inputs(&site_avg_pool, &in, 1);
    opprof_begin_inputs(&site_mean, &in, 1);
    int rc = op_nc_tensor_new(4, d, y);
    if (!rc) {
        int64_t planes = d[0] * d[1];
        op_nc_mean_plane_kernel<<<op_nc_blocks(planes * 32), 256, 0, op_nc.stream>>>(x->data, (*y)->data, planes,
                                                                                    x->dims[2] * x->dims[3]);
        rc = launched("mean kernel");
    }
    opprof_end(&site_mean);
    opprof_end(&site_avg_pool);
    return rc;
}

OPPROF_SITE(site_flatten, "aten::flatten");
OPPROF_SITE(site_view, "aten::view");

extern "C" int opprof_nn_cuda_flatten(const opprof_nn_cuda_tensor *x, opprof_nn_cuda_tensor **y)
{
    opprof_input in;
    op_nc_input(&in, x);
    opprof_begin_inputs(&site_flatten, &in, 1);
    opprof_begin_inputs(&site_view, &in, 1);
    opprof_nn_cuda_tensor *v = (opprof_nn_cuda_tensor *)calloc(1, sizeof *v);
    int rc = v ? 0 : op_nc_fail(OPPROF_E_NOMEM, "out of memory");
    if (v) {
        opprof_nn_cuda_tensor *owner = x->owner ? x->owner : (opprof_nn_cuda_tensor *)x;
        owner->refs++;
        v->owner = owner;
        v->data = x->data;
        v->ndim = 2;
        v->dims[0] = x->dims[0];
        v->dims[1] = x->numel / x->dims[0];
        v->numel = x->numel;
        v->refs = 1;
    }
    *y = v;
    opprof_end(&site_view);
    opprof_end(&site_flatten);
    return rc;
}

/* ---- linear (cuBLAS) ---- */

OPPROF_SITE(site_linear, "aten::linear");
OPPROF_SITE(site_t, "aten::t");
OPPROF_SITE(site_addmm, "aten::addmm");

extern "C" int opprof_nn_cuda_linear(const opprof_nn_cuda_tensor *x, const opprof_nn_cuda_tensor *w,
                                     const opprof_nn_cuda_tensor *b, opprof_nn_cuda_tensor **y)
{
    *y = NULL;
    if (x->ndim != 2 || w->ndim != 2 || x->dims[1] != w->dims[1] || (b && b->numel != w->dims[0]))
        return op_nc_fail(OPPROF_E_INVAL, "linear: x [M,K], w [N,K], b [N] expected");
    int64_t m = x->dims[0], k = x->dims[1], n = w->dims[0];
    opprof_input in[3];
    op_nc_input(&in[0], x);
    op_nc_input(&in[1], w);
    if (b) op_nc_input(&in[2], b);
    opprof_begin_inputs(&site_linear, in, b ? 3 : 2);
    opprof_begin_inputs(&site_t, &in[1], 1);
    opprof_end(&site_t);
    opprof_input mm[3] = {b ? in[2] : in[0], in[0], in[1]};
    mm[2].dims[0] = k;
    mm[2].dims[1] = n;
    opprof_begin_inputs(&site_addmm, mm, 3);
    int64_t d[2] = {m, n};
    int rc = op_nc_tensor_new(2, d, y);
    if (!rc && b) {
        op_nc_bias_rows_kernel<<<op_nc_blocks(m * n), 256, 0, op_nc.stream>>>((*y)->data, b->data, m * n, n);
        rc = launched("bias kernel");
    }
    if (!rc) {
        /* Row-major y[m,n] = x[m,k] w[n,k]^T is column-major y^T = w x^T. */
        const float one = 1.0f, beta = b ? 1.0f : 0.0f;
        rc = op_nc_cublas(cublasSgemm(op_nc.cublas, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, w->data,
                                      (int)k, x->data, (int)k, &beta, (*y)->data, (int)n),
                          "cublasSgemm");
    }
    opprof_end_flops(&site_addmm, 2ull * (uint64_t)(m * n * k));
    opprof_end(&site_linear);
    if (rc) {
        opprof_nn_cuda_tensor_free(*y);
        *y = NULL;
    }
    return rc;
}

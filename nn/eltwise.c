/* Elementwise operators: relu (in place, as torchvision's ResNet uses it, and
 * out of place, as an MLP does), its backward, and add. */
#include "internal.h"

OPPROF_SITE(site_relu, "aten::relu");
OPPROF_SITE(site_clamp_min, "aten::clamp_min");
OPPROF_SITE(site_relu_, "aten::relu_");
OPPROF_SITE(site_clamp_min_, "aten::clamp_min_");
OP_NN_BACKWARD_SITES(site_relu_bwd, "ReluBackward0");
OPPROF_SITE(site_threshold_bwd, "aten::threshold_backward");
OP_NN_SITE_FLOPS(site_add, "aten::add", opprof_nn_flops_elementwise);
OPPROF_SITE(site_add_, "aten::add_");

/* max(x, 0) with NaN kept, as clamp_min does. In place and out of place are
 * separate loops: with y == x the compiler's overlap check would otherwise
 * pick its scalar, branching fallback. */
static void clamp_min0(const float *restrict x, float *restrict y, int64_t n)
{
    int nt = op_nn_threads_for(n);
#pragma omp parallel for simd num_threads(nt) if (parallel : nt > 1)
    for (int64_t i = 0; i < n; i++) y[i] = x[i] <= 0.0f ? 0.0f : x[i];
}

static void clamp_min0_inplace(float *x, int64_t n)
{
    int nt = op_nn_threads_for(n);
#pragma omp parallel for simd num_threads(nt) if (parallel : nt > 1)
    for (int64_t i = 0; i < n; i++) x[i] = x[i] <= 0.0f ? 0.0f : x[i];
}

int opprof_nn_relu(const tensor *x, tensor **y)
{
    if (!x || !y) return OPPROF_E_INVAL;
    opprof_input in[1] = {op_nn_in(x)};
    opprof_input in2[2] = {in[0], op_nn_in_scalar()};
    opprof_begin_inputs(&site_relu, in, 1);
    opprof_begin_inputs(&site_clamp_min, in2, 2);
    *y = op_nn_empty_like(x);
    if (*y) clamp_min0(x->data, (*y)->data, x->numel);
    opprof_end(&site_clamp_min);
    opprof_end(&site_relu);
    return *y ? OPPROF_OK : OPPROF_E_NOMEM;
}

int opprof_nn_relu_(tensor *x)
{
    if (!x) return OPPROF_E_INVAL;
    opprof_input in[1] = {op_nn_in(x)};
    opprof_input in2[2] = {in[0], op_nn_in_scalar()};
    opprof_begin_inputs(&site_relu_, in, 1);
    opprof_begin_inputs(&site_clamp_min_, in2, 2);
    clamp_min0_inplace(x->data, x->numel);
    opprof_nn_tensor_touch(x);
    opprof_end(&site_clamp_min_);
    opprof_end(&site_relu_);
    return OPPROF_OK;
}

/* dx = dy where y > 0. restrict, or the overlap check picks a scalar loop;
 * dy is loaded whatever y is, so the select is a blend, not a branch. */
static void mask_positive(const float *restrict y, const float *restrict dy, float *restrict dx, int64_t n)
{
    int nt = op_nn_threads_for(n);
#pragma omp parallel for simd num_threads(nt) if (parallel : nt > 1)
    for (int64_t i = 0; i < n; i++) {
        float g = dy[i];
        dx[i] = y[i] > 0.0f ? g : 0.0f;
    }
}

int opprof_nn_relu_backward(const tensor *y, const tensor *dy, tensor **dx)
{
    if (!y || !dy || !dx || !op_nn_same_shape(y, dy)) return OPPROF_E_INVAL;
    /* grad_output, self, threshold */
    opprof_input in[3] = {op_nn_in(dy), op_nn_in(y), op_nn_in_scalar()};
    op_nn_backward_begin(&site_relu_bwd_eval, &site_relu_bwd);
    opprof_begin_inputs(&site_threshold_bwd, in, 3);
    tensor *g = *dx = op_nn_empty_like(y);
    if (g) mask_positive(y->data, dy->data, g->data, y->numel);
    opprof_end(&site_threshold_bwd);
    op_nn_backward_end(&site_relu_bwd_eval, &site_relu_bwd);
    return g ? OPPROF_OK : OPPROF_E_NOMEM;
}

static void add_into(float *restrict o, const float *restrict a, const float *restrict b, int64_t n)
{
    int nt = op_nn_threads_for(n);
#pragma omp parallel for simd num_threads(nt) if (parallel : nt > 1)
    for (int64_t i = 0; i < n; i++) o[i] = a[i] + b[i];
}

static void add_inplace(float *restrict a, const float *restrict b, int64_t n)
{
    int nt = op_nn_threads_for(n);
#pragma omp parallel for simd num_threads(nt) if (parallel : nt > 1)
    for (int64_t i = 0; i < n; i++) a[i] += b[i];
}

int opprof_nn_add(const tensor *a, const tensor *b, tensor **y)
{
    if (!a || !b || !y || !op_nn_same_shape(a, b)) return OPPROF_E_INVAL;
    opprof_input in[3] = {op_nn_in(a), op_nn_in(b), op_nn_in_scalar()};
    opprof_begin_inputs(&site_add, in, 3);
    *y = op_nn_empty_like(a);
    if (*y) add_into((*y)->data, a->data, b->data, a->numel);
    opprof_end(&site_add);
    return *y ? OPPROF_OK : OPPROF_E_NOMEM;
}

int opprof_nn_add_(tensor *a, const tensor *b)
{
    if (!a || !b || !op_nn_same_shape(a, b)) return OPPROF_E_INVAL;
    opprof_input in[3] = {op_nn_in(a), op_nn_in(b), op_nn_in_scalar()};
    opprof_begin_inputs(&site_add_, in, 3);
    if (a->data == b->data) /* add_(x, x): the restrict loop must not see one buffer twice */
        for (int64_t i = 0; i < a->numel; i++) a->data[i] *= 2.0f;
    else
        add_inplace(a->data, b->data, a->numel);
    opprof_nn_tensor_touch(a);
    opprof_end(&site_add_);
    return OPPROF_OK;
}

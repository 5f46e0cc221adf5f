/* FLOPs hooks, PyTorch's formulas (torch/autograd/profiler_util and
 * c10's computeFlops): called after the session from the recorded input
 * shapes, so recording costs nothing extra. Each returns 0 ("not counted")
 * when the shapes are not what the operator takes. */
#include "internal.h"

uint64_t opprof_nn_flops_mm(const opprof_input *in, unsigned n)
{
    if (n < 2 || in[0].ndim != 2 || in[1].ndim != 2) return 0;
    return 2ull * (uint64_t)in[0].dims[0] * (uint64_t)in[0].dims[1] * (uint64_t)in[1].dims[1];
}

uint64_t opprof_nn_flops_addmm(const opprof_input *in, unsigned n)
{
    return n >= 3 ? opprof_nn_flops_mm(in + 1, 2) : 0;
}

uint64_t opprof_nn_flops_bmm(const opprof_input *in, unsigned n)
{
    if (n < 2 || in[0].ndim != 3 || in[1].ndim != 3) return 0;
    return 2ull * (uint64_t)in[0].dims[0] * (uint64_t)in[0].dims[1] * (uint64_t)in[0].dims[2] *
           (uint64_t)in[1].dims[2];
}

uint64_t opprof_nn_flops_elementwise(const opprof_input *in, unsigned n)
{
    if (n < 1) return 0;
    uint64_t e = 1;
    for (unsigned i = 0; i < in[0].ndim; i++) e *= (uint64_t)in[0].dims[i];
    return e;
}

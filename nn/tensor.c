/* Tensors: a header with shape and reference count, data from the reporting
 * allocator. Creating one is an "aten::empty" range, as in PyTorch, so that
 * memory is charged to aten::empty and, through the call tree, to the
 * operator that asked for it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "internal.h"

OPPROF_SITE(site_empty, "aten::empty");
OPPROF_SITE(site_zeros, "aten::zeros");
OPPROF_SITE(site_zero_, "aten::zero_");

static tensor *header(int ndim, const int64_t *dims)
{
    if (ndim < 0 || ndim > OPPROF_NN_MAX_DIMS || (ndim && !dims)) return NULL;
    tensor *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->ndim = ndim;
    t->numel = 1;
    for (int i = 0; i < ndim; i++) {
        if (dims[i] < 0) {
            free(t);
            return NULL;
        }
        t->dims[i] = dims[i];
        t->numel *= dims[i];
    }
    t->refs = 1;
    return t;
}

tensor *op_nn_empty(int ndim, const int64_t *dims)
{
    /* size, dtype, layout, device, pin_memory, memory_format: all lists or None */
    opprof_input in[6];
    for (int i = 0; i < 6; i++) in[i] = op_nn_in_list();
    opprof_begin_inputs(&site_empty, in, 6);
    tensor *t = header(ndim, dims);
    if (t) {
        t->data = op_nn_alloc((size_t)t->numel * sizeof(float));
        if (!t->data) {
            free(t);
            t = NULL;
        }
    }
    opprof_end(&site_empty);
    return t;
}

tensor *op_nn_empty_like(const tensor *t)
{
    return op_nn_empty(t->ndim, t->dims);
}

int opprof_nn_tensor_new(int ndim, const int64_t *dims, tensor **out)
{
    if (!out) return OPPROF_E_INVAL;
    *out = op_nn_empty(ndim, dims);
    return *out ? OPPROF_OK : OPPROF_E_NOMEM;
}

int opprof_nn_tensor_zeros(int ndim, const int64_t *dims, tensor **out)
{
    if (!out) return OPPROF_E_INVAL;
    opprof_begin(&site_zeros);
    *out = op_nn_empty(ndim, dims);
    if (*out) {
        opprof_begin(&site_zero_);
        memset((*out)->data, 0, (size_t)(*out)->numel * sizeof(float));
        opprof_end(&site_zero_);
    }
    opprof_end(&site_zeros);
    return *out ? OPPROF_OK : OPPROF_E_NOMEM;
}

int opprof_nn_tensor_from(int ndim, const int64_t *dims, const float *data, size_t n, tensor **out)
{
    if (!out || (!data && n)) return OPPROF_E_INVAL;
    *out = NULL;
    tensor *t = header(ndim, dims);
    if (!t) return OPPROF_E_INVAL;
    int64_t numel = t->numel;
    free(t);
    if ((size_t)numel != n) return OPPROF_E_INVAL;
    t = op_nn_empty(ndim, dims);
    if (!t) return OPPROF_E_NOMEM;
    if (n) memcpy(t->data, data, n * sizeof(float));
    *out = t;
    return OPPROF_OK;
}

tensor *opprof_nn_tensor_retain(tensor *t)
{
    if (t) t->refs++;
    return t;
}

void opprof_nn_tensor_release(tensor *t)
{
    if (!t || --t->refs > 0) return;
    if (t->base)
        opprof_nn_tensor_release(t->base);
    else
        op_nn_free(t->data, (size_t)t->numel * sizeof(float));
    op_nn_packed_free(t);
    free(t);
}

void opprof_nn_tensor_touch(tensor *t)
{
    if (!t) return;
    t->version++;
    if (t->base) t->base->version++;
}

void opprof_nn_tensor_fill(tensor *t, float v)
{
    if (!t) return;
    for (int64_t i = 0; i < t->numel; i++) t->data[i] = v;
    opprof_nn_tensor_touch(t);
}

/* splitmix64 as a counter-based generator: element i depends only on
 * (seed, i), so a fill is the same whatever the thread count and can run in
 * parallel. */
static inline uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* (0, 1]: never 0, so log() below is finite. */
static inline float unit(uint64_t key, uint64_t i)
{
    return (float)((mix(key + (i + 1) * 0x9e3779b97f4a7c15ull) >> 40) + 1) * (1.0f / 16777216.0f);
}

void opprof_nn_tensor_uniform(tensor *t, float lo, float hi, uint64_t seed)
{
    if (!t) return;
    uint64_t key = mix(seed);
    int nt = op_nn_threads_for(t->numel);
#pragma omp parallel for num_threads(nt) if (parallel : nt > 1)
    for (int64_t i = 0; i < t->numel; i++) t->data[i] = lo + (hi - lo) * unit(key, (uint64_t)i);
    opprof_nn_tensor_touch(t);
}

void opprof_nn_tensor_normal(tensor *t, float mean, float std, uint64_t seed)
{
    if (!t) return;
    uint64_t key = mix(seed);
    int64_t pairs = (t->numel + 1) / 2;
    int nt = op_nn_threads_for(t->numel);
#pragma omp parallel for num_threads(nt) if (parallel : nt > 1)
    for (int64_t k = 0; k < pairs; k++) {
        /* Box-Muller: one pair of uniforms gives two normals */
        float r = std * sqrtf(-2.0f * logf(unit(key, 2 * (uint64_t)k)));
        float a = 6.2831853f * unit(key, 2 * (uint64_t)k + 1);
        t->data[2 * k] = mean + r * cosf(a);
        if (2 * k + 1 < t->numel) t->data[2 * k + 1] = mean + r * sinf(a);
    }
    opprof_nn_tensor_touch(t);
}

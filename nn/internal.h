/* Shared by the runtime's files: short names, the allocator, and helpers
 * that describe operator arguments to the profiler as PyTorch records them
 * (a tensor's dims, [] for a list or None, "Scalar" for a number). */
#ifndef OPPROF_NN_INTERNAL_H
#define OPPROF_NN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "opprof_nn.h"

typedef opprof_nn_tensor tensor;

/* Memory that the profiler sees: every allocation and free is reported. */
void *op_nn_alloc(size_t bytes);
void op_nn_free(void *p, size_t bytes);
/* Returns the blocks kept for reuse to the system. */
void op_nn_alloc_trim(void);

/* An output tensor shaped like dims ("aten::empty" range). */
tensor *op_nn_empty(int ndim, const int64_t *dims);
tensor *op_nn_empty_like(const tensor *t);

/* PyTorch-style argument descriptions for opprof_begin_inputs. */
static inline opprof_input op_nn_in(const tensor *t)
{
    opprof_input in = {OPPROF_DTYPE_NONE, 0, {0}};
    if (!t) return in;
    in.dtype = OPPROF_DTYPE_FLOAT;
    in.ndim = (uint8_t)t->ndim;
    for (int i = 0; i < t->ndim; i++) in.dims[i] = t->dims[i];
    return in;
}

static inline opprof_input op_nn_in_list(void)
{
    opprof_input in = {OPPROF_DTYPE_NONE, 0, {0}};
    return in;
}

static inline opprof_input op_nn_in_scalar(void)
{
    opprof_input in = {OPPROF_DTYPE_SCALAR, 0, {0}};
    return in;
}

/* A cpu_op site with a FLOPs hook. */
#define OP_NN_SITE_FLOPS(var, name_, fn) \
    static const opprof_site var = OPPROF_SITE_INIT(name_, OPPROF_CAT_CPU_OP, fn)

/* Backward ops appear as PyTorch's autograd engine shows them: an
 * "autograd::engine::evaluate_function: X" range around the node X. */
#define OP_NN_BACKWARD_SITES(var, node)                                                     \
    OPPROF_SITE(var##_eval, "autograd::engine::evaluate_function: " node);                 \
    OPPROF_SITE(var, node)

static inline void op_nn_backward_begin(const opprof_site *eval, const opprof_site *node)
{
    opprof_begin(eval);
    opprof_begin(node);
}

static inline void op_nn_backward_end(const opprof_site *eval, const opprof_site *node)
{
    opprof_end(node);
    opprof_end(eval);
}

static inline int64_t op_nn_spatial(const tensor *t)
{
    int64_t s = 1;
    for (int i = 2; i < t->ndim; i++) s *= t->dims[i];
    return s;
}

static inline int op_nn_same_shape(const tensor *a, const tensor *b)
{
    if (a->ndim != b->ndim) return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->dims[i] != b->dims[i]) return 0;
    return 1;
}

/* Compiled for AVX-512 and AVX2 besides the baseline and picked at load
 * time, for loops that need gathers or masks to vectorise. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__SANITIZE_THREAD__)
#define OP_NN_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define OP_NN_VECTOR_CLONES
#endif

/* Threads for the runtime's own loops. */
int op_nn_threads_for(int64_t work);

#endif

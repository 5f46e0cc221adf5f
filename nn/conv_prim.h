/* Convolution primitives compiled once per shape and kind, then reused. */
#ifndef OPPROF_NN_CONV_PRIM_H
#define OPPROF_NN_CONV_PRIM_H

#include "backend.h"

typedef enum conv_kind { CONV_FWD, CONV_BWD_DATA, CONV_BWD_WEIGHTS } conv_kind;

/* Argument order of each kind's op_nn_prim:
 *   forward:      src, weights, bias, dst
 *   bwd data:     diff_dst, weights, diff_src
 *   bwd weights:  src, diff_dst, diff_weights, diff_bias */
enum { CF_SRC, CF_W, CF_B, CF_DST };
enum { CD_DIFF_DST, CD_W, CD_DIFF_SRC };
enum { CW_SRC, CW_DIFF_DST, CW_DIFF_W, CW_DIFF_B };

/* The compiled primitive for x, w (bias when has_bias) and p; NULL when
 * oneDNN cannot make one. Entries live until op_nn_conv_cache_clear. */
const op_nn_prim *op_nn_conv_prim(conv_kind kind, const tensor *x, const tensor *w, int has_bias,
                                  const opprof_nn_conv2d_params *p);

/* The output size of one spatial dimension, as PyTorch computes it. */
static inline int64_t op_nn_conv_out(int64_t in, int64_t k, int stride, int pad, int dil)
{
    return (in + 2 * pad - (int64_t)dil * (k - 1) - 1) / stride + 1;
}

#endif

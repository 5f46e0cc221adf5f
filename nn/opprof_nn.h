/*
 * opprof_nn.h - the built-in model runtime.
 *
 * A small, fast float32 runtime (NCHW tensors, operators forward and backward,
 * ResNet-18, an MLP, SGD) that gives the profiler real work. It is a user of
 * include/opprof.h like any other program, so it also shows how to instrument
 * an engine: every operator is a range named as PyTorch names it, with its
 * input shapes; backend work is a nested range; FLOPs are given by the
 * operator that owns the work; tensor memory goes through one allocator that
 * reports to opprof_record_memory.
 *
 * Functions return 0 or a negative opprof_status. A tensor or model is used by
 * one thread at a time; operators themselves run on `opprof_nn_set_threads`
 * threads.
 */
#ifndef OPPROF_NN_H
#define OPPROF_NN_H

#include <stddef.h>
#include <stdint.h>

#include "opprof.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================
 * Runtime
 * ====================================================================== */

/* Threads used by every operator (OpenMP, oneDNN). n <= 0: OpenMP's default
 * (OMP_NUM_THREADS when set, else every core). */
int opprof_nn_set_threads(int n);
int opprof_nn_threads(void);

/* The runtime's OpenMP threads join the running session's sampling
 * (opprof_sample_thread): they record no ranges, and their samples count
 * for the operator the recording thread runs. Call after opprof_start. */
int opprof_nn_sample_threads(void);

/* Frees what the runtime keeps between calls: compiled oneDNN primitives and
 * the memory blocks kept for reuse (up to 1 GiB). The runtime stays usable. */
void opprof_nn_shutdown(void);

/* ======================================================================
 * Tensors: float32, contiguous, up to 4 dims (NCHW for images)
 * ====================================================================== */

#define OPPROF_NN_MAX_DIMS 4

typedef struct opprof_nn_tensor opprof_nn_tensor;
struct opprof_nn_tensor {
    float *data;
    int ndim;
    int64_t dims[OPPROF_NN_MAX_DIMS];
    int64_t numel;
    uint64_t version;          /* bumped by opprof_nn_tensor_touch: caches key on it */
    int refs;                  /* opprof_nn_tensor_retain / release */
    opprof_nn_tensor *base;    /* a view's owner (data belongs to it), else NULL */
    void *packed;              /* the backend's cached copies of this tensor */
};

/* A new tensor with uninitialised data ("aten::empty"), one reference. */
int opprof_nn_tensor_new(int ndim, const int64_t *dims, opprof_nn_tensor **out);
/* The same, filled with zeros ("aten::zeros"). */
int opprof_nn_tensor_zeros(int ndim, const int64_t *dims, opprof_nn_tensor **out);
/* A copy of n floats in a new tensor of the given shape (n must equal its size). */
int opprof_nn_tensor_from(int ndim, const int64_t *dims, const float *data, size_t n, opprof_nn_tensor **out);
opprof_nn_tensor *opprof_nn_tensor_retain(opprof_nn_tensor *t);
/* Drops a reference; frees the tensor at zero. NULL is ignored. */
void opprof_nn_tensor_release(opprof_nn_tensor *t);
/* Call after writing t->data directly, so that cached copies are refreshed. */
void opprof_nn_tensor_touch(opprof_nn_tensor *t);
/* Fills with N(mean, std) from a seeded generator (deterministic). */
void opprof_nn_tensor_normal(opprof_nn_tensor *t, float mean, float std, uint64_t seed);
/* Fills with U(lo, hi) from a seeded generator (deterministic). */
void opprof_nn_tensor_uniform(opprof_nn_tensor *t, float lo, float hi, uint64_t seed);
void opprof_nn_tensor_fill(opprof_nn_tensor *t, float v);

/* ======================================================================
 * Operators. Each allocates its outputs (release them); a NULL output
 * pointer in a backward call means "not needed".
 * ====================================================================== */

typedef struct opprof_nn_conv2d_params {
    int stride[2], padding[2], dilation[2], groups;
} opprof_nn_conv2d_params;

/* {stride, padding, dilation 1, groups 1} */
opprof_nn_conv2d_params opprof_nn_conv2d_params_make(int stride, int padding);

/* aten::conv2d: x [N,C,H,W], w [O,C/groups,KH,KW], b [O] or NULL. */
int opprof_nn_conv2d(const opprof_nn_tensor *x, const opprof_nn_tensor *w, const opprof_nn_tensor *b,
                     const opprof_nn_conv2d_params *p, opprof_nn_tensor **y);
/* ConvolutionBackward0: gradients of x, w and b (db only when asked). */
int opprof_nn_conv2d_backward(const opprof_nn_tensor *x, const opprof_nn_tensor *w, const opprof_nn_conv2d_params *p,
                              const opprof_nn_tensor *dy, opprof_nn_tensor **dx, opprof_nn_tensor **dw,
                              opprof_nn_tensor **db);

/* aten::batch_norm over dim 1. Training: batch statistics (biased variance)
 * and a running-stat update (unbiased variance, `momentum`); eval: running
 * statistics. save_mean / save_invstd (may be NULL) receive what the
 * backward needs. running_* may be NULL in training. */
int opprof_nn_batch_norm(const opprof_nn_tensor *x, const opprof_nn_tensor *w, const opprof_nn_tensor *b,
                         opprof_nn_tensor *running_mean, opprof_nn_tensor *running_var, int training,
                         float momentum, float eps, opprof_nn_tensor **y, opprof_nn_tensor **save_mean,
                         opprof_nn_tensor **save_invstd);
/* NativeBatchNormBackward0 (training: through the batch statistics). */
int opprof_nn_batch_norm_backward(const opprof_nn_tensor *x, const opprof_nn_tensor *w,
                                  const opprof_nn_tensor *save_mean, const opprof_nn_tensor *save_invstd,
                                  int training, const opprof_nn_tensor *dy, opprof_nn_tensor **dx,
                                  opprof_nn_tensor **dw, opprof_nn_tensor **db);

int opprof_nn_relu(const opprof_nn_tensor *x, opprof_nn_tensor **y); /* aten::relu */
int opprof_nn_relu_(opprof_nn_tensor *x);                            /* aten::relu_, in place */
/* ReluBackward0: dx = dy where y > 0, else 0 (y: the relu's output). */
int opprof_nn_relu_backward(const opprof_nn_tensor *y, const opprof_nn_tensor *dy, opprof_nn_tensor **dx);

typedef struct opprof_nn_pool_params {
    int kernel[2], stride[2], padding[2];
} opprof_nn_pool_params;

int opprof_nn_max_pool2d(const opprof_nn_tensor *x, const opprof_nn_pool_params *p, opprof_nn_tensor **y);
/* MaxPool2DWithIndicesBackward0: the maximum of each window is found again
 * from x (the first one in scan order, as the forward picks it). */
int opprof_nn_max_pool2d_backward(const opprof_nn_tensor *x, const opprof_nn_pool_params *p,
                                  const opprof_nn_tensor *dy, opprof_nn_tensor **dx);

int opprof_nn_adaptive_avg_pool2d(const opprof_nn_tensor *x, int out_h, int out_w, opprof_nn_tensor **y);
int opprof_nn_adaptive_avg_pool2d_backward(const opprof_nn_tensor *x, const opprof_nn_tensor *dy,
                                           opprof_nn_tensor **dx);

/* aten::flatten(x, 1): a view sharing x's data. */
int opprof_nn_flatten(opprof_nn_tensor *x, opprof_nn_tensor **y);

/* aten::linear: y = x w^T + b; x [M,K], w [N,K], b [N] or NULL. */
int opprof_nn_linear(const opprof_nn_tensor *x, const opprof_nn_tensor *w, const opprof_nn_tensor *b,
                     opprof_nn_tensor **y);
/* AddmmBackward0 */
int opprof_nn_linear_backward(const opprof_nn_tensor *x, const opprof_nn_tensor *w, const opprof_nn_tensor *dy,
                              opprof_nn_tensor **dx, opprof_nn_tensor **dw, opprof_nn_tensor **db);

int opprof_nn_add(const opprof_nn_tensor *a, const opprof_nn_tensor *b, opprof_nn_tensor **y); /* aten::add */
int opprof_nn_add_(opprof_nn_tensor *a, const opprof_nn_tensor *b);                          /* aten::add_ */

/* aten::softmax along dim (negative: from the end). */
int opprof_nn_softmax(const opprof_nn_tensor *x, int dim, opprof_nn_tensor **y);
/* SoftmaxBackward0, from the forward's output y. */
int opprof_nn_softmax_backward(const opprof_nn_tensor *y, const opprof_nn_tensor *dy, int dim,
                               opprof_nn_tensor **dx);

/* aten::cross_entropy_loss, mean over the batch: logits [N,C], targets N
 * class indices. logp (may be NULL) receives log_softmax(logits), which the
 * backward needs. */
int opprof_nn_cross_entropy(const opprof_nn_tensor *logits, const int64_t *targets, float *loss,
                            opprof_nn_tensor **logp);
/* The gradient of the mean loss (times dloss) with respect to the logits. */
int opprof_nn_cross_entropy_backward(const opprof_nn_tensor *logp, const int64_t *targets, float dloss,
                                     opprof_nn_tensor **dlogits);

/* ======================================================================
 * FLOPs hooks, as PyTorch counts them, for opprof_site.flops. Users'
 * operators with the same argument layout can reuse them.
 * ====================================================================== */

/* aten::addmm (bias, m1 [M,K], m2 [K,N], ...): 2*M*K*N */
uint64_t opprof_nn_flops_addmm(const opprof_input *in, unsigned n);
/* aten::mm (a [M,K], b [K,N]): 2*M*K*N */
uint64_t opprof_nn_flops_mm(const opprof_input *in, unsigned n);
/* aten::bmm (a [B,M,K], b [B,K,N]): 2*B*M*K*N */
uint64_t opprof_nn_flops_bmm(const opprof_input *in, unsigned n);
/* aten::add / aten::mul: the elements of the first input */
uint64_t opprof_nn_flops_elementwise(const opprof_input *in, unsigned n);
/* aten::conv2d: 2*N*Cout*Hout*Wout*(Cin/groups)*KH*KW, no bias term. */
uint64_t opprof_nn_conv2d_flops(const opprof_nn_tensor *x, const opprof_nn_tensor *w,
                                const opprof_nn_conv2d_params *p);

/* ======================================================================
 * Models. Parameters and buffers carry torchvision's state_dict names.
 * ====================================================================== */

typedef struct opprof_nn_model opprof_nn_model;

typedef struct opprof_nn_param {
    const char *name;         /* "layer1.0.conv1.weight" */
    opprof_nn_tensor *value;
    opprof_nn_tensor *grad;   /* NULL until a backward gives one */
    int is_buffer;            /* running statistics: not trained */
} opprof_nn_param;

/* torchvision.models.resnet18(num_classes), initialised as torchvision does
 * (Kaiming normal fan_out convolutions, unit batch norms, default Linear)
 * from a deterministic generator seeded with `seed`. */
int opprof_nn_resnet18(int num_classes, uint64_t seed, opprof_nn_model **out);
/* torchvision's BasicBlock(in, out, stride), with the 1x1 conv + batch norm
 * downsample when stride != 1 or in != out. */
int opprof_nn_basic_block(int in_ch, int out_ch, int stride, uint64_t seed, opprof_nn_model **out);
/* Linear(sizes[0], sizes[1]) - ReLU - ... - Linear(sizes[n-2], sizes[n-1]),
 * parameters "0.weight", "0.bias", "2.weight", ... as nn.Sequential names them. */
int opprof_nn_mlp(int n_sizes, const int *sizes, uint64_t seed, opprof_nn_model **out);

/* Forward pass. training = 1 uses batch statistics and keeps what the
 * backward needs (until the backward, or the next forward). */
int opprof_nn_model_forward(opprof_nn_model *m, opprof_nn_tensor *x, int training, opprof_nn_tensor **y);
/* Backward from dy (the gradient of the output of the last training
 * forward); accumulates into each parameter's grad. */
int opprof_nn_model_backward(opprof_nn_model *m, const opprof_nn_tensor *dy);

size_t opprof_nn_model_param_count(const opprof_nn_model *m);
/* Parameter i (0 <= i < count), in state_dict order. */
opprof_nn_param *opprof_nn_model_param(opprof_nn_model *m, size_t i);
/* The parameter or buffer with that state_dict name, NULL when none. */
opprof_nn_param *opprof_nn_model_find(opprof_nn_model *m, const char *name);
/* Trainable scalars (buffers excluded). */
uint64_t opprof_nn_model_numel(const opprof_nn_model *m);
void opprof_nn_model_free(opprof_nn_model *m);

/* ======================================================================
 * Training: SGD and a training step
 * ====================================================================== */

typedef struct opprof_nn_sgd_options {
    float lr, momentum, dampening, weight_decay;
    int nesterov;
} opprof_nn_sgd_options;

typedef struct opprof_nn_sgd opprof_nn_sgd;

/* torch.optim.SGD over the model's trainable parameters. */
int opprof_nn_sgd_new(opprof_nn_model *m, const opprof_nn_sgd_options *o, opprof_nn_sgd **out);
/* "Optimizer.zero_grad#SGD.zero_grad": drops the gradients (set_to_none). */
int opprof_nn_sgd_zero_grad(opprof_nn_sgd *s);
/* "Optimizer.step#SGD.step" */
int opprof_nn_sgd_step(opprof_nn_sgd *s);
void opprof_nn_sgd_free(opprof_nn_sgd *s);

/* Called by opprof_nn_train_step between the backward and the SGD step,
 * every gradient in place: where data-parallel training makes them the
 * mean over its ranks (DistributedDataParallel's allreduce). The runtime
 * knows nothing of how; a nonzero return ends the step with that status.
 * Write a tensor's data there, then opprof_nn_tensor_touch it. */
typedef int (*opprof_nn_grad_hook)(opprof_nn_model *m, void *ctx);
/* fn NULL removes the hook. */
void opprof_nn_sgd_set_grad_hook(opprof_nn_sgd *s, opprof_nn_grad_hook fn, void *ctx);

/* One step inside the user annotation "train_step": zero_grad, training
 * forward, cross-entropy, backward, the gradient hook, SGD step. */
int opprof_nn_train_step(opprof_nn_model *m, opprof_nn_sgd *s, opprof_nn_tensor *x, const int64_t *targets,
                         float *loss);

#ifdef __cplusplus
}
#endif

#endif /* OPPROF_NN_H */

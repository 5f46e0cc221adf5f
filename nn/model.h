/* Models: a parameter registry with state_dict names, and layers that keep
 * what their backward needs from a training forward. Each model kind (ResNet,
 * BasicBlock, MLP) supplies forward/backward through model_ops. */
#ifndef OPPROF_NN_MODEL_H
#define OPPROF_NN_MODEL_H

#include "internal.h"

typedef opprof_nn_param param;

typedef struct model_ops {
    int (*forward)(void *impl, tensor *x, int training, tensor **y);
    int (*backward)(void *impl, const tensor *dy);
    void (*free_impl)(void *impl);
} model_ops;

struct opprof_nn_model {
    const model_ops *ops;
    void *impl;
    param **params; /* each allocated alone: layers keep pointers to them */
    size_t nparams, cap;
    uint64_t seed;
};

/* A model of the given kind with a zeroed impl of impl_size bytes. */
opprof_nn_model *op_nn_model_new(const model_ops *ops, uint64_t seed, size_t impl_size);
/* Registers prefix.name with a new tensor, its values for the caller to
 * set; NULL when out of memory. */
param *op_nn_model_add(opprof_nn_model *m, const char *prefix, const char *name, int ndim, const int64_t *dims,
                       int is_buffer);
/* A seed for the next parameter's initialisation, derived from the model's. */
uint64_t op_nn_model_next_seed(opprof_nn_model *m);
/* Adds g to p's gradient (takes g over), as the autograd engine's
 * AccumulateGrad does. */
int op_nn_param_accumulate(param *p, tensor *g);
/* Releases *t and sets it to NULL. */
void op_nn_clear(tensor **t);

/* Layers. */
typedef struct nn_conv {
    param *w, *b;
    opprof_nn_conv2d_params p;
    tensor *x; /* saved input */
} nn_conv;

typedef struct nn_bn {
    param *w, *b, *mean, *var;
    tensor *x, *save_mean, *save_invstd;
    int training;
} nn_bn;

typedef struct nn_linear {
    param *w, *b;
    tensor *x;
} nn_linear;

int op_nn_conv_init(opprof_nn_model *m, nn_conv *c, const char *prefix, int in, int out, int k, int stride, int pad,
                    int bias);
int op_nn_conv_forward(nn_conv *c, tensor *x, int training, tensor **y);
/* dx NULL: the input's gradient is not needed. Releases the saved input. */
int op_nn_conv_backward(nn_conv *c, const tensor *dy, tensor **dx);

int op_nn_bn_init(opprof_nn_model *m, nn_bn *b, const char *prefix, int ch);
int op_nn_bn_forward(nn_bn *b, tensor *x, int training, tensor **y);
int op_nn_bn_backward(nn_bn *b, const tensor *dy, tensor **dx);

int op_nn_linear_init(opprof_nn_model *m, nn_linear *l, const char *prefix, int in, int out);
int op_nn_linear_forward(nn_linear *l, tensor *x, int training, tensor **y);
int op_nn_linear_backward(nn_linear *l, const tensor *dy, tensor **dx);

void op_nn_conv_clear(nn_conv *c);
void op_nn_bn_clear(nn_bn *b);
void op_nn_linear_clear(nn_linear *l);

/* dx = dy + dy2 for a tensor used twice (the autograd engine's sum). */
int op_nn_grad_sum(tensor **dx, tensor *other);

#endif

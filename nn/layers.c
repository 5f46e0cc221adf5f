/* Layers over the operators: parameters initialised as torch.nn does, the
 * input (and statistics) kept by a training forward, and a backward that
 * hands parameter gradients to the registry and releases what it kept. */
#include <math.h>

#include "model.h"

int op_nn_conv_init(opprof_nn_model *m, nn_conv *c, const char *prefix, int in, int out, int k, int stride, int pad,
                    int bias)
{
    int64_t wd[4] = {out, in, k, k}, bd[1] = {out};
    c->p = opprof_nn_conv2d_params_make(stride, pad);
    c->w = op_nn_model_add(m, prefix, "weight", 4, wd, 0);
    if (!c->w) return OPPROF_E_NOMEM;
    /* torchvision's ResNet: kaiming_normal_(mode="fan_out", nonlinearity="relu") */
    opprof_nn_tensor_normal(c->w->value, 0.0f, (float)sqrt(2.0 / ((double)out * k * k)), op_nn_model_next_seed(m));
    if (bias) {
        c->b = op_nn_model_add(m, prefix, "bias", 1, bd, 0);
        if (!c->b) return OPPROF_E_NOMEM;
        /* nn.Conv2d's default: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) */
        float bound = (float)(1.0 / sqrt((double)in * k * k));
        opprof_nn_tensor_uniform(c->b->value, -bound, bound, op_nn_model_next_seed(m));
    }
    return OPPROF_OK;
}

int op_nn_conv_forward(nn_conv *c, tensor *x, int training, tensor **y)
{
    op_nn_clear(&c->x);
    int rc = opprof_nn_conv2d(x, c->w->value, c->b ? c->b->value : NULL, &c->p, y);
    if (!rc && training) c->x = opprof_nn_tensor_retain(x);
    return rc;
}

int op_nn_conv_backward(nn_conv *c, const tensor *dy, tensor **dx)
{
    if (!c->x) return OPPROF_E_INVAL;
    tensor *dw = NULL, *db = NULL;
    int rc = opprof_nn_conv2d_backward(c->x, c->w->value, &c->p, dy, dx, &dw, c->b ? &db : NULL);
    if (!rc) rc = op_nn_param_accumulate(c->w, dw);
    else opprof_nn_tensor_release(dw);
    if (!rc && c->b) rc = op_nn_param_accumulate(c->b, db);
    else opprof_nn_tensor_release(db);
    op_nn_clear(&c->x);
    return rc;
}

void op_nn_conv_clear(nn_conv *c)
{
    op_nn_clear(&c->x);
}

int op_nn_bn_init(opprof_nn_model *m, nn_bn *b, const char *prefix, int ch)
{
    int64_t d[1] = {ch};
    b->w = op_nn_model_add(m, prefix, "weight", 1, d, 0);
    b->b = op_nn_model_add(m, prefix, "bias", 1, d, 0);
    b->mean = op_nn_model_add(m, prefix, "running_mean", 1, d, 1);
    b->var = op_nn_model_add(m, prefix, "running_var", 1, d, 1);
    if (!b->w || !b->b || !b->mean || !b->var) return OPPROF_E_NOMEM;
    opprof_nn_tensor_fill(b->w->value, 1.0f);
    opprof_nn_tensor_fill(b->b->value, 0.0f);
    opprof_nn_tensor_fill(b->mean->value, 0.0f);
    opprof_nn_tensor_fill(b->var->value, 1.0f);
    return OPPROF_OK;
}

void op_nn_bn_clear(nn_bn *b)
{
    op_nn_clear(&b->x);
    op_nn_clear(&b->save_mean);
    op_nn_clear(&b->save_invstd);
}

int op_nn_bn_forward(nn_bn *b, tensor *x, int training, tensor **y)
{
    op_nn_bn_clear(b);
    tensor *mean = NULL, *invstd = NULL;
    int rc = opprof_nn_batch_norm(x, b->w->value, b->b->value, b->mean->value, b->var->value, training, 0.1f, 1e-5f,
                                  y, training ? &mean : NULL, training ? &invstd : NULL);
    if (!rc && training) {
        b->x = opprof_nn_tensor_retain(x);
        b->save_mean = mean;
        b->save_invstd = invstd;
        b->training = 1;
    }
    return rc;
}

int op_nn_bn_backward(nn_bn *b, const tensor *dy, tensor **dx)
{
    if (!b->x) return OPPROF_E_INVAL;
    tensor *dw = NULL, *db = NULL;
    int rc = opprof_nn_batch_norm_backward(b->x, b->w->value, b->save_mean, b->save_invstd, b->training, dy, dx, &dw,
                                           &db);
    if (!rc) {
        rc = op_nn_param_accumulate(b->w, dw);
        if (!rc) rc = op_nn_param_accumulate(b->b, db);
        else opprof_nn_tensor_release(db);
    }
    op_nn_bn_clear(b);
    return rc;
}

int op_nn_linear_init(opprof_nn_model *m, nn_linear *l, const char *prefix, int in, int out)
{
    int64_t wd[2] = {out, in}, bd[1] = {out};
    l->w = op_nn_model_add(m, prefix, "weight", 2, wd, 0);
    l->b = op_nn_model_add(m, prefix, "bias", 1, bd, 0);
    if (!l->w || !l->b) return OPPROF_E_NOMEM;
    /* nn.Linear: kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(in), 1/sqrt(in)); the bias the same */
    float bound = in > 0 ? (float)(1.0 / sqrt((double)in)) : 0.0f;
    opprof_nn_tensor_uniform(l->w->value, -bound, bound, op_nn_model_next_seed(m));
    opprof_nn_tensor_uniform(l->b->value, -bound, bound, op_nn_model_next_seed(m) ^ 0x5bd1e995u);
    return OPPROF_OK;
}

int op_nn_linear_forward(nn_linear *l, tensor *x, int training, tensor **y)
{
    op_nn_clear(&l->x);
    int rc = opprof_nn_linear(x, l->w->value, l->b->value, y);
    if (!rc && training) l->x = opprof_nn_tensor_retain(x);
    return rc;
}

int op_nn_linear_backward(nn_linear *l, const tensor *dy, tensor **dx)
{
    if (!l->x) return OPPROF_E_INVAL;
    tensor *dw = NULL, *db = NULL;
    int rc = opprof_nn_linear_backward(l->x, l->w->value, dy, dx, &dw, &db);
    if (!rc) {
        rc = op_nn_param_accumulate(l->w, dw);
        if (!rc) rc = op_nn_param_accumulate(l->b, db);
        else opprof_nn_tensor_release(db);
    }
    op_nn_clear(&l->x);
    return rc;
}

void op_nn_linear_clear(nn_linear *l)
{
    op_nn_clear(&l->x);
}

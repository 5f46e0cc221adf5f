/* ResNet-18 exactly as torchvision builds it: a 7x7/2 stem with batch norm,
 * ReLU and a 3x3/2 max pool, four stages of two BasicBlocks (64, 128, 256,
 * 512 channels; the first block of stages 2-4 strides by 2 and has a 1x1
 * conv + batch norm downsample), global average pool, flatten, fc. A
 * BasicBlock alone is a model too (the fixtures test one). */
#include <stdio.h>
#include <stdlib.h>

#include "model.h"

OP_NN_BACKWARD_SITES(site_add_bwd, "AddBackward0");
OP_NN_BACKWARD_SITES(site_reshape_bwd, "ReshapeAliasBackward0");

typedef struct block {
    nn_conv conv1, conv2, ds_conv;
    nn_bn bn1, bn2, ds_bn;
    int has_ds;
    tensor *r1, *out; /* the ReLUs' outputs, for their backward */
} block;

typedef struct resnet {
    nn_conv conv1;
    nn_bn bn1;
    tensor *r1, *pool_in, *avg_in;
    opprof_nn_pool_params pool;
    block blocks[8];
    int nblocks;
    nn_linear fc;
    int trained; /* a training forward is waiting for its backward */
} resnet;

static int block_init(opprof_nn_model *m, block *b, const char *prefix, int in, int out, int stride)
{
    char name[64];
    int rc = 0;
    snprintf(name, sizeof name, "%s%sconv1", prefix, *prefix ? "." : "");
    rc |= op_nn_conv_init(m, &b->conv1, name, in, out, 3, stride, 1, 0);
    snprintf(name, sizeof name, "%s%sbn1", prefix, *prefix ? "." : "");
    rc |= op_nn_bn_init(m, &b->bn1, name, out);
    snprintf(name, sizeof name, "%s%sconv2", prefix, *prefix ? "." : "");
    rc |= op_nn_conv_init(m, &b->conv2, name, out, out, 3, 1, 1, 0);
    snprintf(name, sizeof name, "%s%sbn2", prefix, *prefix ? "." : "");
    rc |= op_nn_bn_init(m, &b->bn2, name, out);
    b->has_ds = stride != 1 || in != out;
    if (b->has_ds) {
        snprintf(name, sizeof name, "%s%sdownsample.0", prefix, *prefix ? "." : "");
        rc |= op_nn_conv_init(m, &b->ds_conv, name, in, out, 1, stride, 0, 0);
        snprintf(name, sizeof name, "%s%sdownsample.1", prefix, *prefix ? "." : "");
        rc |= op_nn_bn_init(m, &b->ds_bn, name, out);
    }
    return rc ? OPPROF_E_NOMEM : OPPROF_OK;
}

static void block_clear(block *b)
{
    op_nn_conv_clear(&b->conv1);
    op_nn_conv_clear(&b->conv2);
    op_nn_conv_clear(&b->ds_conv);
    op_nn_bn_clear(&b->bn1);
    op_nn_bn_clear(&b->bn2);
    op_nn_bn_clear(&b->ds_bn);
    op_nn_clear(&b->r1);
    op_nn_clear(&b->out);
}

/* conv-bn-relu, conv-bn, + identity (or downsample), relu; ReLUs in place. */
static int block_forward(block *b, tensor *x, int tr, tensor **y)
{
    block_clear(b);
    tensor *t = NULL, *u = NULL, *id = NULL;
    int rc = op_nn_conv_forward(&b->conv1, x, tr, &t);
    if (!rc) rc = op_nn_bn_forward(&b->bn1, t, tr, &u);
    op_nn_clear(&t);
    if (!rc) rc = opprof_nn_relu_(u);
    if (!rc && tr) b->r1 = opprof_nn_tensor_retain(u);
    if (!rc) rc = op_nn_conv_forward(&b->conv2, u, tr, &t);
    op_nn_clear(&u);
    if (!rc) rc = op_nn_bn_forward(&b->bn2, t, tr, &u);
    op_nn_clear(&t);
    if (!rc && b->has_ds) {
        rc = op_nn_conv_forward(&b->ds_conv, x, tr, &t);
        if (!rc) rc = op_nn_bn_forward(&b->ds_bn, t, tr, &id);
        op_nn_clear(&t);
    }
    if (!rc) rc = opprof_nn_add_(u, b->has_ds ? id : x);
    op_nn_clear(&id);
    if (!rc) rc = opprof_nn_relu_(u);
    if (!rc && tr) b->out = opprof_nn_tensor_retain(u);
    if (rc) op_nn_clear(&u);
    *y = u;
    return rc;
}

static int block_backward(block *b, const tensor *dy, tensor **dx)
{
    tensor *g = NULL, *gm = NULL, *gi = NULL, *t = NULL;
    *dx = NULL;
    int rc = opprof_nn_relu_backward(b->out, dy, &g);
    if (rc) goto done;
    op_nn_backward_begin(&site_add_bwd_eval, &site_add_bwd); /* the sum passes g to both branches */
    op_nn_backward_end(&site_add_bwd_eval, &site_add_bwd);
    if (b->has_ds) {
        rc = op_nn_bn_backward(&b->ds_bn, g, &t);
        if (!rc) rc = op_nn_conv_backward(&b->ds_conv, t, &gi);
        op_nn_clear(&t);
        if (rc) goto done;
    }
    rc = op_nn_bn_backward(&b->bn2, g, &t);
    if (!rc) rc = op_nn_conv_backward(&b->conv2, t, &gm);
    op_nn_clear(&t);
    if (!rc) rc = opprof_nn_relu_backward(b->r1, gm, &t);
    op_nn_clear(&gm);
    if (!rc) rc = op_nn_bn_backward(&b->bn1, t, &gm);
    op_nn_clear(&t);
    if (!rc) rc = op_nn_conv_backward(&b->conv1, gm, &t);
    op_nn_clear(&gm);
    if (!rc) {
        if (b->has_ds)
            rc = op_nn_grad_sum(&t, gi), gi = NULL;
        else
            rc = op_nn_grad_sum(&t, opprof_nn_tensor_retain(g));
    }
done:
    op_nn_clear(&g);
    op_nn_clear(&gi);
    block_clear(b);
    if (rc)
        op_nn_clear(&t);
    else
        *dx = t;
    return rc;
}

/* ---- the BasicBlock as a model ---- */

static int bb_forward(void *impl, tensor *x, int training, tensor **y)
{
    return block_forward(impl, x, training, y);
}

static int bb_backward(void *impl, const tensor *dy)
{
    block *b = impl;
    if (!b->out) return OPPROF_E_INVAL;
    tensor *dx = NULL;
    int rc = block_backward(b, dy, &dx);
    opprof_nn_tensor_release(dx);
    return rc;
}

static void bb_free(void *impl)
{
    block_clear(impl);
    free(impl);
}

static const model_ops basic_block_ops = {bb_forward, bb_backward, bb_free};

int opprof_nn_basic_block(int in_ch, int out_ch, int stride, uint64_t seed, opprof_nn_model **out)
{
    if (!out || in_ch < 1 || out_ch < 1 || stride < 1) return OPPROF_E_INVAL;
    *out = NULL;
    opprof_nn_model *m = op_nn_model_new(&basic_block_ops, seed, sizeof(block));
    if (!m) return OPPROF_E_NOMEM;
    int rc = block_init(m, m->impl, "", in_ch, out_ch, stride);
    if (rc) {
        opprof_nn_model_free(m);
        return rc;
    }
    *out = m;
    return OPPROF_OK;
}

/* ---- ResNet-18 ---- */

static void resnet_clear(resnet *r)
{
    op_nn_conv_clear(&r->conv1);
    op_nn_bn_clear(&r->bn1);
    op_nn_clear(&r->r1);
    op_nn_clear(&r->pool_in);
    op_nn_clear(&r->avg_in);
    for (int i = 0; i < r->nblocks; i++) block_clear(&r->blocks[i]);
    op_nn_linear_clear(&r->fc);
    r->trained = 0;
}

static int resnet_forward(void *impl, tensor *x, int tr, tensor **y)
{
    resnet *r = impl;
    resnet_clear(r);
    tensor *t = NULL, *u = NULL;
    int rc = op_nn_conv_forward(&r->conv1, x, tr, &t);
    if (!rc) rc = op_nn_bn_forward(&r->bn1, t, tr, &u);
    op_nn_clear(&t);
    if (!rc) rc = opprof_nn_relu_(u);
    if (!rc) rc = opprof_nn_max_pool2d(u, &r->pool, &t);
    if (!rc && tr) r->pool_in = opprof_nn_tensor_retain(u); /* also the ReLU's output */
    op_nn_clear(&u);
    for (int i = 0; !rc && i < r->nblocks; i++) {
        rc = block_forward(&r->blocks[i], t, tr, &u);
        op_nn_clear(&t);
        t = u;
        u = NULL;
    }
    if (!rc) rc = opprof_nn_adaptive_avg_pool2d(t, 1, 1, &u);
    if (!rc && tr) r->avg_in = opprof_nn_tensor_retain(t);
    op_nn_clear(&t);
    if (!rc) rc = opprof_nn_flatten(u, &t);
    op_nn_clear(&u);
    if (!rc) rc = op_nn_linear_forward(&r->fc, t, tr, &u);
    op_nn_clear(&t);
    if (rc) {
        op_nn_clear(&u);
        resnet_clear(r);
    }
    r->trained = tr && !rc;
    *y = u;
    return rc;
}

static int resnet_backward(void *impl, const tensor *dy)
{
    resnet *r = impl;
    if (!r->trained) return OPPROF_E_INVAL;
    tensor *g = NULL, *t = NULL;
    int rc = op_nn_linear_backward(&r->fc, dy, &g);
    if (!rc) { /* flatten's gradient is the same data seen as [N, C, 1, 1] */
        op_nn_backward_begin(&site_reshape_bwd_eval, &site_reshape_bwd);
        g->ndim = 4;
        g->dims[2] = g->dims[3] = 1;
        op_nn_backward_end(&site_reshape_bwd_eval, &site_reshape_bwd);
        rc = opprof_nn_adaptive_avg_pool2d_backward(r->avg_in, g, &t);
    }
    op_nn_clear(&g);
    for (int i = r->nblocks - 1; !rc && i >= 0; i--) {
        rc = block_backward(&r->blocks[i], t, &g);
        op_nn_clear(&t);
        t = g;
        g = NULL;
    }
    if (!rc) rc = opprof_nn_max_pool2d_backward(r->pool_in, &r->pool, t, &g);
    op_nn_clear(&t);
    if (!rc) rc = opprof_nn_relu_backward(r->pool_in, g, &t);
    op_nn_clear(&g);
    if (!rc) rc = op_nn_bn_backward(&r->bn1, t, &g);
    op_nn_clear(&t);
    if (!rc) rc = op_nn_conv_backward(&r->conv1, g, NULL); /* the image needs no gradient */
    op_nn_clear(&g);
    resnet_clear(r);
    return rc;
}

static void resnet_free(void *impl)
{
    resnet_clear(impl);
    free(impl);
}

static const model_ops resnet_ops = {resnet_forward, resnet_backward, resnet_free};

int opprof_nn_resnet18(int num_classes, uint64_t seed, opprof_nn_model **out)
{
    if (!out || num_classes < 1) return OPPROF_E_INVAL;
    *out = NULL;
    opprof_nn_model *m = op_nn_model_new(&resnet_ops, seed, sizeof(resnet));
    if (!m) return OPPROF_E_NOMEM;
    resnet *r = m->impl;
    r->pool = (opprof_nn_pool_params){{3, 3}, {2, 2}, {1, 1}};
    int rc = op_nn_conv_init(m, &r->conv1, "conv1", 3, 64, 7, 2, 3, 0);
    if (!rc) rc = op_nn_bn_init(m, &r->bn1, "bn1", 64);
    static const int widths[4] = {64, 128, 256, 512};
    int in = 64;
    for (int s = 0; s < 4 && !rc; s++)
        for (int j = 0; j < 2 && !rc; j++) {
            char prefix[32];
            snprintf(prefix, sizeof prefix, "layer%d.%d", s + 1, j);
            rc = block_init(m, &r->blocks[r->nblocks++], prefix, in, widths[s], s > 0 && j == 0 ? 2 : 1);
            in = widths[s];
        }
    if (!rc) rc = op_nn_linear_init(m, &r->fc, "fc", 512, num_classes);
    if (rc) {
        opprof_nn_model_free(m);
        return rc;
    }
    *out = m;
    return OPPROF_OK;
}

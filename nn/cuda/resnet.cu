/* torchvision's ResNet-18 in eval mode on the GPU, its parameters given by
 * state_dict name (the CPU runtime's, so both compute the same function). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct nc_conv {
    opprof_nn_cuda_tensor *w;
    opprof_nn_cuda_conv p;
} nc_conv;

typedef struct nc_bn {
    opprof_nn_cuda_tensor *w, *b, *mean, *var;
} nc_bn;

typedef struct nc_block {
    nc_conv c1, c2, down;
    nc_bn b1, b2, down_bn;
    int has_down;
} nc_block;

struct opprof_nn_cuda_model {
    nc_conv conv1;
    nc_bn bn1;
    nc_block blocks[8];
    opprof_nn_cuda_tensor *fc_w, *fc_b;
    int classes;
};

typedef struct loader {
    opprof_nn_cuda_param_fn get;
    void *ctx;
} loader;

/* A parameter copied to the device, outside any operator range: loading a
 * model is not part of what is profiled. */
static int load(const loader *l, const char *prefix, const char *name, int ndim, const int64_t *dims,
                opprof_nn_cuda_tensor **out)
{
    char full[128];
    snprintf(full, sizeof full, "%s%s", prefix, name);
    int64_t numel = 0;
    const float *v = l->get(l->ctx, full, &numel);
    int rc = op_nc_tensor_new(ndim, dims, out);
    if (rc) return rc;
    if (!v || numel != (*out)->numel) {
        opprof_nn_cuda_tensor_free(*out);
        *out = NULL;
        return op_nc_fail(OPPROF_E_NOT_FOUND, "resnet18: parameter %s missing or of the wrong size", full);
    }
    return op_nc_cuda(cudaMemcpyAsync((*out)->data, v, (size_t)numel * sizeof(float), cudaMemcpyHostToDevice,
                                      op_nc.stream),
                      "cudaMemcpyAsync (parameters)");
}

static int load_conv(const loader *l, const char *prefix, int in, int out, int k, int stride, int pad, nc_conv *c)
{
    int64_t d[4] = {out, in, k, k};
    c->p.stride = stride;
    c->p.padding = pad;
    return load(l, prefix, "weight", 4, d, &c->w);
}

static int load_bn(const loader *l, const char *prefix, int ch, nc_bn *b)
{
    int64_t d[1] = {ch};
    int rc;
    if ((rc = load(l, prefix, "weight", 1, d, &b->w)) || (rc = load(l, prefix, "bias", 1, d, &b->b)) ||
        (rc = load(l, prefix, "running_mean", 1, d, &b->mean)) || (rc = load(l, prefix, "running_var", 1, d, &b->var)))
        return rc;
    return 0;
}

static void free_bn(nc_bn *b)
{
    opprof_nn_cuda_tensor_free(b->w);
    opprof_nn_cuda_tensor_free(b->b);
    opprof_nn_cuda_tensor_free(b->mean);
    opprof_nn_cuda_tensor_free(b->var);
}

extern "C" void opprof_nn_cuda_model_free(opprof_nn_cuda_model *m)
{
    if (!m) return;
    opprof_nn_cuda_tensor_free(m->conv1.w);
    free_bn(&m->bn1);
    for (int i = 0; i < 8; i++) {
        nc_block *b = &m->blocks[i];
        opprof_nn_cuda_tensor_free(b->c1.w);
        opprof_nn_cuda_tensor_free(b->c2.w);
        opprof_nn_cuda_tensor_free(b->down.w);
        free_bn(&b->b1);
        free_bn(&b->b2);
        free_bn(&b->down_bn);
    }
    opprof_nn_cuda_tensor_free(m->fc_w);
    opprof_nn_cuda_tensor_free(m->fc_b);
    free(m);
}

extern "C" int opprof_nn_cuda_resnet18(int num_classes, opprof_nn_cuda_param_fn get, void *ctx,
                                       opprof_nn_cuda_model **out)
{
    *out = NULL;
    if (!get || num_classes < 1) return op_nc_fail(OPPROF_E_INVAL, "resnet18: a parameter source and classes > 0");
    opprof_nn_cuda_model *m = (opprof_nn_cuda_model *)calloc(1, sizeof *m);
    if (!m) return op_nc_fail(OPPROF_E_NOMEM, "out of memory");
    m->classes = num_classes;
    loader l = {get, ctx};
    int rc = load_conv(&l, "conv1.", 3, 64, 7, 2, 3, &m->conv1);
    if (!rc) rc = load_bn(&l, "bn1.", 64, &m->bn1);
    static const int widths[4] = {64, 128, 256, 512};
    int in = 64;
    for (int layer = 0; layer < 4 && !rc; layer++) {
        for (int j = 0; j < 2 && !rc; j++) {
            nc_block *b = &m->blocks[layer * 2 + j];
            int out_ch = widths[layer], stride = (layer > 0 && j == 0) ? 2 : 1;
            char p[64];
            snprintf(p, sizeof p, "layer%d.%d.conv1.", layer + 1, j);
            rc = load_conv(&l, p, in, out_ch, 3, stride, 1, &b->c1);
            snprintf(p, sizeof p, "layer%d.%d.bn1.", layer + 1, j);
            if (!rc) rc = load_bn(&l, p, out_ch, &b->b1);
            snprintf(p, sizeof p, "layer%d.%d.conv2.", layer + 1, j);
            if (!rc) rc = load_conv(&l, p, out_ch, out_ch, 3, 1, 1, &b->c2);
            snprintf(p, sizeof p, "layer%d.%d.bn2.", layer + 1, j);
            if (!rc) rc = load_bn(&l, p, out_ch, &b->b2);
            b->has_down = stride != 1 || in != out_ch;
            if (b->has_down && !rc) {
                snprintf(p, sizeof p, "layer%d.%d.downsample.0.", layer + 1, j);
                rc = load_conv(&l, p, in, out_ch, 1, stride, 0, &b->down);
                snprintf(p, sizeof p, "layer%d.%d.downsample.1.", layer + 1, j);
                if (!rc) rc = load_bn(&l, p, out_ch, &b->down_bn);
            }
            in = out_ch;
        }
    }
    int64_t wd[2] = {num_classes, 512}, bd[1] = {num_classes};
    if (!rc) rc = load(&l, "fc.", "weight", 2, wd, &m->fc_w);
    if (!rc) rc = load(&l, "fc.", "bias", 1, bd, &m->fc_b);
    /* The host arrays may go once this returns. */
    if (!rc) rc = opprof_nn_cuda_sync();
    if (rc) {
        opprof_nn_cuda_model_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

static const float BN_EPS = 1e-5f;

/* conv -> batch norm, freeing the conv's output. */
static int conv_bn(const nc_conv *c, const nc_bn *b, const opprof_nn_cuda_tensor *x, opprof_nn_cuda_tensor **y)
{
    opprof_nn_cuda_tensor *t = NULL;
    int rc = opprof_nn_cuda_conv2d(x, c->w, &c->p, &t);
    if (!rc) rc = opprof_nn_cuda_batch_norm(t, b->w, b->b, b->mean, b->var, BN_EPS, y);
    opprof_nn_cuda_tensor_free(t);
    return rc;
}

static int block_forward(const nc_block *b, const opprof_nn_cuda_tensor *x, opprof_nn_cuda_tensor **y)
{
    opprof_nn_cuda_tensor *t = NULL, *out = NULL, *id = NULL;
    int rc = conv_bn(&b->c1, &b->b1, x, &t);
    if (!rc) rc = opprof_nn_cuda_relu_(t);
    if (!rc) rc = conv_bn(&b->c2, &b->b2, t, &out);
    if (!rc && b->has_down) rc = conv_bn(&b->down, &b->down_bn, x, &id);
    if (!rc) rc = opprof_nn_cuda_add_(out, id ? id : x);
    if (!rc) rc = opprof_nn_cuda_relu_(out);
    opprof_nn_cuda_tensor_free(t);
    opprof_nn_cuda_tensor_free(id);
    if (rc) {
        opprof_nn_cuda_tensor_free(out);
        out = NULL;
    }
    *y = out;
    return rc;
}

extern "C" int opprof_nn_cuda_forward(opprof_nn_cuda_model *m, const opprof_nn_cuda_tensor *x,
                                      opprof_nn_cuda_tensor **y)
{
    *y = NULL;
    if (!m || !x || x->ndim != 4 || x->dims[1] != 3)
        return op_nc_fail(OPPROF_E_INVAL, "resnet18 forward: x [N,3,H,W] expected");
    opprof_nn_cuda_tensor *a = NULL, *b = NULL;
    int rc = conv_bn(&m->conv1, &m->bn1, x, &a);
    if (!rc) rc = opprof_nn_cuda_relu_(a);
    if (!rc) rc = opprof_nn_cuda_max_pool2d(a, 3, 2, 1, &b);
    opprof_nn_cuda_tensor_free(a);
    a = b;
    b = NULL;
    for (int i = 0; i < 8 && !rc; i++) {
        rc = block_forward(&m->blocks[i], a, &b);
        opprof_nn_cuda_tensor_free(a);
        a = b;
        b = NULL;
    }
    if (!rc) rc = opprof_nn_cuda_adaptive_avg_pool2d(a, &b);
    opprof_nn_cuda_tensor_free(a);
    a = b;
    b = NULL;
    if (!rc) rc = opprof_nn_cuda_flatten(a, &b);
    opprof_nn_cuda_tensor_free(a);
    a = b;
    b = NULL;
    if (!rc) rc = opprof_nn_cuda_linear(a, m->fc_w, m->fc_b, &b);
    opprof_nn_cuda_tensor_free(a);
    *y = b;
    return rc;
}

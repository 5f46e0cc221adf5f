/* aten::conv2d, forward and backward, on oneDNN. The ranges nest as
 * PyTorch's do on the CPU (conv2d > convolution > _convolution >
 * mkldnn_convolution), so the table shows the same rows; only aten::conv2d
 * carries the FLOPs, so totals do not double count. */
#include "conv_prim.h"

OPPROF_SITE(site_conv2d, "aten::conv2d");
OPPROF_SITE(site_convolution, "aten::convolution");
OPPROF_SITE(site__convolution, "aten::_convolution");
OPPROF_SITE(site_mkldnn, "aten::mkldnn_convolution");
OP_NN_BACKWARD_SITES(site_conv_bwd, "ConvolutionBackward0");
OPPROF_SITE(site_conv_backward, "aten::convolution_backward");

opprof_nn_conv2d_params opprof_nn_conv2d_params_make(int stride, int padding)
{
    opprof_nn_conv2d_params p = {{stride, stride}, {padding, padding}, {1, 1}, 1};
    return p;
}

static int check(const tensor *x, const tensor *w, const tensor *b, const opprof_nn_conv2d_params *p)
{
    if (!x || !w || !p || x->ndim != 4 || w->ndim != 4 || p->groups < 1) return OPPROF_E_INVAL;
    if (x->dims[1] != w->dims[1] * p->groups || w->dims[0] % p->groups) return OPPROF_E_INVAL;
    if (b && (b->ndim != 1 || b->dims[0] != w->dims[0])) return OPPROF_E_INVAL;
    for (int i = 0; i < 2; i++) {
        if (p->stride[i] < 1 || p->dilation[i] < 1 || p->padding[i] < 0) return OPPROF_E_INVAL;
        if (op_nn_conv_out(x->dims[2 + i], w->dims[2 + i], p->stride[i], p->padding[i], p->dilation[i]) < 1)
            return OPPROF_E_INVAL;
    }
    return OPPROF_OK;
}

static void out_dims(const tensor *x, const tensor *w, const opprof_nn_conv2d_params *p, int64_t *d)
{
    d[0] = x->dims[0];
    d[1] = w->dims[0];
    for (int i = 0; i < 2; i++)
        d[2 + i] = op_nn_conv_out(x->dims[2 + i], w->dims[2 + i], p->stride[i], p->padding[i], p->dilation[i]);
}

uint64_t opprof_nn_conv2d_flops(const tensor *x, const tensor *w, const opprof_nn_conv2d_params *p)
{
    int64_t d[4];
    out_dims(x, w, p, d);
    return 2ull * (uint64_t)(d[0] * d[1] * d[2] * d[3]) * (uint64_t)(w->dims[1] * w->dims[2] * w->dims[3]);
}

int opprof_nn_conv2d(const tensor *x, const tensor *w, const tensor *b, const opprof_nn_conv2d_params *p,
                     tensor **y)
{
    if (!y) return OPPROF_E_INVAL;
    *y = NULL;
    int rc = check(x, w, b, p);
    if (rc) return rc;
    /* input, weight, bias, stride, padding, dilation, transposed,
     * output_padding, groups, benchmark, deterministic, cudnn, allow_tf32 */
    opprof_input in[13] = {op_nn_in(x), op_nn_in(w), op_nn_in(b), op_nn_in_list(), op_nn_in_list(),
                           op_nn_in_list(), op_nn_in_scalar(), op_nn_in_list(), op_nn_in_scalar(),
                           op_nn_in_scalar(), op_nn_in_scalar(), op_nn_in_scalar(), op_nn_in_scalar()};
    opprof_input conv2d_in[7] = {in[0], in[1], in[2], in[3], in[4], in[5], op_nn_in_scalar()};
    opprof_input mkl_in[7] = {in[0], in[1], in[2], in[4], in[3], in[5], op_nn_in_scalar()};
    opprof_begin_inputs(&site_conv2d, conv2d_in, 7);
    opprof_begin_inputs(&site_convolution, in, 9);
    opprof_begin_inputs(&site__convolution, in, 13);
    opprof_begin_inputs(&site_mkldnn, mkl_in, 7);
    int64_t d[4];
    out_dims(x, w, p, d);
    tensor *out = op_nn_empty(4, d);
    const op_nn_prim *prim = op_nn_conv_prim(CONV_FWD, x, w, b != NULL, p);
    if (!out)
        rc = OPPROF_E_NOMEM;
    else if (!prim)
        rc = OPPROF_E_UNSUPPORTED;
    else {
        void *data[4] = {x->data, w->data, b ? b->data : NULL, out->data};
        tensor *keep[4] = {NULL, (tensor *)w, NULL, NULL};
        rc = op_nn_prim_run(prim, data, keep);
    }
    opprof_end(&site_mkldnn);
    opprof_end(&site__convolution);
    opprof_end(&site_convolution);
    opprof_end_flops(&site_conv2d, opprof_nn_conv2d_flops(x, w, p));
    if (rc)
        opprof_nn_tensor_release(out);
    else
        *y = out;
    return rc;
}

static int backward_data(const tensor *x, const tensor *w, const opprof_nn_conv2d_params *p, const tensor *dy,
                         tensor **dx)
{
    const op_nn_prim *prim = op_nn_conv_prim(CONV_BWD_DATA, x, w, 0, p);
    if (!prim) return OPPROF_E_UNSUPPORTED;
    tensor *g = op_nn_empty_like(x);
    if (!g) return OPPROF_E_NOMEM;
    void *data[3] = {dy->data, w->data, g->data};
    tensor *keep[3] = {NULL, (tensor *)w, NULL};
    int rc = op_nn_prim_run(prim, data, keep);
    if (rc)
        opprof_nn_tensor_release(g);
    else
        *dx = g;
    return rc;
}

static int backward_weights(const tensor *x, const tensor *w, const opprof_nn_conv2d_params *p, const tensor *dy,
                            tensor **dw, tensor **db)
{
    const op_nn_prim *prim = op_nn_conv_prim(CONV_BWD_WEIGHTS, x, w, db != NULL, p);
    if (!prim) return OPPROF_E_UNSUPPORTED;
    tensor *gw = op_nn_empty_like(w), *gb = NULL;
    int rc = OPPROF_E_NOMEM;
    if (gw && db) gb = op_nn_empty(1, w->dims);
    if (gw && (gb || !db)) {
        void *data[4] = {x->data, dy->data, gw->data, gb ? gb->data : NULL};
        rc = op_nn_prim_run(prim, data, NULL);
    }
    if (rc) {
        opprof_nn_tensor_release(gw);
        opprof_nn_tensor_release(gb);
        return rc;
    }
    if (dw)
        *dw = gw;
    else
        opprof_nn_tensor_release(gw);
    if (db) *db = gb;
    return OPPROF_OK;
}

int opprof_nn_conv2d_backward(const tensor *x, const tensor *w, const opprof_nn_conv2d_params *p, const tensor *dy,
                              tensor **dx, tensor **dw, tensor **db)
{
    int rc = check(x, w, NULL, p);
    if (rc || !dy) return rc ? rc : OPPROF_E_INVAL;
    int64_t d[4];
    out_dims(x, w, p, d);
    if (dy->ndim != 4 || dy->dims[0] != d[0] || dy->dims[1] != d[1] || dy->dims[2] != d[2] || dy->dims[3] != d[3])
        return OPPROF_E_INVAL;
    if (dx) *dx = NULL;
    if (dw) *dw = NULL;
    if (db) *db = NULL;
    /* grad_output, input, weight, bias_sizes, stride, padding, dilation,
     * transposed, output_padding, groups, output_mask */
    opprof_input in[11] = {op_nn_in(dy), op_nn_in(x), op_nn_in(w), op_nn_in_list(), op_nn_in_list(), op_nn_in_list(),
                           op_nn_in_list(), op_nn_in_scalar(), op_nn_in_list(), op_nn_in_scalar(), op_nn_in_list()};
    op_nn_backward_begin(&site_conv_bwd_eval, &site_conv_bwd);
    opprof_begin_inputs(&site_conv_backward, in, 11);
    if (dx) rc = backward_data(x, w, p, dy, dx);
    if (!rc && (dw || db)) rc = backward_weights(x, w, p, dy, dw, db);
    opprof_end(&site_conv_backward);
    op_nn_backward_end(&site_conv_bwd_eval, &site_conv_bwd);
    if (rc) {
        if (dx) {
            opprof_nn_tensor_release(*dx);
            *dx = NULL;
        }
    }
    return rc;
}

/* The convolution primitive cache. oneDNN compiles a kernel for each shape;
 * building the descriptors and the primitive costs far more than running a
 * small convolution, so each (kind, shape, parameters) is compiled once.
 * Source and destination are left to oneDNN ("any"): it picks its blocked
 * layouts and the cached reorders move our NCHW data in and out, as
 * PyTorch's mkldnn_convolution does. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "conv_prim.h"

typedef struct conv_key {
    int64_t n, c, h, w, o, kh, kw;
    int32_t stride[2], pad[2], dil[2], groups, bias, kind, unused_;
} conv_key;

typedef struct entry {
    conv_key key;
    op_nn_prim prim;
    struct entry *next;
} entry;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static entry *g_head;

static conv_key make_key(conv_kind kind, const tensor *x, const tensor *w, int has_bias,
                         const opprof_nn_conv2d_params *p)
{
    conv_key k;
    memset(&k, 0, sizeof k); /* padding bytes take part in memcmp */
    k.n = x->dims[0];
    k.c = x->dims[1];
    k.h = x->dims[2];
    k.w = x->dims[3];
    k.o = w->dims[0];
    k.kh = w->dims[2];
    k.kw = w->dims[3];
    for (int i = 0; i < 2; i++) {
        k.stride[i] = p->stride[i];
        k.pad[i] = p->padding[i];
        k.dil[i] = p->dilation[i];
    }
    k.groups = p->groups;
    k.bias = has_bias;
    k.kind = kind;
    return k;
}

/* The four descriptors of a convolution: plain user forms and "any" forms. */
typedef struct conv_mds {
    dnnl_memory_desc_t src, w, b, dst;         /* plain */
    dnnl_memory_desc_t src_any, w_any, dst_any; /* oneDNN chooses */
    dnnl_dims_t strides, dil, pad_l, pad_r;
} conv_mds;

static void make_mds(const conv_key *k, conv_mds *m)
{
    int64_t oh = op_nn_conv_out(k->h, k->kh, k->stride[0], k->pad[0], k->dil[0]);
    int64_t ow = op_nn_conv_out(k->w, k->kw, k->stride[1], k->pad[1], k->dil[1]);
    int64_t src[4] = {k->n, k->c, k->h, k->w}, dst[4] = {k->n, k->o, oh, ow}, b[1] = {k->o};
    op_nn_md_plain(&m->src, 4, src);
    op_nn_md_plain(&m->dst, 4, dst);
    op_nn_md_plain(&m->b, 1, b);
    dnnl_dims_t d;
    if (k->groups > 1) {
        int64_t wd[5] = {k->groups, k->o / k->groups, k->c / k->groups, k->kh, k->kw};
        op_nn_md_plain(&m->w, 5, wd); /* goihw: the same bytes as PyTorch's [O, C/g, KH, KW] */
        for (int i = 0; i < 5; i++) d[i] = wd[i];
        dnnl_memory_desc_init_by_tag(&m->w_any, 5, d, dnnl_f32, dnnl_format_tag_any);
    } else {
        int64_t wd[4] = {k->o, k->c, k->kh, k->kw};
        op_nn_md_plain(&m->w, 4, wd);
        for (int i = 0; i < 4; i++) d[i] = wd[i];
        dnnl_memory_desc_init_by_tag(&m->w_any, 4, d, dnnl_f32, dnnl_format_tag_any);
    }
    for (int i = 0; i < 4; i++) d[i] = src[i];
    dnnl_memory_desc_init_by_tag(&m->src_any, 4, d, dnnl_f32, dnnl_format_tag_any);
    for (int i = 0; i < 4; i++) d[i] = dst[i];
    dnnl_memory_desc_init_by_tag(&m->dst_any, 4, d, dnnl_f32, dnnl_format_tag_any);
    int64_t out[2] = {oh, ow}, in[2] = {k->h, k->w}, ker[2] = {k->kh, k->kw};
    for (int i = 0; i < 2; i++) {
        m->strides[i] = k->stride[i];
        m->dil[i] = k->dil[i] - 1; /* oneDNN counts dilation from 0 */
        m->pad_l[i] = k->pad[i];
        /* what makes the output size exact when the stride leaves a remainder */
        m->pad_r[i] = (out[i] - 1) * k->stride[i] + (ker[i] - 1) * k->dil[i] + 1 - in[i] - k->pad[i];
    }
}

static dnnl_primitive_desc_t forward_pd(const conv_key *k, const conv_mds *m, dnnl_prop_kind_t prop)
{
    dnnl_convolution_desc_t cd;
    dnnl_primitive_desc_t pd = NULL;
    if (dnnl_dilated_convolution_forward_desc_init(&cd, prop, dnnl_convolution_direct, &m->src_any, &m->w_any,
                                                   k->bias ? &m->b : NULL, &m->dst_any, m->strides, m->dil,
                                                   m->pad_l, m->pad_r) != dnnl_success)
        return NULL;
    if (dnnl_primitive_desc_create(&pd, &cd, NULL, op_nn_engine(), NULL) != dnnl_success) return NULL;
    return pd;
}

static int build(entry *e)
{
    const conv_key *k = &e->key;
    conv_mds m;
    make_mds(k, &m);
    dnnl_convolution_desc_t cd;
    dnnl_primitive_desc_t pd = NULL, hint = NULL;
    dnnl_engine_t eng = op_nn_engine();
    int rc = OPPROF_E_UNSUPPORTED;
    switch ((conv_kind)k->kind) {
    case CONV_FWD: { /* inference and training alike: the backward keeps what it needs itself */
        pd = forward_pd(k, &m, dnnl_forward_inference);
        if (!pd) return rc;
        int ids[4] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_BIAS, DNNL_ARG_DST};
        dnnl_memory_desc_t users[4] = {m.src, m.w, m.b, m.dst};
        int outs[4] = {0, 0, 0, 1}, keep[4] = {0, 1, 0, 0};
        return op_nn_prim_init(&e->prim, pd, 4, ids, users, outs, keep);
    }
    case CONV_BWD_DATA:
        hint = forward_pd(k, &m, dnnl_forward_training);
        if (!hint) return rc;
        if (dnnl_dilated_convolution_backward_data_desc_init(&cd, dnnl_convolution_direct, &m.src_any, &m.w_any,
                                                             &m.dst_any, m.strides, m.dil, m.pad_l,
                                                             m.pad_r) == dnnl_success &&
            dnnl_primitive_desc_create(&pd, &cd, NULL, eng, hint) == dnnl_success) {
            int ids[3] = {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC};
            dnnl_memory_desc_t users[3] = {m.dst, m.w, m.src};
            int outs[3] = {0, 0, 1}, keep[3] = {0, 1, 0};
            rc = op_nn_prim_init(&e->prim, pd, 3, ids, users, outs, keep);
        }
        break;
    case CONV_BWD_WEIGHTS:
        hint = forward_pd(k, &m, dnnl_forward_training);
        if (!hint) return rc;
        if (dnnl_dilated_convolution_backward_weights_desc_init(&cd, dnnl_convolution_direct, &m.src_any,
                                                                &m.w_any, k->bias ? &m.b : NULL, &m.dst_any,
                                                                m.strides, m.dil, m.pad_l,
                                                                m.pad_r) == dnnl_success &&
            dnnl_primitive_desc_create(&pd, &cd, NULL, eng, hint) == dnnl_success) {
            int ids[4] = {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_BIAS};
            dnnl_memory_desc_t users[4] = {m.src, m.dst, m.w, m.b};
            int outs[4] = {0, 0, 1, 1};
            rc = op_nn_prim_init(&e->prim, pd, 4, ids, users, outs, NULL);
        }
        break;
    }
    if (hint) dnnl_primitive_desc_destroy(hint);
    return rc;
}

const op_nn_prim *op_nn_conv_prim(conv_kind kind, const tensor *x, const tensor *w, int has_bias,
                                  const opprof_nn_conv2d_params *p)
{
    conv_key k = make_key(kind, x, w, has_bias, p);
    pthread_mutex_lock(&g_lock);
    entry *e = g_head;
    while (e && memcmp(&e->key, &k, sizeof k) != 0) e = e->next;
    if (!e) {
        e = calloc(1, sizeof *e);
        if (e) {
            e->key = k;
            if (build(e) == OPPROF_OK) {
                e->next = g_head;
                g_head = e;
            } else {
                free(e);
                e = NULL;
            }
        }
    }
    pthread_mutex_unlock(&g_lock);
    return e ? &e->prim : NULL;
}

void op_nn_conv_cache_clear(void)
{
    pthread_mutex_lock(&g_lock);
    while (g_head) {
        entry *e = g_head;
        g_head = e->next;
        op_nn_prim_destroy(&e->prim);
        free(e);
    }
    pthread_mutex_unlock(&g_lock);
}

/* torch.optim.SGD (momentum, dampening, weight decay, Nesterov) and the
 * training step built on it. */
#include <stdlib.h>

#include "model.h"

static const opprof_site site_step = OPPROF_SITE_INIT("Optimizer.step#SGD.step", OPPROF_CAT_USER_ANNOTATION, NULL);
static const opprof_site site_zero_grad =
    OPPROF_SITE_INIT("Optimizer.zero_grad#SGD.zero_grad", OPPROF_CAT_USER_ANNOTATION, NULL);
static const opprof_site site_train_step = OPPROF_SITE_INIT("train_step", OPPROF_CAT_USER_ANNOTATION, NULL);

struct opprof_nn_sgd {
    opprof_nn_model *m;
    opprof_nn_sgd_options o;
    tensor **buf; /* momentum buffers, one per parameter, made at first use */
    opprof_nn_grad_hook hook;
    void *hook_ctx;
};

int opprof_nn_sgd_new(opprof_nn_model *m, const opprof_nn_sgd_options *o, opprof_nn_sgd **out)
{
    if (!m || !o || !out || o->lr < 0 || o->momentum < 0 || o->weight_decay < 0) return OPPROF_E_INVAL;
    if (o->nesterov && (o->momentum <= 0 || o->dampening != 0)) return OPPROF_E_INVAL;
    opprof_nn_sgd *s = calloc(1, sizeof *s);
    if (!s) return OPPROF_E_NOMEM;
    s->buf = calloc(m->nparams ? m->nparams : 1, sizeof *s->buf);
    if (!s->buf) {
        free(s);
        return OPPROF_E_NOMEM;
    }
    s->m = m;
    s->o = *o;
    *out = s;
    return OPPROF_OK;
}

int opprof_nn_sgd_zero_grad(opprof_nn_sgd *s)
{
    if (!s) return OPPROF_E_INVAL;
    opprof_begin(&site_zero_grad);
    for (size_t i = 0; i < s->m->nparams; i++) op_nn_clear(&s->m->params[i]->grad);
    opprof_end(&site_zero_grad);
    return OPPROF_OK;
}

/* One parameter: d = g + wd*p; buf = mom*buf + (1-damp)*d (buf = d at first);
 * d = nesterov ? d + mom*buf : buf; p -= lr*d. */
static int update(opprof_nn_sgd *s, size_t i)
{
    param *p = s->m->params[i];
    const opprof_nn_sgd_options *o = &s->o;
    float *restrict w = p->value->data;
    const float *restrict g = p->grad->data;
    int64_t n = p->value->numel;
    float *restrict b = NULL;
    int first = 0;
    if (o->momentum != 0) {
        if (!s->buf[i]) {
            s->buf[i] = op_nn_empty_like(p->value);
            if (!s->buf[i]) return OPPROF_E_NOMEM;
            first = 1;
        }
        b = s->buf[i]->data;
    }
    const float lr = o->lr, wd = o->weight_decay, mom = o->momentum, damp = 1 - o->dampening;
    const float first_scale = o->nesterov ? 1 + mom : 1; /* d + mom * buf with buf = d */
    int nt = op_nn_threads_for(n);
    if (!b) {
#pragma omp parallel for simd num_threads(nt) if (parallel : nt > 1)
        for (int64_t j = 0; j < n; j++) w[j] -= lr * (g[j] + wd * w[j]);
    } else if (first) { /* the buffer starts as the first step's direction */
#pragma omp parallel for simd num_threads(nt) if (parallel : nt > 1)
        for (int64_t j = 0; j < n; j++) {
            float d = g[j] + wd * w[j];
            b[j] = d;
            w[j] -= lr * first_scale * d;
        }
    } else if (o->nesterov) {
#pragma omp parallel for simd num_threads(nt) if (parallel : nt > 1)
        for (int64_t j = 0; j < n; j++) {
            float d = g[j] + wd * w[j];
            b[j] = mom * b[j] + damp * d;
            w[j] -= lr * (d + mom * b[j]);
        }
    } else {
#pragma omp parallel for simd num_threads(nt) if (parallel : nt > 1)
        for (int64_t j = 0; j < n; j++) {
            float d = g[j] + wd * w[j];
            b[j] = mom * b[j] + damp * d;
            w[j] -= lr * b[j];
        }
    }
    opprof_nn_tensor_touch(p->value);
    return OPPROF_OK;
}

int opprof_nn_sgd_step(opprof_nn_sgd *s)
{
    if (!s) return OPPROF_E_INVAL;
    int rc = OPPROF_OK;
    opprof_begin(&site_step);
    for (size_t i = 0; i < s->m->nparams && !rc; i++)
        if (!s->m->params[i]->is_buffer && s->m->params[i]->grad) rc = update(s, i);
    opprof_end(&site_step);
    return rc;
}

void opprof_nn_sgd_set_grad_hook(opprof_nn_sgd *s, opprof_nn_grad_hook fn, void *ctx)
{
    if (!s) return;
    s->hook = fn;
    s->hook_ctx = ctx;
}

void opprof_nn_sgd_free(opprof_nn_sgd *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->m->nparams; i++) opprof_nn_tensor_release(s->buf[i]);
    free(s->buf);
    free(s);
}

int opprof_nn_train_step(opprof_nn_model *m, opprof_nn_sgd *s, tensor *x, const int64_t *targets, float *loss)
{
    if (!m || !s || !x || !targets || !loss || s->m != m) return OPPROF_E_INVAL;
    opprof_begin(&site_train_step);
    tensor *y = NULL, *logp = NULL, *dy = NULL;
    int rc = opprof_nn_sgd_zero_grad(s);
    if (!rc) rc = opprof_nn_model_forward(m, x, 1, &y);
    if (!rc) rc = opprof_nn_cross_entropy(y, targets, loss, &logp);
    if (!rc) rc = opprof_nn_cross_entropy_backward(logp, targets, 1.0f, &dy);
    if (!rc) rc = opprof_nn_model_backward(m, dy);
    if (!rc && s->hook) rc = s->hook(m, s->hook_ctx);
    if (!rc) rc = opprof_nn_sgd_step(s);
    opprof_nn_tensor_release(y);
    opprof_nn_tensor_release(logp);
    opprof_nn_tensor_release(dy);
    opprof_end(&site_train_step);
    return rc;
}

/* The model object: parameters by state_dict name, dispatch to the model
 * kind, and gradient accumulation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

OP_NN_BACKWARD_SITES(site_acc, "torch::autograd::AccumulateGrad");

opprof_nn_model *op_nn_model_new(const model_ops *ops, uint64_t seed, size_t impl_size)
{
    opprof_nn_model *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->ops = ops;
    m->seed = seed;
    m->impl = calloc(1, impl_size);
    if (!m->impl) {
        free(m);
        return NULL;
    }
    return m;
}

uint64_t op_nn_model_next_seed(opprof_nn_model *m)
{
    return m->seed * 0x9e3779b97f4a7c15ull + m->nparams + 1;
}

param *op_nn_model_add(opprof_nn_model *m, const char *prefix, const char *name, int ndim, const int64_t *dims,
                       int is_buffer)
{
    if (m->nparams == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        param **p = realloc(m->params, cap * sizeof *p);
        if (!p) return NULL;
        m->params = p;
        m->cap = cap;
    }
    param *p = calloc(1, sizeof *p);
    size_t len = strlen(prefix) + strlen(name) + 2;
    char *full = malloc(len);
    tensor *t = NULL;
    if (p && full && opprof_nn_tensor_new(ndim, dims, &t) == OPPROF_OK) {
        snprintf(full, len, "%s%s%s", prefix, *prefix ? "." : "", name);
        p->name = full;
        p->value = t;
        p->is_buffer = is_buffer;
        m->params[m->nparams++] = p;
        return p;
    }
    free(p);
    free(full);
    return NULL;
}

int op_nn_param_accumulate(param *p, tensor *g)
{
    if (!g) return OPPROF_OK;
    op_nn_backward_begin(&site_acc_eval, &site_acc);
    int rc = OPPROF_OK;
    if (!p->grad)
        p->grad = g; /* the first gradient is taken as is, no copy */
    else {
        rc = opprof_nn_add_(p->grad, g);
        opprof_nn_tensor_release(g);
    }
    op_nn_backward_end(&site_acc_eval, &site_acc);
    return rc;
}

void op_nn_clear(tensor **t)
{
    opprof_nn_tensor_release(*t);
    *t = NULL;
}

int op_nn_grad_sum(tensor **dx, tensor *other)
{
    if (!*dx) {
        *dx = other;
        return OPPROF_OK;
    }
    int rc = opprof_nn_add_(*dx, other);
    opprof_nn_tensor_release(other);
    return rc;
}

int opprof_nn_model_forward(opprof_nn_model *m, tensor *x, int training, tensor **y)
{
    if (!m || !x || !y) return OPPROF_E_INVAL;
    *y = NULL;
    return m->ops->forward(m->impl, x, training, y);
}

int opprof_nn_model_backward(opprof_nn_model *m, const tensor *dy)
{
    if (!m || !dy) return OPPROF_E_INVAL;
    return m->ops->backward(m->impl, dy);
}

size_t opprof_nn_model_param_count(const opprof_nn_model *m)
{
    return m ? m->nparams : 0;
}

opprof_nn_param *opprof_nn_model_param(opprof_nn_model *m, size_t i)
{
    return m && i < m->nparams ? m->params[i] : NULL;
}

opprof_nn_param *opprof_nn_model_find(opprof_nn_model *m, const char *name)
{
    for (size_t i = 0; m && name && i < m->nparams; i++)
        if (!strcmp(m->params[i]->name, name)) return m->params[i];
    return NULL;
}

uint64_t opprof_nn_model_numel(const opprof_nn_model *m)
{
    uint64_t n = 0;
    for (size_t i = 0; m && i < m->nparams; i++)
        if (!m->params[i]->is_buffer) n += (uint64_t)m->params[i]->value->numel;
    return n;
}

void opprof_nn_model_free(opprof_nn_model *m)
{
    if (!m) return;
    if (m->impl) m->ops->free_impl(m->impl);
    for (size_t i = 0; i < m->nparams; i++) {
        opprof_nn_tensor_release(m->params[i]->value);
        opprof_nn_tensor_release(m->params[i]->grad);
        free((char *)m->params[i]->name);
        free(m->params[i]);
    }
    free(m->params);
    free(m);
}

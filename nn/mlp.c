/* An MLP as nn.Sequential(Linear, ReLU, ..., Linear) builds it; parameters
 * are named by their index in the Sequential ("0.weight", "2.weight"). */
#include <stdio.h>
#include <stdlib.h>

#include "model.h"

typedef struct mlp {
    int nlin;
    nn_linear *lin;
    tensor **relu_out; /* kept for the ReLUs' backward */
    int trained;
} mlp;

static void mlp_clear(mlp *p)
{
    for (int i = 0; i < p->nlin; i++) {
        op_nn_linear_clear(&p->lin[i]);
        op_nn_clear(&p->relu_out[i]);
    }
    p->trained = 0;
}

static int mlp_forward(void *impl, tensor *x, int tr, tensor **y)
{
    mlp *p = impl;
    mlp_clear(p);
    tensor *t = opprof_nn_tensor_retain(x), *u = NULL;
    int rc = OPPROF_OK;
    for (int i = 0; i < p->nlin && !rc; i++) {
        rc = op_nn_linear_forward(&p->lin[i], t, tr, &u);
        op_nn_clear(&t);
        if (!rc && i + 1 < p->nlin) {
            rc = opprof_nn_relu(u, &t);
            op_nn_clear(&u);
            if (!rc && tr) p->relu_out[i] = opprof_nn_tensor_retain(t);
        } else {
            t = u;
            u = NULL;
        }
    }
    if (rc) {
        op_nn_clear(&t);
        mlp_clear(p);
    }
    p->trained = tr && !rc;
    *y = t;
    return rc;
}

static int mlp_backward(void *impl, const tensor *dy)
{
    mlp *p = impl;
    if (!p->trained) return OPPROF_E_INVAL;
    tensor *g = opprof_nn_tensor_retain((tensor *)dy), *t = NULL;
    int rc = OPPROF_OK;
    for (int i = p->nlin - 1; i >= 0 && !rc; i--) {
        rc = op_nn_linear_backward(&p->lin[i], g, i > 0 ? &t : NULL);
        op_nn_clear(&g);
        if (!rc && i > 0) {
            rc = opprof_nn_relu_backward(p->relu_out[i - 1], t, &g);
            op_nn_clear(&t);
        }
    }
    op_nn_clear(&g);
    mlp_clear(p);
    return rc;
}

static void mlp_free(void *impl)
{
    mlp *p = impl;
    mlp_clear(p);
    free(p->lin);
    free(p->relu_out);
    free(p);
}

static const model_ops mlp_ops = {mlp_forward, mlp_backward, mlp_free};

int opprof_nn_mlp(int n_sizes, const int *sizes, uint64_t seed, opprof_nn_model **out)
{
    if (!out || n_sizes < 2 || !sizes) return OPPROF_E_INVAL;
    for (int i = 0; i < n_sizes; i++)
        if (sizes[i] < 1) return OPPROF_E_INVAL;
    *out = NULL;
    opprof_nn_model *m = op_nn_model_new(&mlp_ops, seed, sizeof(mlp));
    if (!m) return OPPROF_E_NOMEM;
    mlp *p = m->impl;
    p->nlin = n_sizes - 1;
    p->lin = calloc((size_t)p->nlin, sizeof *p->lin);
    p->relu_out = calloc((size_t)p->nlin, sizeof *p->relu_out);
    int rc = p->lin && p->relu_out ? OPPROF_OK : OPPROF_E_NOMEM;
    for (int i = 0; i < p->nlin && !rc; i++) {
        char prefix[16];
        snprintf(prefix, sizeof prefix, "%d", 2 * i);
        rc = op_nn_linear_init(m, &p->lin[i], prefix, sizes[i], sizes[i + 1]);
    }
    if (rc) {
        opprof_nn_model_free(m);
        return rc;
    }
    *out = m;
    return OPPROF_OK;
}

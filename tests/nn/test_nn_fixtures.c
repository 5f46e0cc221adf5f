/* Every case in fixtures/torch-ops and torch-grads (PyTorch 1.13's results)
 * against the runtime's operators: outputs, and with grad_output the
 * gradient of every input that has one, to max|a-b|/max|b| <= 1e-4. An op
 * the runner does not know fails, so a new fixture kind cannot pass
 * unnoticed. OPPROF_FIXTURES names another folder of the same layout. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture_tensor.h"
#include "fixtures.h"

typedef opprof_nn_tensor tensor;

/* What one case computed: its output and, by input name, gradients. */
typedef struct result {
    tensor *out;
    const char *grad_names[4];
    tensor *grads[4];
    int ngrads;
} result;

static void add_grad(result *r, const char *name, tensor *g)
{
    r->grad_names[r->ngrads] = name;
    r->grads[r->ngrads++] = g;
}

static double num_param(const json *params, const char *key, double dflt)
{
    const json *v = json_get(params, key);
    return v && (v->type == JSON_NUM || v->type == JSON_BOOL) ? v->num : dflt;
}

static int pair_param(const json *params, const char *key, int *out, int dflt)
{
    const json *v = json_get(params, key);
    if (!v) {
        out[0] = out[1] = dflt;
    } else if (v->type == JSON_NUM) {
        out[0] = out[1] = (int)v->num;
    } else if (v->type == JSON_ARR && v->n == 2) {
        out[0] = (int)v->items[0].num;
        out[1] = (int)v->items[1].num;
    } else
        return -1;
    return 0;
}

/* The inputs of a case, by name; missing ones are NULL. */
typedef struct inputs {
    const json *obj;
    tensor *t[24];
    size_t n;
} inputs;

static tensor *in(inputs *ins, const char *name)
{
    for (size_t i = 0; i < ins->obj->n; i++)
        if (!strcmp(ins->obj->keys[i], name)) return ins->t[i];
    return NULL;
}

static int64_t *targets_of(const tensor *t)
{
    int64_t *tg = malloc((size_t)(t->numel ? t->numel : 1) * sizeof *tg);
    for (int64_t i = 0; tg && i < t->numel; i++) tg[i] = (int64_t)t->data[i];
    return tg;
}

static int run_conv(inputs *ins, const json *params, const tensor *gy, result *r)
{
    opprof_nn_conv2d_params p;
    if (pair_param(params, "stride", p.stride, 1) || pair_param(params, "padding", p.padding, 0) ||
        pair_param(params, "dilation", p.dilation, 1))
        return -1;
    p.groups = (int)num_param(params, "groups", 1);
    tensor *x = in(ins, "input"), *w = in(ins, "weight"), *b = in(ins, "bias");
    int rc = opprof_nn_conv2d(x, w, b, &p, &r->out);
    if (rc || !gy) return rc;
    tensor *dx = NULL, *dw = NULL, *db = NULL;
    rc = opprof_nn_conv2d_backward(x, w, &p, gy, &dx, &dw, b ? &db : NULL);
    add_grad(r, "input", dx);
    add_grad(r, "weight", dw);
    if (b) add_grad(r, "bias", db);
    return rc;
}

static int run_batch_norm(inputs *ins, const json *params, const tensor *gy, result *r)
{
    int training = (int)num_param(params, "training", 0);
    float eps = (float)num_param(params, "eps", 1e-5), momentum = (float)num_param(params, "momentum", 0.1);
    tensor *x = in(ins, "input"), *w = in(ins, "weight"), *b = in(ins, "bias");
    tensor *mean = NULL, *invstd = NULL;
    int rc = opprof_nn_batch_norm(x, w, b, in(ins, "running_mean"), in(ins, "running_var"), training, momentum, eps,
                                  &r->out, &mean, &invstd);
    if (!rc && gy) {
        tensor *dx = NULL, *dw = NULL, *db = NULL;
        rc = opprof_nn_batch_norm_backward(x, w, mean, invstd, training, gy, &dx, w ? &dw : NULL, b ? &db : NULL);
        add_grad(r, "input", dx);
        if (w) add_grad(r, "weight", dw);
        if (b) add_grad(r, "bias", db);
    }
    opprof_nn_tensor_release(mean);
    opprof_nn_tensor_release(invstd);
    return rc;
}

static int run_max_pool(inputs *ins, const json *params, const tensor *gy, result *r)
{
    opprof_nn_pool_params p;
    if (pair_param(params, "kernel_size", p.kernel, 1) || pair_param(params, "padding", p.padding, 0)) return -1;
    if (json_get(params, "stride") ? pair_param(params, "stride", p.stride, 1) : pair_param(params, "kernel_size", p.stride, 1))
        return -1;
    tensor *x = in(ins, "input");
    int rc = opprof_nn_max_pool2d(x, &p, &r->out);
    if (rc || !gy) return rc;
    tensor *dx = NULL;
    rc = opprof_nn_max_pool2d_backward(x, &p, gy, &dx);
    add_grad(r, "input", dx);
    return rc;
}

static int run_avg_pool(inputs *ins, const json *params, const tensor *gy, result *r)
{
    int os[2];
    if (pair_param(params, "output_size", os, 1)) return -1;
    tensor *x = in(ins, "input");
    int rc = opprof_nn_adaptive_avg_pool2d(x, os[0], os[1], &r->out);
    if (rc || !gy) return rc;
    tensor *dx = NULL;
    rc = opprof_nn_adaptive_avg_pool2d_backward(x, gy, &dx);
    add_grad(r, "input", dx);
    return rc;
}

static int run_linear(inputs *ins, const json *params, const tensor *gy, result *r)
{
    (void)params;
    tensor *x = in(ins, "input"), *w = in(ins, "weight"), *b = in(ins, "bias");
    int rc = opprof_nn_linear(x, w, b, &r->out);
    if (rc || !gy) return rc;
    tensor *dx = NULL, *dw = NULL, *db = NULL;
    rc = opprof_nn_linear_backward(x, w, gy, &dx, &dw, b ? &db : NULL);
    add_grad(r, "input", dx);
    add_grad(r, "weight", dw);
    if (b) add_grad(r, "bias", db);
    return rc;
}

static int run_relu(inputs *ins, const json *params, const tensor *gy, result *r)
{
    (void)params;
    int rc = opprof_nn_relu(in(ins, "input"), &r->out);
    if (rc || !gy) return rc;
    tensor *dx = NULL;
    rc = opprof_nn_relu_backward(r->out, gy, &dx);
    add_grad(r, "input", dx);
    return rc;
}

static int run_add(inputs *ins, const json *params, const tensor *gy, result *r)
{
    (void)params;
    (void)gy;
    return opprof_nn_add(in(ins, "input"), in(ins, "other"), &r->out);
}

static int run_softmax(inputs *ins, const json *params, const tensor *gy, result *r)
{
    (void)gy;
    return opprof_nn_softmax(in(ins, "input"), (int)num_param(params, "dim", 1), &r->out);
}

static int run_cross_entropy(inputs *ins, const json *params, const tensor *gy, result *r)
{
    const json *red = json_get(params, "reduction");
    if (red && (red->type != JSON_STR || strcmp(red->str, "mean"))) return -1;
    tensor *x = in(ins, "input"), *t = in(ins, "target"), *logp = NULL;
    int64_t *tg = t ? targets_of(t) : NULL;
    float loss = 0;
    int rc = tg ? opprof_nn_cross_entropy(x, tg, &loss, &logp) : -1;
    if (!rc) {
        int64_t one = 1;
        rc = opprof_nn_tensor_from(1, &one, &loss, 1, &r->out);
    }
    if (!rc && gy) {
        tensor *dx = NULL;
        rc = opprof_nn_cross_entropy_backward(logp, tg, gy->data[0], &dx);
        add_grad(r, "input", dx);
    }
    opprof_nn_tensor_release(logp);
    free(tg);
    return rc;
}

/* torchvision's BasicBlock in eval mode with the state_dict given as inputs. */
static int run_basic_block(inputs *ins, const json *params, const tensor *gy, result *r)
{
    (void)gy;
    tensor *w1 = in(ins, "conv1.weight");
    if (!w1 || num_param(params, "eps", 1e-5) != 1e-5) return -1;
    opprof_nn_model *m = NULL;
    int rc = opprof_nn_basic_block((int)w1->dims[1], (int)w1->dims[0], (int)num_param(params, "stride", 1), 0, &m);
    for (size_t i = 0; !rc && i < opprof_nn_model_param_count(m); i++) {
        opprof_nn_param *p = opprof_nn_model_param(m, i);
        tensor *v = in(ins, p->name);
        if (!v || v->numel != p->value->numel) {
            fprintf(stderr, "basic block: state_dict entry %s missing or misshapen\n", p->name);
            rc = -1;
            break;
        }
        memcpy(p->value->data, v->data, (size_t)v->numel * sizeof(float));
        opprof_nn_tensor_touch(p->value);
    }
    if (!rc) rc = opprof_nn_model_forward(m, in(ins, "input"), 0, &r->out);
    opprof_nn_model_free(m);
    return rc;
}

typedef struct runner {
    const char *op;
    int (*run)(inputs *, const json *, const tensor *, result *);
} runner;

static const runner RUNNERS[] = {
    {"conv2d", run_conv},         {"batch_norm", run_batch_norm},
    {"max_pool2d", run_max_pool}, {"adaptive_avg_pool2d", run_avg_pool},
    {"linear", run_linear},       {"relu", run_relu},
    {"add", run_add},             {"softmax", run_softmax},
    {"cross_entropy", run_cross_entropy}, {"resnet_basic_block", run_basic_block},
};

static double g_worst; /* the largest relative error seen in a folder */

/* Runs one case; returns the number of failed comparisons. */
static int check_case(const char *path, int *compared)
{
    json *c = json_read_file(path);
    if (!c) {
        fprintf(stderr, "%s: cannot read or parse\n", path);
        return 1;
    }
    const json *op = json_get(c, "op"), *ins_obj = json_get(c, "inputs");
    const runner *rn = NULL;
    for (size_t i = 0; op && op->type == JSON_STR && i < sizeof RUNNERS / sizeof *RUNNERS; i++)
        if (!strcmp(RUNNERS[i].op, op->str)) rn = &RUNNERS[i];
    int bad = 0;
    if (!rn || !ins_obj || ins_obj->type != JSON_OBJ || ins_obj->n > 24) {
        fprintf(stderr, "%s: unknown op '%s' or bad inputs\n", path, op && op->str ? op->str : "?");
        json_free(c);
        return 1;
    }
    inputs ins = {ins_obj, {0}, ins_obj->n};
    for (size_t i = 0; i < ins.n; i++) ins.t[i] = fixture_tensor(&ins_obj->items[i]);
    const json *gy_json = json_get(c, "grad_output");
    tensor *gy = gy_json ? fixture_tensor(gy_json) : NULL;
    result r = {0};
    int rc = rn->run(&ins, json_get(c, "params"), gy, &r);
    if (rc) {
        fprintf(stderr, "%s: the op failed (%d)\n", path, rc);
        bad++;
    } else {
        double e = fixture_rel_error(r.out, json_get(c, "output"));
        (*compared)++;
        if (e > g_worst) g_worst = e;
        if (!(e <= FIXTURE_TOLERANCE)) {
            fprintf(stderr, "%s: output relative error %g\n", path, e);
            bad++;
        }
        const json *grads = json_get(c, "grads");
        for (size_t i = 0; grads && i < grads->n; i++) {
            const tensor *g = NULL;
            for (int k = 0; k < r.ngrads; k++)
                if (!strcmp(r.grad_names[k], grads->keys[i])) g = r.grads[k];
            double ge = fixture_rel_error(g, &grads->items[i]);
            (*compared)++;
            if (ge > g_worst) g_worst = ge;
            if (!(ge <= FIXTURE_TOLERANCE)) {
                fprintf(stderr, "%s: gradient of %s relative error %g\n", path, grads->keys[i], ge);
                bad++;
            }
        }
    }
    opprof_nn_tensor_release(r.out);
    for (int k = 0; k < r.ngrads; k++) opprof_nn_tensor_release(r.grads[k]);
    for (size_t i = 0; i < ins.n; i++) opprof_nn_tensor_release(ins.t[i]);
    opprof_nn_tensor_release(gy);
    json_free(c);
    return bad;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void check_folder(const char *sub)
{
    char dir[4096];
    if (!fixture_path(dir, sizeof dir, sub)) {
        fprintf(stderr, "SKIP: fixture folder %s is absent\n", dir);
        skip();
    }
    DIR *d = opendir(dir);
    assert_non_null(d);
    char *names[512];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 512) {
        size_t len = strlen(e->d_name);
        if (len > 5 && !strcmp(e->d_name + len - 5, ".json")) names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    int bad = 0, compared = 0;
    g_worst = 0;
    for (size_t i = 0; i < n; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        bad += check_case(path, &compared);
        free(names[i]);
    }
    printf("%s: %zu cases, %d comparisons, %d failed, largest relative error %.3g\n", sub, n, compared, bad,
           g_worst);
    assert_true(n > 0);
    assert_int_equal(bad, 0);
}

static void test_torch_ops(void **state)
{
    (void)state;
    check_folder("torch-ops");
}

static void test_torch_grads(void **state)
{
    (void)state;
    check_folder("torch-grads");
}

int main(void)
{
    opprof_nn_set_threads(1); /* OpenMP threads are not instrumented for TSan */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_torch_ops),
        cmocka_unit_test(test_torch_grads),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    opprof_nn_shutdown();
    return rc;
}

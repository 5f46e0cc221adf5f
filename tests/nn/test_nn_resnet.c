/* ResNet-18 as torchvision builds it: parameters and their names, the
 * operators one inference records (counts, names and nesting as PyTorch
 * records them), FLOPs exactly as PyTorch counts them, memory attributed
 * through aten::empty, and training that lowers the loss. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>

#include <cmocka.h>

#include "fixtures.h"
#include "nn_trace.h"
#include "opprof_nn.h"

/* One model for the whole group (building ResNet-18 is most of the cost
 * under the sanitizers); the training test runs last, as it changes it. */
static opprof_nn_model *g_model;

static int make_model(void **state)
{
    (void)state;
    return opprof_nn_resnet18(1000, 42, &g_model);
}

static int free_model(void **state)
{
    (void)state;
    opprof_nn_model_free(g_model);
    return 0;
}

static opprof_nn_tensor *image(int64_t n, int64_t size, uint64_t seed)
{
    int64_t d[4] = {n, 3, size, size};
    opprof_nn_tensor *x = NULL;
    assert_int_equal(opprof_nn_tensor_new(4, d, &x), OPPROF_OK);
    opprof_nn_tensor_normal(x, 0.0f, 1.0f, seed);
    return x;
}

/* One inference of ResNet-18 at batch n, size x size, recorded with cfg. */
static opprof_trace *profile_forward(opprof_nn_model *m, int64_t n, int64_t size, const opprof_config *cfg)
{
    opprof_nn_tensor *x = image(n, size, 1), *y = NULL;
    assert_int_equal(opprof_start(cfg), OPPROF_OK);
    int rc = opprof_nn_model_forward(m, x, 0, &y);
    opprof_trace *tr = NULL;
    assert_int_equal(opprof_stop(&tr), OPPROF_OK);
    assert_int_equal(rc, OPPROF_OK);
    assert_int_equal(y->ndim, 2);
    assert_int_equal(y->dims[0], n);
    assert_int_equal(y->dims[1], 1000);
    opprof_nn_tensor_release(y);
    opprof_nn_tensor_release(x);
    return tr;
}

static void test_parameters_as_torchvision(void **state)
{
    (void)state;
    opprof_nn_model *m = g_model;
    /* sum(p.numel() for p in torchvision.models.resnet18().parameters()) */
    assert_int_equal(opprof_nn_model_numel(m), 11689512);
    /* the state_dict less its 20 num_batches_tracked entries */
    assert_int_equal(opprof_nn_model_param_count(m), 102);
    assert_string_equal(opprof_nn_model_param(m, 0)->name, "conv1.weight");
    assert_string_equal(opprof_nn_model_param(m, 101)->name, "fc.bias");
    opprof_nn_param *ds = opprof_nn_model_find(m, "layer2.0.downsample.0.weight");
    assert_non_null(ds);
    assert_int_equal(ds->value->dims[0], 128);
    assert_int_equal(ds->value->dims[1], 64);
    assert_int_equal(ds->value->dims[2], 1);
    assert_null(opprof_nn_model_find(m, "layer1.0.downsample.0.weight"));
    opprof_nn_param *rv = opprof_nn_model_find(m, "layer4.1.bn2.running_var");
    assert_non_null(rv);
    assert_true(rv->is_buffer);
    assert_true(rv->value->data[0] == 1.0f);
    assert_true(opprof_nn_model_find(m, "layer4.1.bn2.running_mean")->value->data[0] == 0.0f);
    /* Kaiming normal, fan_out: std sqrt(2 / (512 * 3 * 3)) for layer4's convolutions */
    const opprof_nn_tensor *w = opprof_nn_model_find(m, "layer4.1.conv2.weight")->value;
    double ss = 0;
    for (int64_t i = 0; i < w->numel; i++) ss += (double)w->data[i] * w->data[i];
    double sd = sqrt(ss / (double)w->numel), want = sqrt(2.0 / (512 * 9));
    assert_true(fabs(sd - want) < 0.01 * want);
    /* a seed gives the same weights each time, another seed others (a block
     * is built by the same code as the whole network) */
    opprof_nn_model *a = NULL, *b = NULL, *c = NULL;
    assert_int_equal(opprof_nn_basic_block(64, 128, 2, 42, &a), OPPROF_OK);
    assert_int_equal(opprof_nn_basic_block(64, 128, 2, 42, &b), OPPROF_OK);
    assert_int_equal(opprof_nn_basic_block(64, 128, 2, 43, &c), OPPROF_OK);
    assert_int_equal(opprof_nn_model_param_count(a), 15);
    const char *name = "downsample.0.weight";
    assert_memory_equal(opprof_nn_model_find(a, name)->value->data, opprof_nn_model_find(b, name)->value->data, 256);
    assert_memory_not_equal(opprof_nn_model_find(a, name)->value->data, opprof_nn_model_find(c, name)->value->data,
                            256);
    opprof_nn_model_free(a);
    opprof_nn_model_free(b);
    opprof_nn_model_free(c);
}

static void test_inference_operators(void **state)
{
    (void)state;
    opprof_nn_model *m = g_model;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.record_shapes = 1;
    opprof_trace *tr = profile_forward(m, 1, 64, &cfg);
    name_totals t;
    totals_of(tr, &t);
    static const struct {
        const char *name;
        uint64_t count;
    } want[] = {{"aten::conv2d", 20},  {"aten::batch_norm", 20},          {"aten::relu_", 17},
                {"aten::max_pool2d", 1}, {"aten::add_", 8},               {"aten::adaptive_avg_pool2d", 1},
                {"aten::flatten", 1},  {"aten::linear", 1},               {"aten::mkldnn_convolution", 20},
                {"aten::addmm", 1},    {"aten::native_batch_norm", 20},   {"aten::clamp_min_", 17}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        if (name_count(&t, want[i].name) != want[i].count)
            fail_msg("%s: %llu calls, want %llu", want[i].name, (unsigned long long)name_count(&t, want[i].name),
                     (unsigned long long)want[i].count);
    }
    /* the backend range nests inside the operator: self < total there only */
    const name_total *conv = name_find(&t, "aten::conv2d"), *mkl = name_find(&t, "aten::mkldnn_convolution");
    assert_true(conv->self_ns < conv->total_ns / 10);
    assert_true(mkl->self_ns > mkl->total_ns / 2);
    /* the first convolution's shapes, as PyTorch records them */
    int found = 0;
    for (size_t i = 0; i < opprof_trace_event_count(tr) && !found; i++) {
        opprof_event e;
        opprof_trace_event(tr, i, &e);
        if (!strcmp(e.name, "aten::conv2d")) {
            assert_string_equal(e.input_shapes, "[[1, 3, 64, 64], [64, 3, 7, 7], [], [], [], [], []]");
            assert_int_equal(e.parent, -1);
            found = 1;
        }
    }
    assert_true(found);

    /* Against PyTorch's own trace of the same model: every name we record
     * is one PyTorch records, as many times (aten::empty aside: PyTorch
     * allocates differently). */
    char path[4096];
    if (fixture_path(path, sizeof path, "torch-traces/resnet18_infer_b5.trace.json")) {
        json *doc = NULL;
        name_totals ref;
        assert_int_equal(fixture_trace_counts(path, &doc, &ref), 0);
        for (size_t i = 0; i < t.n; i++) {
            if (!strcmp(t.row[i].name, "aten::empty")) continue;
            const name_total *r = name_find(&ref, t.row[i].name);
            if (!r || r->count != t.row[i].count)
                fail_msg("%s: %llu calls here, %llu in PyTorch's trace", t.row[i].name,
                         (unsigned long long)t.row[i].count, r ? (unsigned long long)r->count : 0ull);
        }
        json_free(doc);
    } else
        fprintf(stderr, "note: %s absent, PyTorch name check skipped\n", path);
    opprof_trace_free(tr);
}

/* The guide's FLOPs table: batch 5 x 3 x 224 x 224. Only the operator that
 * owns the work carries FLOPs. */
static void test_flops_exact(void **state)
{
    (void)state;
    opprof_nn_model *m = g_model;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.with_flops = 1;
    opprof_trace *tr = profile_forward(m, 5, 224, &cfg);
    name_totals t;
    totals_of(tr, &t);
    const name_total *conv = name_find(&t, "aten::conv2d"), *addmm = name_find(&t, "aten::addmm");
    assert_non_null(conv);
    assert_non_null(addmm);
    assert_int_equal(conv->count, 20);
    assert_int_equal(conv->flops, 18135613440ull);
    assert_int_equal(addmm->flops, 5120000ull);
    for (size_t i = 0; i < t.n; i++)
        if (t.row[i].flops && &t.row[i] != conv && &t.row[i] != addmm) fail_msg("%s carries FLOPs", t.row[i].name);
    opprof_trace_free(tr);
}

/* With profile_memory, tensor memory is charged to aten::empty and, through
 * the tree, to the operator that made it: a convolution keeps its output. */
static void test_memory_attribution(void **state)
{
    (void)state;
    opprof_nn_model *m = g_model;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.profile_memory = 1;
    opprof_nn_tensor *x = image(1, 64, 1), *y = NULL; /* warm-up: the weights' blocked copies are made and kept */
    assert_int_equal(opprof_nn_model_forward(m, x, 0, &y), OPPROF_OK);
    opprof_nn_tensor_release(y);
    opprof_nn_tensor_release(x);
    opprof_trace *tr = profile_forward(m, 1, 64, &cfg);
    int seen = 0;
    for (size_t i = 0; i < opprof_trace_event_count(tr) && !seen; i++) {
        opprof_event e;
        opprof_trace_event(tr, i, &e);
        if (!strcmp(e.name, "aten::conv2d")) { /* the stem: 64 x 32 x 32 floats out */
            assert_int_equal(e.cpu_memory_usage, 64 * 32 * 32 * 4);
            assert_int_equal(e.self_cpu_memory_usage, 0);
            seen = 1;
        }
    }
    assert_true(seen);
    name_totals t;
    totals_of(tr, &t);
    assert_true(name_find(&t, "aten::empty")->self_mem > 0);
    assert_int_equal(name_find(&t, "aten::relu_")->mem, 0); /* in place */
    opprof_trace_free(tr);
}

static double max_rel_diff(const opprof_nn_tensor *a, const opprof_nn_tensor *b)
{
    double d = 0, r = 0;
    assert_int_equal(a->numel, b->numel);
    for (int64_t i = 0; i < a->numel; i++) {
        double e = fabs((double)a->data[i] - b->data[i]);
        d = e > d ? e : d;
        r = fabs((double)b->data[i]) > r ? fabs((double)b->data[i]) : r;
    }
    return r > 0 ? d / r : d;
}

/* The parallel loops give what one thread gives: a forward, and a training
 * step's gradients (batch statistics, pooling, convolutions backward). Not
 * under TSan, which does not see OpenMP's synchronisation. */
static void test_threads_agree(void **state)
{
    (void)state;
#if defined(__SANITIZE_THREAD__)
    skip();
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
    skip();
#endif
#endif
    opprof_nn_tensor *x = image(2, 64, 9), *y[2] = {NULL, NULL};
    opprof_nn_tensor *g[2][3] = {{NULL}};
    static const char *const names[3] = {"conv1.weight", "layer1.0.bn1.weight", "layer4.1.conv2.weight"};
    int64_t targets[2] = {3, 5};
    for (int k = 0; k < 2; k++) {
        opprof_nn_set_threads(k ? 3 : 1);
        assert_int_equal(opprof_nn_model_forward(g_model, x, 0, &y[k]), OPPROF_OK);
        opprof_nn_model *m = NULL;
        opprof_nn_sgd *sgd = NULL;
        opprof_nn_sgd_options o = {0.0f, 0.0f, 0.0f, 0.0f, 0};
        assert_int_equal(opprof_nn_resnet18(10, 5, &m), OPPROF_OK);
        assert_int_equal(opprof_nn_sgd_new(m, &o, &sgd), OPPROF_OK);
        float loss;
        assert_int_equal(opprof_nn_train_step(m, sgd, x, targets, &loss), OPPROF_OK);
        for (int i = 0; i < 3; i++) g[k][i] = opprof_nn_tensor_retain(opprof_nn_model_find(m, names[i])->grad);
        opprof_nn_sgd_free(sgd);
        opprof_nn_model_free(m);
    }
    opprof_nn_set_threads(1);
    assert_true(max_rel_diff(y[1], y[0]) < 1e-5);
    for (int i = 0; i < 3; i++) {
        double e = max_rel_diff(g[1][i], g[0][i]);
        if (!(e < 1e-4)) fail_msg("gradient of %s: 1 and 3 threads differ by %g", names[i], e);
        opprof_nn_tensor_release(g[0][i]);
        opprof_nn_tensor_release(g[1][i]);
    }
    opprof_nn_tensor_release(y[0]);
    opprof_nn_tensor_release(y[1]);
    opprof_nn_tensor_release(x);
}

static void test_training_lowers_loss(void **state)
{
    (void)state;
    opprof_nn_model *m = g_model;
    opprof_nn_sgd *sgd = NULL;
    opprof_nn_sgd_options o = {0.01f, 0.9f, 0.0f, 1e-4f, 0};
    assert_int_equal(opprof_nn_sgd_new(m, &o, &sgd), OPPROF_OK);
    opprof_nn_tensor *x = image(4, 32, 5);
    int64_t targets[4] = {1, 7, 3, 3};
    float loss[5];
    opprof_config cfg;
    opprof_config_init(&cfg);
    for (int s = 0; s < 5; s++) {
        if (s == 0) assert_int_equal(opprof_start(&cfg), OPPROF_OK);
        assert_int_equal(opprof_nn_train_step(m, sgd, x, targets, &loss[s]), OPPROF_OK);
        if (s == 0) {
            opprof_trace *tr = NULL;
            assert_int_equal(opprof_stop(&tr), OPPROF_OK);
            name_totals t;
            totals_of(tr, &t);
            assert_int_equal(name_count(&t, "train_step"), 1);
            assert_int_equal(name_count(&t, "ConvolutionBackward0"), 20);
            assert_int_equal(name_count(&t, "autograd::engine::evaluate_function: ConvolutionBackward0"), 20);
            assert_int_equal(name_count(&t, "NativeBatchNormBackward0"), 20);
            assert_int_equal(name_count(&t, "ReluBackward0"), 17);
            assert_int_equal(name_count(&t, "AddBackward0"), 8);
            assert_int_equal(name_count(&t, "MaxPool2DWithIndicesBackward0"), 1);
            assert_int_equal(name_count(&t, "AddmmBackward0"), 1);
            assert_int_equal(name_count(&t, "Optimizer.step#SGD.step"), 1);
            assert_int_equal(name_count(&t, "torch::autograd::AccumulateGrad"), 62);
            opprof_trace_free(tr);
        }
        printf("step %d: loss %.4f\n", s, loss[s]);
    }
    assert_true(loss[4] < loss[0] * 0.9f);
    for (size_t i = 0; i < opprof_nn_model_param_count(m); i++) {
        opprof_nn_param *p = opprof_nn_model_param(m, i);
        assert_true(p->is_buffer ? p->grad == NULL : p->grad != NULL);
    }
    opprof_nn_tensor_release(x);
    opprof_nn_sgd_free(sgd);
}

int main(void)
{
    opprof_nn_set_threads(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parameters_as_torchvision), cmocka_unit_test(test_inference_operators),
        cmocka_unit_test(test_flops_exact),               cmocka_unit_test(test_memory_attribution),
        cmocka_unit_test(test_threads_agree),
        cmocka_unit_test(test_training_lowers_loss),
    };
    int rc = cmocka_run_group_tests(tests, make_model, free_model);
    opprof_nn_shutdown();
    return rc;
}

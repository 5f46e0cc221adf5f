/* The MLP of the PyTorch trace fixture (Linear(64,128)-ReLU-Linear(128,10),
 * SGD, cross-entropy, batch 32, three steps in "train_step"): the same
 * operator names and counts, and the FLOPs of PyTorch's with_flops run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "fixtures.h"
#include "nn_trace.h"
#include "opprof_nn.h"

static opprof_trace *train_3_steps(float *loss)
{
    static const int sizes[3] = {64, 128, 10};
    opprof_nn_model *m = NULL;
    opprof_nn_sgd *sgd = NULL;
    assert_int_equal(opprof_nn_mlp(3, sizes, 7, &m), OPPROF_OK);
    assert_int_equal(opprof_nn_model_param_count(m), 4);
    assert_string_equal(opprof_nn_model_param(m, 2)->name, "2.weight");
    opprof_nn_sgd_options o = {0.1f, 0.9f, 0.0f, 0.0f, 0};
    assert_int_equal(opprof_nn_sgd_new(m, &o, &sgd), OPPROF_OK);
    int64_t d[2] = {32, 64};
    opprof_nn_tensor *x = NULL;
    assert_int_equal(opprof_nn_tensor_new(2, d, &x), OPPROF_OK);
    opprof_nn_tensor_normal(x, 0.0f, 1.0f, 11);
    int64_t targets[32];
    for (int i = 0; i < 32; i++) targets[i] = (i * 7) % 10;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.with_flops = 1;
    cfg.record_shapes = 1;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    for (int s = 0; s < 3; s++) assert_int_equal(opprof_nn_train_step(m, sgd, x, targets, &loss[s]), OPPROF_OK);
    opprof_trace *tr = NULL;
    assert_int_equal(opprof_stop(&tr), OPPROF_OK);
    opprof_nn_tensor_release(x);
    opprof_nn_sgd_free(sgd);
    opprof_nn_model_free(m);
    return tr;
}

static void test_mlp_like_pytorch(void **state)
{
    (void)state;
    float loss[3];
    opprof_trace *tr = train_3_steps(loss);
    assert_true(loss[2] < loss[0]);
    name_totals t;
    totals_of(tr, &t);
    /* aten::addmm 1818624 and aten::mm 2064384 FLOPs in PyTorch's run */
    assert_int_equal(name_find(&t, "aten::addmm")->flops, 1818624ull);
    assert_int_equal(name_find(&t, "aten::mm")->flops, 2064384ull);
    const name_total *step = name_find(&t, "train_step");
    assert_non_null(step);
    assert_int_equal(step->count, 3);
    char path[4096];
    if (!fixture_path(path, sizeof path, "torch-traces/mlp_train_3steps.trace.json")) {
        fprintf(stderr, "SKIP: %s absent\n", path);
        opprof_trace_free(tr);
        skip();
    }
    json *doc = NULL;
    name_totals ref;
    assert_int_equal(fixture_trace_counts(path, &doc, &ref), 0);
    /* Every name we record is one PyTorch records; those that are the
     * model's work come as many times. aten::empty, aten::add_ and
     * aten::zeros differ: PyTorch's allocations and its optimizer's
     * arithmetic are not ours. */
    static const char *const not_counted[] = {"aten::empty", "aten::add_", "aten::zeros", "aten::zero_"};
    for (size_t i = 0; i < t.n; i++) {
        const name_total *r = name_find(&ref, t.row[i].name);
        if (!r) fail_msg("%s: not a name PyTorch records", t.row[i].name);
        int skip_count = 0;
        for (size_t k = 0; k < sizeof not_counted / sizeof *not_counted; k++)
            skip_count |= !strcmp(not_counted[k], t.row[i].name);
        if (!skip_count && r->count != t.row[i].count)
            fail_msg("%s: %llu calls here, %llu in PyTorch's trace", t.row[i].name,
                     (unsigned long long)t.row[i].count, (unsigned long long)r->count);
    }
    json_free(doc);
    opprof_trace_free(tr);
}

int main(void)
{
    opprof_nn_set_threads(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mlp_like_pytorch),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    opprof_nn_shutdown();
    return rc;
}

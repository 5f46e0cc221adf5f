/* Memory profiling of ResNet-18 inference, checked against figures worked
 * out here from the layer shapes alone: every tensor the forward pass makes
 * (its number and bytes), what each kind of operator keeps, and the live
 * total coming back to where it started once the output is freed. The shape
 * arithmetic is itself checked against what PyTorch measured at batch 5 x
 * 224 x 224 (the fixture), so the expected figures do not come from the
 * code under test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "csv.h"
#include "fixtures.h"
#include "model/model.h"
#include "opprof_nn.h"
#include "slurp.h"

/* What one inference allocates, from torchvision's ResNet-18 definition. */
typedef struct expected {
    int64_t tensors, bytes;  /* every tensor made (aten::empty) */
    int64_t conv;            /* the outputs of the 20 convolutions */
    int64_t bn;              /* batch norms: output, and per-channel mean and 1/std */
    int64_t bn_out;          /* their outputs alone (what PyTorch keeps) */
    int64_t pool, avg, fc;   /* max pool, global average pool, fully connected outputs */
    int64_t stem_peak;       /* conv1's and bn1's outputs, both live during bn1 */
} expected;

static int64_t out_size(int64_t in, int k, int s, int p)
{
    return (in + 2 * p - k) / s + 1;
}

static void add_conv_bn(expected *e, int64_t n, int64_t c, int64_t h, int64_t w)
{
    int64_t act = n * c * h * w * 4;
    e->conv += act;
    e->bn_out += act;
    e->bn += act + 2 * c * 4;
    e->tensors += 4; /* conv out; bn out, mean, invstd */
}

static expected resnet18_expected(int64_t n, int64_t size, int classes)
{
    expected e = {0};
    int64_t h = out_size(size, 7, 2, 3);
    add_conv_bn(&e, n, 64, h, h);
    e.stem_peak = 2 * n * 64 * h * h * 4;
    h = out_size(h, 3, 2, 1);
    e.pool = n * 64 * h * h * 4;
    int64_t ch = 64;
    static const int widths[4] = {64, 128, 256, 512};
    for (int layer = 0; layer < 4; layer++)
        for (int blk = 0; blk < 2; blk++) {
            int stride = layer > 0 && blk == 0 ? 2 : 1;
            int64_t out_h = out_size(h, 3, stride, 1);
            add_conv_bn(&e, n, widths[layer], out_h, out_h); /* conv1, bn1 */
            add_conv_bn(&e, n, widths[layer], out_h, out_h); /* conv2, bn2 */
            if (stride != 1 || ch != widths[layer])          /* the 1x1 downsample */
                add_conv_bn(&e, n, widths[layer], out_size(h, 1, stride, 0), out_size(h, 1, stride, 0));
            h = out_h;
            ch = widths[layer];
        }
    e.avg = n * 512 * 4;
    e.fc = n * classes * 4;
    e.tensors += 3; /* pool, avg, fc; flatten is a view */
    e.bytes = e.bn + e.conv + e.pool + e.avg + e.fc;
    return e;
}

/* The shape arithmetic against PyTorch's own figures for batch 5 x 224 x
 * 224 (resnet18_infer_b5.memory_flops.key_averages.csv). */
static void test_expected_figures_match_pytorch(void **state)
{
    (void)state;
    char path[1024];
    if (!fixture_path(path, sizeof path, "torch-traces/resnet18_infer_b5.memory_flops.key_averages.csv")) {
        printf("skipped: no fixture at %s\n", path);
        skip();
    }
    char *csv = slurp(path);
    assert_non_null(csv);
    expected e = resnet18_expected(5, 224, 1000);
    struct {
        const char *name;
        int64_t want, seen;
    } rows[] = {{"aten::conv2d", e.conv, -1},
                {"aten::batch_norm", e.bn_out, -1}, /* PyTorch's eval batch norm keeps no statistics */
                {"aten::adaptive_avg_pool2d", e.avg, -1},
                {"aten::linear", e.fc, -1}};
    for (const char *p = strchr(csv, '\n'); p && *++p;) {
        char f[7][128];
        for (int k = 0; k < 7; k++) csv_field(&p, f[k], sizeof f[k]);
        for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
            if (!strcmp(f[0], rows[i].name)) rows[i].seen = strtoll(f[4], NULL, 10); /* cpu_memory_usage */
        p = strchr(p, '\n');
        if (!p) break;
    }
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        if (rows[i].seen != rows[i].want)
            fail_msg("%s: PyTorch %lld bytes, the shapes give %lld", rows[i].name, (long long)rows[i].seen,
                     (long long)rows[i].want);
    /* max pool: PyTorch's output is ours; its int64 indices come on top */
    assert_non_null(strstr(csv, "\naten::max_pool2d_with_indices,1,"));
    assert_int_equal(e.pool * 3, 12042240);
    free(csv);
}

static const opprof_avg_row *row_of(const opprof_key_averages *ka, const char *name, opprof_avg_row *r)
{
    for (size_t i = 0; i < opprof_key_averages_count(ka); i++)
        if (opprof_key_averages_row(ka, i, r) == OPPROF_OK && !strcmp(r->name, name)) return r;
    fail_msg("no row %s", name);
    return NULL;
}

static void check_row(const opprof_key_averages *ka, const char *name, int64_t mem, int64_t self_mem)
{
    opprof_avg_row r;
    row_of(ka, name, &r);
    if (r.cpu_memory_usage != mem || r.self_cpu_memory_usage != self_mem)
        fail_msg("%s: CPU Mem %lld, Self CPU Mem %lld; the shapes give %lld, %lld", name, (long long)r.cpu_memory_usage,
                 (long long)r.self_cpu_memory_usage, (long long)mem, (long long)self_mem);
}

static void test_forward_allocates_what_the_shapes_imply(void **state)
{
    (void)state;
    const int64_t n = 2, size = 70; /* odd sizes: every rounding of the output sizes counts */
    expected e = resnet18_expected(n, size, 1000);
    opprof_nn_set_threads(1);
    opprof_nn_model *m = NULL;
    assert_int_equal(opprof_nn_resnet18(1000, 7, &m), OPPROF_OK);
    int64_t d[4] = {n, 3, size, size};
    opprof_nn_tensor *x = NULL, *y = NULL;
    assert_int_equal(opprof_nn_tensor_new(4, d, &x), OPPROF_OK);
    opprof_nn_tensor_normal(x, 0.0f, 1.0f, 1);
    /* warm-up: the weights' blocked copies are made once and kept on the model */
    assert_int_equal(opprof_nn_model_forward(m, x, 0, &y), OPPROF_OK);
    opprof_nn_tensor_release(y);

    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.profile_memory = 1;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    const opprof_site *fwd = opprof_annotation_begin("forward");
    int rc = opprof_nn_model_forward(m, x, 0, &y);
    opprof_end(fwd);
    opprof_nn_tensor_release(y); /* outside any operator: a [memory] row */
    opprof_trace *tr = NULL;
    assert_int_equal(opprof_stop(&tr), OPPROF_OK);
    assert_int_equal(rc, OPPROF_OK);

    opprof_key_averages *ka = NULL;
    assert_int_equal(opprof_key_averages(tr, NULL, &ka), OPPROF_OK);
    opprof_avg_row r;
    row_of(ka, "aten::empty", &r);
    assert_int_equal(r.count, e.tensors);
    check_row(ka, "aten::empty", e.bytes, e.bytes);
    /* each operator keeps its output; the oneDNN layout copies a convolution
     * makes are freed inside it, so nothing is its own */
    check_row(ka, "aten::conv2d", e.conv, 0);
    check_row(ka, "aten::mkldnn_convolution", e.conv, 0);
    check_row(ka, "aten::batch_norm", e.bn, 0);
    check_row(ka, "aten::max_pool2d", e.pool, 0);
    check_row(ka, "aten::adaptive_avg_pool2d", e.avg, 0);
    check_row(ka, "aten::linear", e.fc, 0);
    check_row(ka, "aten::relu_", 0, 0); /* in place */
    check_row(ka, "aten::add_", 0, 0);
    /* the pass as a whole keeps only its output; the intermediates (and the
     * batch norms' statistics) are freed between operators */
    check_row(ka, "forward", e.fc, -(e.bytes - e.fc));
    row_of(ka, "[memory]", &r);
    assert_int_equal(r.cpu_memory_usage, -e.fc);

    opprof_memory_stats st;
    assert_int_equal(opprof_trace_memory_stats(tr, &st), OPPROF_OK);
    assert_true(st.bytes_allocated >= e.bytes); /* the tensors, and the layout copies */
    assert_int_equal(st.bytes_freed, st.bytes_allocated);
    assert_int_equal(st.allocations, st.frees);
    assert_int_equal(st.final_bytes, 0);
    assert_int_equal(st.unknown_frees, 0);
    assert_int_equal(st.double_frees, 0);
    assert_true(st.peak_bytes >= e.stem_peak);
    assert_non_null(st.peak_op);
    /* the live total: the output's bytes until its free, then the start */
    assert_true(tr->nmem >= 2);
    const op_mem_event *last = &tr->mem[tr->nmem - 1];
    assert_int_equal(last->bytes, -e.fc);
    assert_int_equal(last->total_allocated, 0);
    assert_int_equal(tr->mem[tr->nmem - 2].total_allocated, e.fc);

    opprof_key_averages_free(ka);
    opprof_trace_free(tr);
    opprof_nn_tensor_release(x);
    opprof_nn_model_free(m);
    opprof_nn_shutdown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expected_figures_match_pytorch),
        cmocka_unit_test(test_forward_allocates_what_the_shapes_imply),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

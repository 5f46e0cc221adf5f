/* What the PyTorch fixtures do not cover, against plain loops written here
 * from the definitions: dilated, grouped, strided convolution forward and
 * backward; adaptive average pooling to a size other than 1x1; batch norm's
 * running statistics; SGD's update with momentum, dampening, weight decay
 * and Nesterov. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "opprof_nn.h"

typedef opprof_nn_tensor tensor;

static tensor *randn(int ndim, const int64_t *dims, uint64_t seed)
{
    tensor *t = NULL;
    assert_int_equal(opprof_nn_tensor_new(ndim, dims, &t), OPPROF_OK);
    opprof_nn_tensor_normal(t, 0.0f, 1.0f, seed);
    return t;
}

static double rel_err(const float *a, const double *b, int64_t n)
{
    double d = 0, r = 0;
    for (int64_t i = 0; i < n; i++) {
        d = fmax(d, fabs(a[i] - b[i]));
        r = fmax(r, fabs(b[i]));
    }
    return r > 0 ? d / r : d;
}

/* y[n][o][oy][ox] = b[o] + sum over the group's channels and the kernel of
 * x[n][g*cg + c][oy*s - p + ky*d][ox*s - p + kx*d] w[o][c][ky][kx] */
static void test_conv_dilated_grouped(void **state)
{
    (void)state;
    const int64_t N = 2, C = 4, H = 9, W = 8, O = 6, G = 2, K = 3;
    opprof_nn_conv2d_params p = {{2, 1}, {2, 1}, {2, 3}, (int)G};
    int64_t xd[4] = {N, C, H, W}, wd[4] = {O, C / G, K, K}, bd[1] = {O};
    tensor *x = randn(4, xd, 1), *w = randn(4, wd, 2), *b = randn(1, bd, 3), *y = NULL;
    assert_int_equal(opprof_nn_conv2d(x, w, b, &p, &y), OPPROF_OK);
    int64_t OH = (H + 2 * p.padding[0] - p.dilation[0] * (K - 1) - 1) / p.stride[0] + 1;
    int64_t OW = (W + 2 * p.padding[1] - p.dilation[1] * (K - 1) - 1) / p.stride[1] + 1;
    assert_int_equal(y->dims[2], OH);
    assert_int_equal(y->dims[3], OW);
    int64_t cg = C / G, og = O / G;
    double *ref = calloc((size_t)y->numel, sizeof *ref), *gx = calloc((size_t)x->numel, sizeof *gx);
    double *gw = calloc((size_t)w->numel, sizeof *gw), *gb = calloc((size_t)O, sizeof *gb);
    tensor *dy = randn(4, y->dims, 4);
    for (int64_t n = 0; n < N; n++)
        for (int64_t o = 0; o < O; o++)
            for (int64_t oy = 0; oy < OH; oy++)
                for (int64_t ox = 0; ox < OW; ox++) {
                    int64_t yi = ((n * O + o) * OH + oy) * OW + ox;
                    double s = b->data[o], g = dy->data[yi];
                    gb[o] += g;
                    for (int64_t c = 0; c < cg; c++)
                        for (int64_t ky = 0; ky < K; ky++)
                            for (int64_t kx = 0; kx < K; kx++) {
                                int64_t iy = oy * p.stride[0] - p.padding[0] + ky * p.dilation[0];
                                int64_t ix = ox * p.stride[1] - p.padding[1] + kx * p.dilation[1];
                                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                                int64_t xi = ((n * C + (o / og) * cg + c) * H + iy) * W + ix;
                                int64_t wi = ((o * cg + c) * K + ky) * K + kx;
                                s += (double)x->data[xi] * w->data[wi];
                                gx[xi] += g * w->data[wi];
                                gw[wi] += g * x->data[xi];
                            }
                    ref[yi] = s;
                }
    assert_true(rel_err(y->data, ref, y->numel) < 1e-5);
    tensor *dx = NULL, *dw = NULL, *db = NULL;
    assert_int_equal(opprof_nn_conv2d_backward(x, w, &p, dy, &dx, &dw, &db), OPPROF_OK);
    assert_true(rel_err(dx->data, gx, x->numel) < 1e-5);
    assert_true(rel_err(dw->data, gw, w->numel) < 1e-5);
    assert_true(rel_err(db->data, gb, O) < 1e-5);
    /* a kernel that does not fit, and channels that do not split in groups */
    opprof_nn_conv2d_params bad = p;
    bad.groups = 3;
    tensor *z = NULL;
    assert_int_equal(opprof_nn_conv2d(x, w, b, &bad, &z), OPPROF_E_INVAL);
    assert_null(z);
    free(ref);
    free(gx);
    free(gw);
    free(gb);
    tensor *all[] = {x, w, b, y, dy, dx, dw, db};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) opprof_nn_tensor_release(all[i]);
}

/* Windows [floor(i*in/out), ceil((i+1)*in/out)) */
static void test_adaptive_avg_pool(void **state)
{
    (void)state;
    int64_t xd[4] = {2, 3, 5, 7};
    tensor *x = randn(4, xd, 5), *y = NULL;
    assert_int_equal(opprof_nn_adaptive_avg_pool2d(x, 2, 3, &y), OPPROF_OK);
    double ref[2 * 3 * 2 * 3], gx[2 * 3 * 5 * 7] = {0};
    tensor *dy = randn(4, y->dims, 6);
    for (int64_t pl = 0; pl < 6; pl++)
        for (int64_t oy = 0; oy < 2; oy++)
            for (int64_t ox = 0; ox < 3; ox++) {
                int64_t y0 = oy * 5 / 2, y1 = ((oy + 1) * 5 + 1) / 2, x0 = ox * 7 / 3, x1 = ((ox + 1) * 7 + 2) / 3;
                double s = 0, cnt = (double)((y1 - y0) * (x1 - x0)), g = dy->data[(pl * 2 + oy) * 3 + ox];
                for (int64_t i = y0; i < y1; i++)
                    for (int64_t j = x0; j < x1; j++) {
                        s += x->data[pl * 35 + i * 7 + j];
                        gx[pl * 35 + i * 7 + j] += g / cnt;
                    }
                ref[(pl * 2 + oy) * 3 + ox] = s / cnt;
            }
    assert_true(rel_err(y->data, ref, y->numel) < 1e-6);
    tensor *dx = NULL;
    assert_int_equal(opprof_nn_adaptive_avg_pool2d_backward(x, dy, &dx), OPPROF_OK);
    assert_true(rel_err(dx->data, gx, x->numel) < 1e-6);
    opprof_nn_tensor_release(x);
    opprof_nn_tensor_release(y);
    opprof_nn_tensor_release(dy);
    opprof_nn_tensor_release(dx);
}

/* softmax's gradient against central differences of sum(dy * softmax(x)) */
static void test_softmax_backward(void **state)
{
    (void)state;
    int64_t d[3] = {2, 5, 3};
    tensor *x = randn(3, d, 8), *dy = randn(3, d, 9), *y = NULL, *dx = NULL;
    assert_int_equal(opprof_nn_softmax(x, 1, &y), OPPROF_OK);
    assert_int_equal(opprof_nn_softmax_backward(y, dy, 1, &dx), OPPROF_OK);
    double num[30];
    for (int64_t i = 0; i < x->numel; i++) {
        double f[2];
        float keep = x->data[i];
        for (int side = 0; side < 2; side++) {
            x->data[i] = keep + (side ? 1e-2f : -1e-2f);
            tensor *t = NULL;
            assert_int_equal(opprof_nn_softmax(x, 1, &t), OPPROF_OK);
            f[side] = 0;
            for (int64_t j = 0; j < t->numel; j++) f[side] += (double)dy->data[j] * t->data[j];
            opprof_nn_tensor_release(t);
        }
        x->data[i] = keep;
        num[i] = (f[1] - f[0]) / 2e-2;
    }
    assert_true(rel_err(dx->data, num, x->numel) < 1e-3);
    /* each slice along dim sums to one */
    for (int64_t o = 0; o < 2; o++)
        for (int64_t k = 0; k < 3; k++) {
            double s = 0;
            for (int64_t i = 0; i < 5; i++) s += y->data[o * 15 + i * 3 + k];
            assert_float_equal(s, 1.0, 1e-6);
        }
    tensor *all[] = {x, dy, y, dx};
    for (size_t i = 0; i < 4; i++) opprof_nn_tensor_release(all[i]);
}

/* running = (1 - m) running + m stat, the variance unbiased (n / (n - 1)) */
static void test_batch_norm_running_stats(void **state)
{
    (void)state;
    int64_t xd[4] = {3, 2, 2, 2}, cd[1] = {2};
    tensor *x = randn(4, xd, 7), *rm = NULL, *rv = NULL, *y = NULL;
    assert_int_equal(opprof_nn_tensor_zeros(1, cd, &rm), OPPROF_OK);
    assert_int_equal(opprof_nn_tensor_zeros(1, cd, &rv), OPPROF_OK);
    opprof_nn_tensor_fill(rm, 0.5f);
    opprof_nn_tensor_fill(rv, 2.0f);
    assert_int_equal(opprof_nn_batch_norm(x, NULL, NULL, rm, rv, 1, 0.1f, 1e-5f, &y, NULL, NULL), OPPROF_OK);
    for (int64_t c = 0; c < 2; c++) {
        double s = 0, q = 0;
        for (int64_t n = 0; n < 3; n++)
            for (int64_t i = 0; i < 4; i++) s += x->data[(n * 2 + c) * 4 + i];
        double mean = s / 12;
        for (int64_t n = 0; n < 3; n++)
            for (int64_t i = 0; i < 4; i++) q += pow(x->data[(n * 2 + c) * 4 + i] - mean, 2);
        assert_float_equal(rm->data[c], 0.9 * 0.5 + 0.1 * mean, 1e-6);
        assert_float_equal(rv->data[c], 0.9 * 2.0 + 0.1 * q / 11, 1e-5);
        /* and the output is normalised with the biased variance */
        assert_float_equal(y->data[c * 4], (x->data[c * 4] - mean) / sqrt(q / 12 + 1e-5), 1e-4);
    }
    opprof_nn_tensor_release(x);
    opprof_nn_tensor_release(rm);
    opprof_nn_tensor_release(rv);
    opprof_nn_tensor_release(y);
}

/* Two SGD steps on one parameter with a constant gradient, against
 * torch.optim.SGD's algorithm written out. */
static void check_sgd(float lr, float mom, float damp, float wd, int nesterov)
{
    static const int sizes[2] = {3, 2};
    opprof_nn_model *m = NULL;
    opprof_nn_sgd *s = NULL;
    assert_int_equal(opprof_nn_mlp(2, sizes, 1, &m), OPPROF_OK);
    opprof_nn_sgd_options o = {lr, mom, damp, wd, nesterov};
    assert_int_equal(opprof_nn_sgd_new(m, &o, &s), OPPROF_OK);
    opprof_nn_param *p = opprof_nn_model_find(m, "0.weight");
    double w[6], buf[6];
    for (int i = 0; i < 6; i++) w[i] = p->value->data[i];
    for (int step = 0; step < 2; step++) {
        assert_int_equal(opprof_nn_sgd_zero_grad(s), OPPROF_OK);
        assert_null(p->grad);
        assert_int_equal(opprof_nn_tensor_new(2, p->value->dims, &p->grad), OPPROF_OK);
        for (int i = 0; i < 6; i++) p->grad->data[i] = 0.1f * (float)(i + 1);
        assert_int_equal(opprof_nn_sgd_step(s), OPPROF_OK);
        for (int i = 0; i < 6; i++) {
            double d = 0.1 * (i + 1) + wd * w[i];
            if (mom != 0) {
                buf[i] = step == 0 ? d : mom * buf[i] + (1 - damp) * d;
                d = nesterov ? d + mom * buf[i] : buf[i];
            }
            w[i] -= lr * d;
            assert_float_equal(p->value->data[i], w[i], 1e-6);
        }
    }
    opprof_nn_sgd_free(s);
    opprof_nn_model_free(m);
}

static void test_sgd(void **state)
{
    (void)state;
    check_sgd(0.1f, 0.0f, 0.0f, 0.0f, 0);
    check_sgd(0.1f, 0.9f, 0.0f, 0.01f, 0);
    check_sgd(0.05f, 0.9f, 0.3f, 0.0f, 0);
    check_sgd(0.1f, 0.8f, 0.0f, 0.001f, 1);
    opprof_nn_model *m = NULL;
    opprof_nn_sgd *s = NULL;
    static const int sizes[2] = {3, 2};
    assert_int_equal(opprof_nn_mlp(2, sizes, 1, &m), OPPROF_OK);
    opprof_nn_sgd_options nest_damp = {0.1f, 0.9f, 0.5f, 0.0f, 1}; /* PyTorch refuses this too */
    assert_int_equal(opprof_nn_sgd_new(m, &nest_damp, &s), OPPROF_E_INVAL);
    opprof_nn_model_free(m);
}

int main(void)
{
    opprof_nn_set_threads(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_dilated_grouped),
        cmocka_unit_test(test_adaptive_avg_pool),
        cmocka_unit_test(test_softmax_backward),
        cmocka_unit_test(test_batch_norm_running_stats),
        cmocka_unit_test(test_sgd),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    opprof_nn_shutdown();
    return rc;
}

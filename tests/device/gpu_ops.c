/* The GPU runtime's operators against CPU references, and what a session
 * with CUDA activity records of them: kernels on the device's process and
 * the stream's thread, charged to aten::conv2d / aten::batch_norm /
 * aten::linear, copies, launches inside their operators. Exits 77 (skipped)
 * without a CUDA device. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "opprof_trace.h"
#include "opprof_nn_cuda.h"

static float *random_floats(size_t n, unsigned seed)
{
    float *p = malloc(n * sizeof *p);
    assert_non_null(p);
    uint64_t s = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = (float)((s >> 40) & 0xffff) / 32768.0f - 1.0f;
    }
    return p;
}

static opprof_nn_cuda_tensor *up(int ndim, const int64_t *dims, const float *v)
{
    opprof_nn_cuda_tensor *t = NULL;
    int rc = opprof_nn_cuda_upload(ndim, dims, v, &t);
    if (rc) fprintf(stderr, "upload: %s\n", opprof_nn_cuda_error());
    assert_int_equal(rc, 0);
    return t;
}

/* Max |a - b| relative to the reference's largest magnitude. */
static double rel_err(const float *got, const float *ref, size_t n)
{
    double d = 0, m = 1e-30;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - ref[i]);
        if (e > d) d = e;
        if (fabs(ref[i]) > m) m = fabs(ref[i]);
    }
    return d / m;
}

static void check(const opprof_nn_cuda_tensor *t, const float *ref, size_t n, const char *what)
{
    float *got = malloc(n * sizeof *got);
    assert_non_null(got);
    assert_int_equal(opprof_nn_cuda_download(t, got, n), 0);
    double e = rel_err(got, ref, n);
    printf("%-22s max relative error %.2e\n", what, e);
    assert_true(e < 1e-4);
    free(got);
}

enum { N = 2, C = 3, H = 9, W = 9, O = 4, K = 3, S = 2, P = 1 };

static void test_operators_match_cpu_references(void **state)
{
    (void)state;
    int64_t xd[4] = {N, C, H, W}, wd[4] = {O, C, K, K};
    float *x = random_floats(N * C * H * W, 1), *w = random_floats(O * C * K * K, 2);
    opprof_nn_cuda_tensor *tx = up(4, xd, x), *tw = up(4, wd, w), *ty = NULL;
    opprof_nn_cuda_conv cp = {S, P};
    assert_int_equal(opprof_nn_cuda_conv2d(tx, tw, &cp, &ty), 0);
    int oh = (H + 2 * P - K) / S + 1, ow = (W + 2 * P - K) / S + 1;
    size_t ny = (size_t)N * O * oh * ow;
    float *ref = calloc(ny, sizeof *ref);
    for (int n = 0; n < N; n++)
        for (int o = 0; o < O; o++)
            for (int i = 0; i < oh; i++)
                for (int j = 0; j < ow; j++) {
                    double s = 0;
                    for (int c = 0; c < C; c++)
                        for (int ki = 0; ki < K; ki++)
                            for (int kj = 0; kj < K; kj++) {
                                int yy = i * S - P + ki, xx = j * S - P + kj;
                                if (yy < 0 || yy >= H || xx < 0 || xx >= W) continue;
                                s += (double)x[((n * C + c) * H + yy) * W + xx] * w[((o * C + c) * K + ki) * K + kj];
                            }
                    ref[((n * O + o) * oh + i) * ow + j] = (float)s;
                }
    check(ty, ref, ny, "conv2d");

    /* batch norm over O channels of the conv's output */
    float *bw = random_floats(O, 3), *bb = random_floats(O, 4), *bm = random_floats(O, 5), *bv = random_floats(O, 6);
    for (int c = 0; c < O; c++) bv[c] = bv[c] * bv[c] + 0.5f;
    int64_t cd[1] = {O};
    opprof_nn_cuda_tensor *tbw = up(1, cd, bw), *tbb = up(1, cd, bb), *tbm = up(1, cd, bm), *tbv = up(1, cd, bv);
    opprof_nn_cuda_tensor *tn = NULL;
    assert_int_equal(opprof_nn_cuda_batch_norm(ty, tbw, tbb, tbm, tbv, 1e-5f, &tn), 0);
    float *rn = malloc(ny * sizeof *rn);
    for (size_t i = 0; i < ny; i++) {
        int c = (int)(i / (size_t)(oh * ow) % O);
        rn[i] = (float)((ref[i] - bm[c]) / sqrt(bv[c] + 1e-5) * bw[c] + bb[c]);
    }
    check(tn, rn, ny, "batch_norm");

    /* relu_, add_ */
    assert_int_equal(opprof_nn_cuda_relu_(tn), 0);
    for (size_t i = 0; i < ny; i++) rn[i] = rn[i] > 0 ? rn[i] : 0;
    check(tn, rn, ny, "relu_");
    assert_int_equal(opprof_nn_cuda_add_(tn, ty), 0);
    for (size_t i = 0; i < ny; i++) rn[i] += ref[i];
    check(tn, rn, ny, "add_");

    /* max_pool2d 3x3 s2 p1 on the input */
    opprof_nn_cuda_tensor *tp = NULL;
    assert_int_equal(opprof_nn_cuda_max_pool2d(tx, 3, 2, 1, &tp), 0);
    int ph = (H + 2 - 3) / 2 + 1, pw = (W + 2 - 3) / 2 + 1;
    size_t np = (size_t)N * C * ph * pw;
    float *rp = malloc(np * sizeof *rp);
    for (int nc = 0; nc < N * C; nc++)
        for (int i = 0; i < ph; i++)
            for (int j = 0; j < pw; j++) {
                float m = -INFINITY;
                for (int a = 0; a < 3; a++)
                    for (int b = 0; b < 3; b++) {
                        int yy = i * 2 - 1 + a, xx = j * 2 - 1 + b;
                        if (yy >= 0 && yy < H && xx >= 0 && xx < W && x[(nc * H + yy) * W + xx] > m)
                            m = x[(nc * H + yy) * W + xx];
                    }
                rp[(nc * ph + i) * pw + j] = m;
            }
    check(tp, rp, np, "max_pool2d");

    /* adaptive_avg_pool2d to 1x1, flatten, linear */
    opprof_nn_cuda_tensor *ta = NULL, *tf = NULL, *tl = NULL;
    assert_int_equal(opprof_nn_cuda_adaptive_avg_pool2d(tx, &ta), 0);
    float ra[N * C];
    for (int nc = 0; nc < N * C; nc++) {
        double s = 0;
        for (int i = 0; i < H * W; i++) s += x[nc * H * W + i];
        ra[nc] = (float)(s / (H * W));
    }
    check(ta, ra, N * C, "adaptive_avg_pool2d");
    assert_int_equal(opprof_nn_cuda_flatten(ta, &tf), 0);
    int64_t fd[2];
    assert_int_equal(opprof_nn_cuda_tensor_dims(tf, fd), 2);
    assert_int_equal(fd[0], N);
    assert_int_equal(fd[1], C);
    enum { M = 5 };
    int64_t lwd[2] = {M, C}, lbd[1] = {M};
    float *lw = random_floats(M * C, 7), *lb = random_floats(M, 8);
    opprof_nn_cuda_tensor *tlw = up(2, lwd, lw), *tlb = up(1, lbd, lb);
    assert_int_equal(opprof_nn_cuda_linear(tf, tlw, tlb, &tl), 0);
    float rl[N * M];
    for (int n = 0; n < N; n++)
        for (int m = 0; m < M; m++) {
            double s = lb[m];
            for (int k = 0; k < C; k++) s += (double)ra[n * C + k] * lw[m * C + k];
            rl[n * M + m] = (float)s;
        }
    check(tl, rl, N * M, "linear");

    opprof_nn_cuda_tensor *all[] = {tx, tw, ty, tbw, tbb, tbm, tbv, tn, tp, ta, tf, tl, tlw, tlb};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) opprof_nn_cuda_tensor_free(all[i]);
    free(x), free(w), free(ref), free(bw), free(bb), free(bm), free(bv), free(rn), free(rp), free(lw), free(lb);
}

/* The events of one name: how many, and their total device time. */
static void totals(const opprof_trace *t, const char *name, int *count, int64_t *dev)
{
    *count = 0;
    *dev = 0;
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        assert_int_equal(opprof_trace_event(t, i, &e), 0);
        if (strcmp(e.name, name)) continue;
        (*count)++;
        *dev += e.device_time_ns;
    }
}

static void test_activity_is_linked_to_operators(void **state)
{
    (void)state;
    int64_t xd[4] = {4, 3, 32, 32}, wd[4] = {8, 3, 3, 3}, cd[1] = {8}, lwd[2] = {10, 8}, lbd[1] = {10};
    float *x = random_floats(4 * 3 * 32 * 32, 11), *w = random_floats(8 * 3 * 9, 12), *c = random_floats(8, 13);
    float *lw = random_floats(80, 14), *lb = random_floats(10, 15);
    for (int i = 0; i < 8; i++) c[i] = fabsf(c[i]) + 0.5f;
    /* set-up (the convolution's plan) before the session, as warmup would */
    opprof_nn_cuda_tensor *tx = up(4, xd, x), *tw = up(4, wd, w), *tc = up(1, cd, c), *tlw = up(2, lwd, lw),
                          *tlb = up(1, lbd, lb), *y = NULL, *n = NULL, *p = NULL, *f = NULL, *l = NULL;
    opprof_nn_cuda_conv cp = {1, 1};
    assert_int_equal(opprof_nn_cuda_conv2d(tx, tw, &cp, &y), 0);
    opprof_nn_cuda_tensor_free(y);
    assert_int_equal(opprof_nn_cuda_sync(), 0);

    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.activities = OPPROF_ACTIVITY_CPU | OPPROF_ACTIVITY_CUDA;
    assert_int_equal(opprof_start(&cfg), 0);
    opprof_nn_cuda_tensor *tx2 = up(4, xd, x);
    assert_int_equal(opprof_nn_cuda_conv2d(tx2, tw, &cp, &y), 0);
    assert_int_equal(opprof_nn_cuda_batch_norm(y, tc, tc, tc, tc, 1e-5f, &n), 0);
    assert_int_equal(opprof_nn_cuda_relu_(n), 0);
    assert_int_equal(opprof_nn_cuda_adaptive_avg_pool2d(n, &p), 0);
    assert_int_equal(opprof_nn_cuda_flatten(p, &f), 0);
    assert_int_equal(opprof_nn_cuda_linear(f, tlw, tlb, &l), 0);
    float out[40];
    assert_int_equal(opprof_nn_cuda_download(l, out, 40), 0);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), 0);

    int kernels = 0, copies = 0, launches = 0, orphans = 0;
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        assert_int_equal(opprof_trace_event(t, i, &e), 0);
        if (e.category == OPPROF_CAT_KERNEL) {
            kernels++;
            assert_true(e.flags & OPPROF_EVENT_DEVICE);
            assert_int_equal(e.pid, 0); /* device 0 */
            assert_true(e.dur_ns > 0);
        } else if (e.category == OPPROF_CAT_GPU_MEMCPY) {
            copies++;
        } else if (e.category == OPPROF_CAT_CUDA_RUNTIME || e.category == OPPROF_CAT_CUDA_DRIVER) {
            launches++;
            if (e.parent < 0) orphans++;
        }
    }
    printf("%d kernels, %d copies, %d API calls (%d outside operators), %llu dropped\n", kernels, copies, launches,
           orphans, (unsigned long long)opprof_trace_dropped(t));
    assert_true(kernels >= 5);
    assert_true(copies >= 2); /* to the device, to the host */
    assert_true(launches >= kernels);
    assert_int_equal(opprof_trace_dropped(t), 0);
    static const char *const linked[] = {"aten::conv2d", "aten::batch_norm", "aten::relu_", "aten::linear",
                                         "aten::copy_"};
    for (size_t k = 0; k < sizeof linked / sizeof linked[0]; k++) {
        int count;
        int64_t dev;
        totals(t, linked[k], &count, &dev);
        printf("%-18s %d calls, device time %lld ns\n", linked[k], count, (long long)dev);
        assert_true(count >= 1);
        assert_true(dev > 0);
    }
    opprof_trace_free(t);
    opprof_nn_cuda_tensor *all[] = {tx, tw, tc, tlw, tlb, tx2, y, n, p, f, l};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) opprof_nn_cuda_tensor_free(all[i]);
    free(x), free(w), free(c), free(lw), free(lb);
}

int main(void)
{
    if (opprof_nn_cuda_init(0) != 0) {
        printf("gpu_ops: skipped: %s\n", opprof_nn_cuda_error());
        return 77;
    }
    printf("device: %s\n", opprof_nn_cuda_device_name());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_operators_match_cpu_references),
        cmocka_unit_test(test_activity_is_linked_to_operators),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    opprof_nn_cuda_shutdown();
    return rc;
}

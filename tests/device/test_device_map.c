/* Device activity into the event model: synthetic activity (what CUPTI
 * would report) mapped into a trace whose host events a session recorded.
 * Needs no GPU and no CUDA headers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "device/activity.h"
#include "model/devmap.h"
#include "model/model.h"

#define PID 4242
#define TID 4243
#define DEV_OFF 1000000 /* device clock = trace clock + DEV_OFF */

typedef struct fx {
    opprof_trace *tr;
    op_timebase tb;
    op_dev_batch b;
    uint32_t host;
} fx;

static int64_t add_host(fx *f, const char *name, int cat, int64_t s, int64_t d)
{
    op_event *e = op_trace_add_event(f->tr, f->host, op_trace_intern(f->tr, name, strlen(name)), cat, s, d);
    assert_non_null(e);
    return (int64_t)(e - f->tr->ev);
}

static void setup_fx(fx *f)
{
    memset(f, 0, sizeof *f);
    f->tr = op_trace_new();
    assert_non_null(f->tr);
    f->tb.ticks_are_ns = 1; /* raw ticks are trace ns: an op's t0 is its start */
    f->tb.mult = 1ull << 32;
    int64_t th = op_trace_thread(f->tr, PID, TID);
    assert_true(th >= 0);
    f->host = (uint32_t)th;
}

static void api(fx *f, int kind, const char *name, uint32_t corr, int64_t s, int64_t e)
{
    op_dev_act a = {.kind = (uint8_t)kind, .correlation = corr, .pid = PID, .tid = TID, .cbid = 211,
                    .start = (uint64_t)(s + DEV_OFF), .end = (uint64_t)(e + DEV_OFF), .name = name};
    assert_int_equal(op_dev_batch_add(&f->b, &a), 0);
}

static void kernel(fx *f, const char *name, uint32_t corr, uint32_t stream, int64_t s, int64_t e)
{
    op_dev_act a = {.kind = OP_DEV_KERNEL, .correlation = corr, .device = 1, .context = 1, .stream = stream,
                    .start = (uint64_t)(s + DEV_OFF), .end = (uint64_t)(e + DEV_OFF), .name = name,
                    .grid = {864, 1, 1}, .block = {256, 1, 1}, .registers = 47, .static_smem = 1024,
                    .dynamic_smem = 2048};
    assert_int_equal(op_dev_batch_add(&f->b, &a), 0);
}

static void map_and_finish(fx *f)
{
    op_dev_clock clk = {.offset_ns = -DEV_OFF, .tb = &f->tb};
    assert_int_equal(op_dev_map(f->tr, &f->b, &clk), 0);
    assert_int_equal(op_trace_finish(f->tr), 0);
}

static const op_event *by_name(const fx *f, const char *name, size_t nth)
{
    for (size_t i = 0; i < f->tr->nev; i++) {
        const op_event *e = &f->tr->ev[i];
        if (strcmp(op_strtab_get(&f->tr->str, e->name), name) == 0 && nth-- == 0) return e;
    }
    return NULL;
}

static void teardown_fx(fx *f)
{
    op_dev_batch_free(&f->b);
    opprof_trace_free(f->tr);
}

/* aten::conv2d [1000, 9000] > aten::convolution [2000, 8000]; a kernel
 * launched inside convolution, another inside conv2d after it. */
static void test_kernels_charge_the_operator_open_at_launch(void **state)
{
    (void)state;
    fx f;
    setup_fx(&f);
    int64_t conv2d = add_host(&f, "aten::conv2d", OPPROF_CAT_CPU_OP, 1000, 8000);
    int64_t conv = add_host(&f, "aten::convolution", OPPROF_CAT_CPU_OP, 2000, 6000);
    (void)conv2d;
    (void)conv;
    api(&f, OP_DEV_RUNTIME, "cudaLaunchKernel", 7, 3000, 3500);
    assert_int_equal(op_dev_batch_add_ext(&f.b, 7, 2000), 0); /* convolution's start */
    kernel(&f, "implicit_gemm", 7, 13, 4000, 9000);
    /* The runtime call's clock ran ahead: it seems to end after conv2d. */
    api(&f, OP_DEV_RUNTIME, "cudaLaunchKernel", 8, 8500, 9500);
    assert_int_equal(op_dev_batch_add_ext(&f.b, 8, 1000), 0);
    kernel(&f, "bn_fw", 8, 13, 9600, 9900);
    map_and_finish(&f);

    const op_event *c2 = by_name(&f, "aten::conv2d", 0), *cv = by_name(&f, "aten::convolution", 0);
    assert_non_null(c2);
    assert_non_null(cv);
    assert_int_equal(op_evx_of(f.tr, cv)->dev_self_ns, 5000);
    assert_int_equal(op_evx_of(f.tr, cv)->dev_total_ns, 5000);
    assert_int_equal(op_evx_of(f.tr, c2)->dev_self_ns, 300);
    assert_int_equal(op_evx_of(f.tr, c2)->dev_total_ns, 5300);
    /* The late launch was kept inside conv2d, as a direct child. */
    const op_event *l2 = by_name(&f, "cudaLaunchKernel", 1);
    assert_non_null(l2);
    assert_int_equal(l2->start_ns, 8500);
    assert_int_equal(l2->start_ns + l2->dur_ns, 9000);
    assert_string_equal(op_strtab_get(&f.tr->str, f.tr->ev[l2->parent].name), "aten::conv2d");
    assert_int_equal(l2->cat, OPPROF_CAT_CUDA_RUNTIME);
    assert_true(l2->flags & OP_EV_HAS_CORR);
    assert_int_equal(op_evx_of(f.tr, l2)->correlation, 8);
    /* Operator, launch and kernel share the operator's external id. */
    const op_event *k = by_name(&f, "implicit_gemm", 0);
    assert_non_null(k);
    assert_true((k->flags & OP_EV_HAS_EXT) && (cv->flags & OP_EV_HAS_EXT));
    assert_int_equal(op_evx_of(f.tr, k)->external_id, op_evx_of(f.tr, cv)->external_id);
    assert_int_equal(op_evx_of(f.tr, by_name(&f, "cudaLaunchKernel", 0))->external_id, op_evx_of(f.tr, cv)->external_id);
    assert_true(op_evx_of(f.tr, c2)->external_id != op_evx_of(f.tr, cv)->external_id);
    teardown_fx(&f);
}

static void test_device_threads_names_and_args(void **state)
{
    (void)state;
    fx f;
    setup_fx(&f);
    add_host(&f, "aten::copy_", OPPROF_CAT_CPU_OP, 100, 10000);
    api(&f, OP_DEV_RUNTIME, "cudaMemcpyAsync", 1, 200, 300);
    api(&f, OP_DEV_RUNTIME, "cudaMemsetAsync", 2, 400, 500);
    api(&f, OP_DEV_DRIVER, "cuLaunchKernel", 3, 600, 700);
    assert_int_equal(op_dev_batch_add_ext(&f.b, 1, 100), 0);
    op_dev_act cp = {.kind = OP_DEV_MEMCPY, .copy_kind = 1, .src_kind = 1, .dst_kind = 3, .bytes = 92928,
                     .device = 1, .context = 1, .stream = 7, .correlation = 1, .start = 1000 + DEV_OFF,
                     .end = 1012 + DEV_OFF};
    op_dev_act ms = {.kind = OP_DEV_MEMSET, .memory_kind = 3, .bytes = 20736, .device = 1, .context = 1,
                     .stream = 20, .correlation = 2, .start = 2000 + DEV_OFF, .end = 2004 + DEV_OFF};
    assert_int_equal(op_dev_batch_add(&f.b, &cp), 0);
    assert_int_equal(op_dev_batch_add(&f.b, &ms), 0);
    kernel(&f, "k", 3, 7, 3000, 3100);
    f.b.dropped = 5;
    map_and_finish(&f);

    const op_event *m = by_name(&f, "Memcpy HtoD (Pageable -> Device)", 0);
    const op_event *s = by_name(&f, "Memset (Device)", 0);
    const op_event *k = by_name(&f, "k", 0);
    assert_non_null(m);
    assert_non_null(s);
    assert_non_null(k);
    assert_int_equal(m->cat, OPPROF_CAT_GPU_MEMCPY);
    assert_int_equal(s->cat, OPPROF_CAT_GPU_MEMSET);
    assert_int_equal(k->cat, OPPROF_CAT_KERNEL);
    assert_true(k->flags & OPPROF_EVENT_DEVICE);
    const op_thread *mt = &f.tr->threads[m->thread], *st = &f.tr->threads[s->thread];
    assert_int_equal(mt->pid, 1);
    assert_int_equal(mt->tid, 7);
    assert_int_equal(mt->device, 1);
    assert_int_equal(st->tid, 20);
    assert_int_equal(k->thread, m->thread); /* same device and stream */
    const char *ka = op_strtab_get(&f.tr->str, op_evx_of(f.tr, k)->args);
    assert_non_null(strstr(ka, "\"registers per thread\": 47"));
    assert_non_null(strstr(ka, "\"shared memory\": 3072"));
    assert_non_null(strstr(ka, "\"grid\": [864, 1, 1], \"block\": [256, 1, 1]"));
    assert_non_null(strstr(ka, "\"stream\": 7"));
    const char *ma = op_strtab_get(&f.tr->str, op_evx_of(f.tr, m)->args);
    assert_non_null(strstr(ma, "\"bytes\": 92928"));
    assert_non_null(strstr(ma, "\"memory bandwidth (GB/s)\": 7744"));
    assert_int_equal(by_name(&f, "cuLaunchKernel", 0)->cat, OPPROF_CAT_CUDA_DRIVER);
    /* the copy is charged to aten::copy_ through its external id */
    assert_int_equal(op_evx_of(f.tr, by_name(&f, "aten::copy_", 0))->dev_self_ns, 12 + 4 + 100);
    assert_int_equal(f.tr->dropped, 5);
    assert_true(f.tr->options & OP_TRACE_DEVICE);
    teardown_fx(&f);
}

static void test_noise_and_activity_before_the_recording_are_left_out(void **state)
{
    (void)state;
    fx f;
    setup_fx(&f);
    add_host(&f, "op", OPPROF_CAT_CPU_OP, 100, 1000);
    api(&f, OP_DEV_RUNTIME, "cudaGetDevice", 1, 150, 160);
    api(&f, OP_DEV_RUNTIME, "cudaStreamGetCaptureInfo", 2, 170, 180);
    api(&f, OP_DEV_DRIVER, "cuCtxGetCurrent", 3, 190, 200);
    api(&f, OP_DEV_RUNTIME, "cudaLaunchKernel", 4, -500, -400); /* a warmup step's launch */
    kernel(&f, "warmup_kernel", 4, 7, 300, 400);
    api(&f, OP_DEV_RUNTIME, "cudaLaunchKernel", 5, 500, 600);
    kernel(&f, "unlinked", 5, 7, 700, 800); /* no external correlation: linked by time */
    map_and_finish(&f);
    assert_null(by_name(&f, "cudaGetDevice", 0));
    assert_null(by_name(&f, "cudaStreamGetCaptureInfo", 0));
    assert_null(by_name(&f, "cuCtxGetCurrent", 0));
    assert_null(by_name(&f, "warmup_kernel", 0));
    assert_non_null(by_name(&f, "unlinked", 0));
    assert_int_equal(op_evx_of(f.tr, by_name(&f, "op", 0))->dev_self_ns, 100);
    teardown_fx(&f);
}

static void test_lost_api_record_still_links_by_external_id(void **state)
{
    (void)state;
    fx f;
    setup_fx(&f);
    add_host(&f, "aten::linear", OPPROF_CAT_CPU_OP, 100, 1000);
    assert_int_equal(op_dev_batch_add_ext(&f.b, 9, 100), 0);
    kernel(&f, "gemm", 9, 7, 300, 450);
    map_and_finish(&f);
    assert_int_equal(op_evx_of(f.tr, by_name(&f, "aten::linear", 0))->dev_self_ns, 150);
    teardown_fx(&f);
}

/* Without launch callbacks (the default) no external correlation is
 * recorded: the operator of a launch is the innermost range of the calling
 * thread open when the call began. step [0, 20000] > conv2d [1000, 9000] >
 * convolution [2000, 8000] and, after it, empty [8100, 8200]; then relu
 * [10000, 12000]. Launches inside convolution, inside conv2d after empty
 * ended (the last range to start is not the one open), directly in step
 * between conv2d and relu, and on a thread with no range. */
static void test_launches_link_by_time_without_callbacks(void **state)
{
    (void)state;
    fx f;
    setup_fx(&f);
    add_host(&f, "step", OPPROF_CAT_USER_ANNOTATION, 0, 20000);
    add_host(&f, "aten::conv2d", OPPROF_CAT_CPU_OP, 1000, 8000);
    add_host(&f, "aten::convolution", OPPROF_CAT_CPU_OP, 2000, 6000);
    add_host(&f, "aten::empty", OPPROF_CAT_CPU_OP, 8100, 100);
    add_host(&f, "aten::relu", OPPROF_CAT_CPU_OP, 10000, 2000);
    api(&f, OP_DEV_RUNTIME, "cudaLaunchKernel", 1, 3000, 3500);
    kernel(&f, "gemm", 1, 7, 4000, 5000);
    api(&f, OP_DEV_RUNTIME, "cudaLaunchKernel", 2, 8300, 8400);
    kernel(&f, "bias", 2, 7, 8500, 8700);
    api(&f, OP_DEV_RUNTIME, "cudaLaunchKernel", 3, 9500, 9600);
    kernel(&f, "fill", 3, 7, 9700, 9800);
    op_dev_act other = {.kind = OP_DEV_RUNTIME, .correlation = 4, .pid = PID, .tid = TID + 1, .cbid = 211,
                        .start = 3000 + DEV_OFF, .end = 3100 + DEV_OFF, .name = "cudaLaunchKernel"};
    assert_int_equal(op_dev_batch_add(&f.b, &other), 0);
    kernel(&f, "alone", 4, 7, 3200, 3300);
    map_and_finish(&f);

    static const struct {
        const char *kernel, *op;
    } want[] = {{"gemm", "aten::convolution"}, {"bias", "aten::conv2d"}, {"fill", "step"}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const op_event *k = by_name(&f, want[i].kernel, 0), *op = by_name(&f, want[i].op, 0);
        assert_non_null(k);
        assert_non_null(op);
        assert_true(k->flags & OP_EV_HAS_EXT);
        assert_true(op->flags & OP_EV_HAS_EXT);
        assert_int_equal(op_evx_of(f.tr, k)->external_id, op_evx_of(f.tr, op)->external_id);
    }
    assert_int_equal(op_evx_of(f.tr, by_name(&f, "aten::convolution", 0))->dev_self_ns, 1000);
    assert_int_equal(op_evx_of(f.tr, by_name(&f, "aten::conv2d", 0))->dev_self_ns, 200);
    assert_int_equal(op_evx_of(f.tr, by_name(&f, "step", 0))->dev_total_ns, 1300);
    assert_false(by_name(&f, "alone", 0)->flags & OP_EV_HAS_EXT);
    assert_int_equal(op_evx_of(f.tr, by_name(&f, "aten::relu", 0))->dev_total_ns, 0);
    teardown_fx(&f);
}

static void test_names_of_copy_and_memory_kinds(void **state)
{
    (void)state;
    assert_string_equal(op_dev_memcpy_kind_name(2), "DtoH");
    assert_string_equal(op_dev_memcpy_kind_name(8), "DtoD");
    assert_string_equal(op_dev_memcpy_kind_name(99), "<unknown>");
    assert_string_equal(op_dev_memory_kind_name(2), "Pinned");
    assert_string_equal(op_dev_memory_kind_name(99), "<unknown>");
}

static void test_device_properties_as_kineto_writes_them(void **state)
{
    (void)state;
    op_dev_props p = {.id = 1, .total_global_mem = 150754820096, .compute_major = 9, .compute_minor = 0,
                      .max_threads_per_block = 1024, .max_threads_per_mp = 2048, .regs_per_block = 65536,
                      .regs_per_mp = 65536, .warp_size = 32, .shared_mem_per_block = 49152,
                      .shared_mem_per_mp = 233472, .num_sms = 132, .shared_mem_per_block_optin = 232448};
    strcpy(p.name, "NVIDIA \"H200\"");
    char buf[1024];
    int n = op_dev_props_json(&p, buf, sizeof buf);
    assert_int_equal(n, (int)strlen(buf));
    assert_string_equal(buf, "{\"id\": 1, \"name\": \"NVIDIA \\\"H200\\\"\", \"totalGlobalMem\": 150754820096, "
                             "\"computeMajor\": 9, \"computeMinor\": 0, \"maxThreadsPerBlock\": 1024, "
                             "\"maxThreadsPerMultiprocessor\": 2048, \"regsPerBlock\": 65536, "
                             "\"regsPerMultiprocessor\": 65536, \"warpSize\": 32, \"sharedMemPerBlock\": 49152, "
                             "\"sharedMemPerMultiprocessor\": 233472, \"numSms\": 132, \"sharedMemPerBlockOptin\": 232448}");
    assert_int_equal(op_dev_props_json(&p, buf, 20), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernels_charge_the_operator_open_at_launch),
        cmocka_unit_test(test_device_threads_names_and_args),
        cmocka_unit_test(test_noise_and_activity_before_the_recording_are_left_out),
        cmocka_unit_test(test_lost_api_record_still_links_by_external_id),
        cmocka_unit_test(test_launches_link_by_time_without_callbacks),
        cmocka_unit_test(test_names_of_copy_and_memory_kinds),
        cmocka_unit_test(test_device_properties_as_kineto_writes_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

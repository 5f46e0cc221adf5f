/* CUPTI's activity records into op_dev_act: records built here as CUPTI
 * would deliver them, decoded and mapped, on machines without a GPU. */
#include <cupti.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "device/cupti_decode.h"
#include "model/model.h"

static const char *names(CUpti_CallbackDomain dom, uint32_t cbid, void *ctx)
{
    (void)ctx;
    if (dom == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)
        return "cudaLaunchKernel";
    return NULL;
}

static const char *kname(const char *raw, void *ctx)
{
    (void)ctx;
    return strcmp(raw, "_Z6kernelv") == 0 ? "kernel()" : raw;
}

static void test_kernel_record(void **state)
{
    (void)state;
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = 1000;
    k.end = 3000;
    k.deviceId = 0;
    k.contextId = 1;
    k.streamId = 7;
    k.correlationId = 42;
    k.gridX = 10;
    k.gridY = 2;
    k.gridZ = 1;
    k.blockX = 128;
    k.blockY = 1;
    k.blockZ = 1;
    k.registersPerThread = 32;
    k.staticSharedMemory = 512;
    k.dynamicSharedMemory = 256;
    k.name = "_Z6kernelv";
    op_dev_batch b = {0};
    op_cupti_decoder d = {names, kname, NULL};
    assert_int_equal(op_cupti_decode(&d, (const CUpti_Activity *)&k, &b), 0);
    assert_int_equal(b.n, 1);
    const op_dev_act *a = &b.acts[0];
    assert_int_equal(a->kind, OP_DEV_KERNEL);
    assert_string_equal(a->name, "kernel()");
    assert_int_equal(a->start, 1000);
    assert_int_equal(a->end, 3000);
    assert_int_equal(a->stream, 7);
    assert_int_equal(a->correlation, 42);
    assert_int_equal(a->grid[0], 10);
    assert_int_equal(a->grid[1], 2);
    assert_int_equal(a->block[0], 128);
    assert_int_equal(a->registers, 32);
    assert_int_equal(a->static_smem + a->dynamic_smem, 768);
    /* without timestamps it is counted as dropped */
    k.start = k.end = 0;
    assert_int_equal(op_cupti_decode(&d, (const CUpti_Activity *)&k, &b), 0);
    assert_int_equal(b.n, 1);
    assert_int_equal(b.dropped, 1);
    op_dev_batch_free(&b);
}

static void test_copy_set_api_and_external_records(void **state)
{
    (void)state;
    op_dev_batch b = {0};
    op_cupti_decoder d = {names, NULL, NULL};
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    m.bytes = 4096;
    m.start = 10;
    m.end = 20;
    m.streamId = 3;
    m.correlationId = 5;
    CUpti_ActivityMemset4 s;
    memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    s.bytes = 64;
    s.start = 30;
    s.end = 31;
    s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    s.correlationId = 6;
    CUpti_ActivityAPI r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    r.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    r.start = 1;
    r.end = 2;
    r.processId = 11;
    r.threadId = 12;
    r.correlationId = 5;
    CUpti_ActivityAPI unknown = r;
    unknown.cbid = 1; /* no name: skipped */
    CUpti_ActivityExternalCorrelation x;
    memset(&x, 0, sizeof x);
    x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
    x.externalId = 123456789;
    x.correlationId = 5;
    CUpti_ActivityExternalCorrelation other = x;
    other.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1; /* someone else's */
    const CUpti_Activity *recs[] = {(const CUpti_Activity *)&m, (const CUpti_Activity *)&s,
                                    (const CUpti_Activity *)&r, (const CUpti_Activity *)&unknown,
                                    (const CUpti_Activity *)&x, (const CUpti_Activity *)&other};
    for (size_t i = 0; i < sizeof recs / sizeof recs[0]; i++) assert_int_equal(op_cupti_decode(&d, recs[i], &b), 0);
    assert_int_equal(b.n, 3);
    assert_int_equal(b.acts[0].kind, OP_DEV_MEMCPY);
    assert_int_equal(b.acts[0].copy_kind, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
    assert_int_equal(b.acts[0].dst_kind, CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
    assert_int_equal(b.acts[0].bytes, 4096);
    assert_int_equal(b.acts[1].kind, OP_DEV_MEMSET);
    assert_int_equal(b.acts[1].memory_kind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    assert_int_equal(b.acts[2].kind, OP_DEV_RUNTIME);
    assert_string_equal(b.acts[2].name, "cudaLaunchKernel");
    assert_int_equal(b.acts[2].tid, 12);
    assert_int_equal(b.next, 1);
    assert_int_equal(b.ext[0].correlation, 5);
    assert_int_equal(b.ext[0].op_t0, 123456789);
    op_dev_batch_free(&b);
}

static void test_version_suffix_is_stripped(void **state)
{
    (void)state;
    char buf[64];
    assert_string_equal(op_cupti_strip_version("cudaLaunchKernel_v7000", buf, sizeof buf), "cudaLaunchKernel");
    assert_string_equal(op_cupti_strip_version("cudaLaunchKernel_ptsz_v7000", buf, sizeof buf),
                        "cudaLaunchKernel_ptsz");
    assert_string_equal(op_cupti_strip_version("cuLaunchKernel", buf, sizeof buf), "cuLaunchKernel");
    assert_string_equal(op_cupti_strip_version("cudaMemcpy2D_v3020", buf, sizeof buf), "cudaMemcpy2D");
    assert_string_equal(op_cupti_strip_version("cuMemcpyHtoD_v2", buf, sizeof buf), "cuMemcpyHtoD");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_record),
        cmocka_unit_test(test_copy_set_api_and_external_records),
        cmocka_unit_test(test_version_suffix_is_stripped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Device activity in an exported trace, as Kineto writes it: kernels and
 * copies on the device's process and the stream's thread with their args,
 * launches with their correlation, ac2g flows from launch to kernel, and
 * deviceProperties. The trace is made from synthetic activity (no GPU). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "device/activity.h"
#include "model/devmap.h"
#include "model/model.h"

static char *export_text(const opprof_trace *t)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    opprof_export_options o;
    opprof_export_options_init(&o);
    assert_int_equal(opprof_export_chrome_trace_stream(t, f, &o), 0);
    long n = ftell(f);
    assert_true(n > 0);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    rewind(f);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void test_kernels_flows_and_device_properties(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    assert_non_null(t);
    int64_t th = op_trace_thread(t, 4242, 4243);
    assert_true(th >= 0);
    const char *nm = "aten::conv2d";
    assert_non_null(op_trace_add_event(t, (uint32_t)th, op_trace_intern(t, nm, strlen(nm)), OPPROF_CAT_CPU_OP, 1000,
                                       8000));
    op_dev_batch b = {0};
    op_dev_act launch = {.kind = OP_DEV_RUNTIME, .correlation = 77, .pid = 4242, .tid = 4243, .cbid = 211,
                         .start = 2000, .end = 2500, .name = "cudaLaunchKernel"};
    op_dev_act kernel = {.kind = OP_DEV_KERNEL, .correlation = 77, .device = 0, .context = 1, .stream = 7,
                         .start = 3000, .end = 5000, .name = "implicit_gemm", .grid = {2, 1, 1},
                         .block = {128, 1, 1}, .registers = 40};
    assert_int_equal(op_dev_batch_add(&b, &launch), 0);
    assert_int_equal(op_dev_batch_add(&b, &kernel), 0);
    assert_int_equal(op_dev_batch_add_ext(&b, 77, 1000), 0);
    op_timebase tb = {.ticks_are_ns = 1, .mult = 1ull << 32};
    op_dev_clock clk = {.offset_ns = 0, .tb = &tb};
    assert_int_equal(op_dev_map(t, &b, &clk), 0);
    op_dev_props p = {.id = 0, .compute_major = 9, .num_sms = 132, .warp_size = 32};
    strcpy(p.name, "NVIDIA H200");
    char props[1024];
    int len = op_dev_props_json(&p, props, sizeof props);
    assert_true(len > 0);
    t->device_props = op_trace_intern(t, props, (size_t)len);
    assert_int_equal(op_trace_finish(t), 0);

    char *text = export_text(t);
    assert_non_null(strstr(text, "\"deviceProperties\": [\n    {\"id\": 0, \"name\": \"NVIDIA H200\""));
    assert_non_null(strstr(text, "\"numSms\": 132"));
    const char *k = strstr(text, "\"cat\": \"kernel\", \"name\": \"implicit_gemm\", \"pid\": 0, \"tid\": 7");
    assert_non_null(k);
    assert_non_null(strstr(k, "\"correlation\": 77"));
    assert_non_null(strstr(k, "\"grid\": [2, 1, 1], \"block\": [128, 1, 1]"));
    assert_non_null(strstr(text, "\"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 4242"));
    assert_non_null(strstr(text, "{\"ph\": \"s\", \"id\": 77, \"pid\": 4242, \"tid\": 4243, \"ts\": 2.000, "
                                 "\"cat\": \"ac2g\", \"name\": \"ac2g\"}"));
    assert_non_null(strstr(text, "{\"ph\": \"f\", \"id\": 77, \"pid\": 0, \"tid\": 7, \"ts\": 3.000, "
                                 "\"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}"));
    /* the operator, its launch and its kernel share one External id */
    const char *op = strstr(text, "\"name\": \"aten::conv2d\"");
    assert_non_null(op);
    const char *ext = strstr(op, "\"External id\": ");
    assert_non_null(ext);
    char id[32];
    snprintf(id, sizeof id, "\"External id\": %d,", atoi(ext + 15));
    assert_non_null(strstr(k, id));
    /* Read back, the kernel is charged to the same operator. */
    opprof_trace *back = NULL;
    assert_int_equal(opprof_trace_load_buffer(text, strlen(text), &back), 0);
    int64_t dev = -1;
    for (size_t i = 0; i < opprof_trace_event_count(back); i++) {
        opprof_event e;
        assert_int_equal(opprof_trace_event(back, i, &e), 0);
        if (!strcmp(e.name, "aten::conv2d")) dev = e.self_device_time_ns;
    }
    assert_int_equal(dev, 2000);
    opprof_trace_free(back);
    free(text);
    op_dev_batch_free(&b);
    opprof_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernels_flows_and_device_properties),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* How trace events map into the model: categories, times, ids, args,
 * memory events, thread names and what is skipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "model/model.h"
#include "opprof_trace.h"

static opprof_trace *load(const char *doc)
{
    opprof_trace *t = NULL;
    int rc = opprof_trace_load_buffer(doc, strlen(doc), &t);
    if (rc != 0) fail_msg("load failed: %s", opprof_last_error());
    return t;
}

static const char *str(const opprof_trace *t, uint32_t id)
{
    return op_strtab_get(&t->str, id);
}

static const op_event *find(const opprof_trace *t, const char *name)
{
    for (size_t i = 0; i < t->nev; i++)
        if (!strcmp(str(t, t->ev[i].name), name)) return &t->ev[i];
    fail_msg("no event %s", name);
    return NULL;
}

static void test_legacy_array(void **state)
{
    (void)state;
    /* PyTorch 1.13's legacy export: no cat, string pid, empty args. */
    opprof_trace *t = load("[{\"name\": \"outer\", \"ph\": \"X\", \"ts\": 343, \"dur\": 100, \"tid\": 1, "
                           "\"pid\": \"CPU functions\", \"args\": {}},"
                           "{\"name\": \"inner\", \"ph\": \"X\", \"ts\": 350.5, \"dur\": 20.25, \"tid\": 1, "
                           "\"pid\": \"CPU functions\", \"args\": {}}]");
    assert_int_equal(t->nev, 2);
    assert_int_equal(t->nthreads, 1);
    assert_string_equal(str(t, t->threads[0].pid_name), "CPU functions");
    assert_int_equal(t->threads[0].pid, 0); /* no numeric pid in the file: numbering starts at 0 */
    assert_int_equal(t->threads[0].tid, 1);
    const op_event *o = find(t, "outer"), *in = find(t, "inner");
    assert_int_equal(o->cat, OPPROF_CAT_CPU_OP);
    assert_int_equal(o->start_ns, 0); /* rebased to the earliest event */
    assert_int_equal(in->start_ns, 7500);
    assert_int_equal(in->dur_ns, 20250);
    assert_int_equal(o->self_ns, 100000 - 20250);
    assert_int_equal(in->parent, 0);
    assert_int_equal(opprof_trace_base_time_ns(t), 343000);
    assert_int_equal(t->duration_ns, 100000);
    opprof_trace_free(t);
}

static void test_kineto_object(void **state)
{
    (void)state;
    /* Kineto: categories, correlation from runtime to kernel, External id
     * for a memcpy without launch, skipped events, string Trace span. */
    opprof_trace *t = load(
        "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"GPU\"}],\n"
        " \"traceEvents\": [\n"
        "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 10, \"tid\": 11, \"ts\": 1000.000, "
        "\"dur\": 50.000, \"args\": {\"External id\": 7, \"Input Dims\": [[5, 3, 224, 224], [64,3,7,7],[]], "
        "\"Input type\": [\"float\", \"float\", \"\"], \"flops\": 12345, \"Sequence number\": 3}},\n"
        "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 10, \"tid\": 11, "
        "\"ts\": 1010, \"dur\": 5, \"args\": {\"External id\": 7, \"correlation\": 99, \"cbid\": 211}},\n"
        "  {\"ph\": \"f\", \"id\": 99, \"pid\": 10, \"tid\": 11, \"ts\": 1010, \"cat\": \"ac2g\", \"name\": \"ac2g\"},\n"
        "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7, \"ts\": 1020, "
        "\"dur\": 30, \"args\": {\"External id\": 7, \"device\": 0, \"stream\": 7, \"correlation\": 99}},\n"
        "  {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD\", \"pid\": 0, \"tid\": 7, "
        "\"ts\": 1060, \"dur\": 4, \"args\": {\"External id\": 7, \"correlation\": 12345}},\n"
        "  {\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"ann\", \"pid\": 0, \"tid\": 7, "
        "\"ts\": 1000, \"dur\": 100},\n"
        "  {\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"f\", \"pid\": 10, \"tid\": 11, \"ts\": 990, "
        "\"dur\": 100},\n"
        "  {\"ph\": \"X\", \"cat\": \"Trace\", \"ts\": 900, \"dur\": 500, \"pid\": \"Spans\", "
        "\"tid\": \"PyTorch Profiler\", \"name\": \"PyTorch Profiler (0)\", \"args\": {\"Op count\": 0}},\n"
        "  {\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": 10, \"tid\": 11, "
        "\"args\": {\"name\": \"main thread\"}},\n"
        "  {\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": 10, \"tid\": 0, "
        "\"args\": {\"name\": \"python3\"}},\n"
        "  {\"ph\": \"X\", \"cat\": null, \"name\": \"legacy\", \"pid\": 10, \"tid\": 12, \"ts\": 2000, \"dur\": 1}\n"
        " ],\n"
        " \"traceName\": \"x.json\", \"displayTimeUnit\": \"ms\", \"baseTimeNanoseconds\": 1711964646000000000}\n");
    assert_int_equal(t->nev, 5);
    const op_event *mm = find(t, "aten::mm"), *launch = find(t, "cudaLaunchKernel"), *k = find(t, "gemm");
    const op_event *cp = find(t, "Memcpy HtoD"), *leg = find(t, "legacy");
    assert_int_equal(mm->cat, OPPROF_CAT_CPU_OP);
    assert_int_equal(launch->cat, OPPROF_CAT_CUDA_RUNTIME);
    assert_int_equal(k->cat, OPPROF_CAT_KERNEL);
    assert_int_equal(cp->cat, OPPROF_CAT_GPU_MEMCPY);
    assert_int_equal(leg->cat, OPPROF_CAT_CPU_OP);
    assert_true(launch->flags & OP_EV_HAS_CORR);
    assert_int_equal(op_evx_of(t, launch)->correlation, 99);
    assert_true(mm->flags & OP_EV_HAS_EXT);
    assert_int_equal(op_evx_of(t, mm)->external_id, 7);
    assert_string_equal(str(t, op_evx_of(t, mm)->shapes), "[[5, 3, 224, 224], [64, 3, 7, 7], []]");
    assert_string_equal(str(t, op_evx_of(t, mm)->types), "[\"float\", \"float\", \"\"]");
    assert_int_equal(op_evx_of(t, mm)->flops, 12345);
    assert_true(t->options & OP_TRACE_SHAPES);
    assert_true(t->options & OP_TRACE_FLOPS);
    assert_true(t->options & OP_TRACE_DEVICE);
    /* The kernel through its launch, the memcpy through External id. */
    assert_int_equal(op_evx_of(t, mm)->dev_self_ns, 34000);
    assert_int_equal(op_evx_of(t, launch)->dev_self_ns, 0);
    assert_int_equal(mm->start_ns, 0);
    assert_int_equal(opprof_trace_base_time_ns(t), 1711964646000000000LL + 1000000LL);
    /* Thread names and the device stream. */
    const op_thread *main_th = &t->threads[mm->thread];
    assert_string_equal(str(t, main_th->name), "main thread");
    assert_int_equal(main_th->device, -1);
    assert_int_equal(t->threads[k->thread].device, 0);
    opprof_trace_free(t);
}

static void test_memory_events(void **state)
{
    (void)state;
    opprof_trace *t = load(
        "{\"traceEvents\": [\n"
        "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::empty\", \"pid\": 1, \"tid\": 1, \"ts\": 10, "
        "\"dur\": 10},\n"
        "  {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1, "
        "\"tid\": 1, \"ts\": 15, \"args\": {\"Total Reserved\": 0, \"Total Allocated\": 4096, \"Bytes\": 4096, "
        "\"Addr\": 18446744073709551615, \"Device Id\": -1, \"Device Type\": 0}},\n"
        "  {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1, "
        "\"tid\": 1, \"ts\": 30, \"args\": {\"Total Allocated\": 0, \"Bytes\": -4096, \"Addr\": 1, "
        "\"Device Id\": 0, \"Device Type\": 1}},\n"
        "  {\"ph\": \"i\", \"name\": \"other instant\", \"pid\": 1, \"tid\": 1, \"ts\": 31}\n"
        "]}");
    assert_int_equal(t->nmem, 2);
    assert_true(t->options & OP_TRACE_MEMORY);
    assert_true(t->mem_totals_given);
    assert_int_equal(t->mem[0].bytes, 4096);
    assert_true(t->mem[0].addr == UINT64_MAX);
    assert_int_equal(t->mem[0].total_allocated, 4096);
    assert_int_equal(t->mem[0].ts_ns, 5000);
    assert_int_equal(t->mem[0].device_id, -1);
    assert_int_equal(t->mem[1].device_type, 1);
    assert_int_equal(t->mem[1].device_id, 0);
    const op_event *e = find(t, "aten::empty");
    assert_int_equal(op_evx_of(t, e)->mem_self, 4096); /* the allocation inside it; the free came after */
    opprof_trace_free(t);
}

static void test_string_ids_after_numeric(void **state)
{
    (void)state;
    opprof_trace *t = load("[{\"ph\":\"X\",\"name\":\"a\",\"pid\":7,\"tid\":3,\"ts\":0,\"dur\":1},"
                           "{\"ph\":\"X\",\"name\":\"b\",\"pid\":\"Spans\",\"tid\":\"T\",\"ts\":0,\"dur\":1},"
                           "{\"ph\":\"X\",\"name\":\"c\",\"pid\":\"Spans\",\"tid\":3,\"ts\":0,\"dur\":1},"
                           "{\"ph\":\"X\",\"name\":\"d\",\"pid\":\"Other\",\"tid\":\"T\",\"ts\":0,\"dur\":1}]");
    assert_int_equal(t->nthreads, 4);
    const op_thread *b = &t->threads[find(t, "b")->thread], *c = &t->threads[find(t, "c")->thread];
    const op_thread *d = &t->threads[find(t, "d")->thread];
    assert_int_equal(b->pid, 8); /* after the largest numeric pid */
    assert_int_equal(c->pid, 8);
    assert_int_equal(d->pid, 9);
    assert_int_equal(b->tid, 4); /* after the largest numeric tid */
    assert_int_equal(d->tid, 4);
    assert_string_equal(str(t, b->name), "T");
    assert_string_equal(str(t, b->pid_name), "Spans");
    assert_int_equal(c->tid, 3);
    opprof_trace_free(t);
}

static void test_lenient_where_python_is(void **state)
{
    (void)state;
    /* Fields of skipped events are not checked; null is absent; a later
     * duplicate member wins; dur defaults to 0; a "B" without its "E" lasts
     * to the trace's last time (here its own start). */
    opprof_trace *t = load("[{\"ph\":\"f\",\"ts\":\"not a number\",\"pid\":[1]},"
                           "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":1,\"args\":{\"name\":5}},"
                           "{\"ph\":\"X\",\"name\":\"x\",\"name\":\"y\",\"pid\":1,\"tid\":1,\"ts\":5,"
                           "\"args\":{\"correlation\":null,\"External id\":4.0}},"
                           "{\"ph\":\"B\",\"name\":\"begin\",\"pid\":1,\"tid\":1,\"ts\":5},{}]");
    assert_int_equal(t->nev, 2);
    assert_int_equal(find(t, "begin")->dur_ns, 0);
    const op_event *y = find(t, "y");
    assert_int_equal(y->dur_ns, 0);
    assert_false(y->flags & OP_EV_HAS_CORR);
    assert_int_equal(op_evx_of(t, y)->external_id, 4);
    opprof_trace_free(t);
}

static void test_gzip_and_files(void **state)
{
    (void)state;
    char path[] = "/tmp/opprof_import_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2}]", f);
    fclose(f);
    opprof_trace *t;
    assert_int_equal(opprof_trace_load(path, &t), 0);
    assert_int_equal(opprof_trace_event_count(t), 1);
    opprof_trace_free(t);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "gzip -c %s > %s.gz && cat %s.gz %s.gz > %s.2.gz", path, path, path, path, path);
    if (system(cmd) != 0) skip();
    char gz[300];
    snprintf(gz, sizeof gz, "%s.gz", path);
    assert_int_equal(opprof_trace_load(gz, &t), 0);
    assert_int_equal(opprof_trace_event_count(t), 1);
    opprof_trace_free(t);
    /* Two concatenated gzip members read as one stream: two JSON values. */
    snprintf(gz, sizeof gz, "%s.2.gz", path);
    assert_int_equal(opprof_trace_load(gz, &t), OPPROF_E_PARSE);
    assert_null(t);
    assert_non_null(strstr(opprof_last_error(), "expected the end of the input"));
    assert_int_equal(opprof_trace_load("/nonexistent/trace.json", &t), OPPROF_E_NOT_FOUND);
    assert_non_null(strstr(opprof_last_error(), "/nonexistent/trace.json: "));
    snprintf(cmd, sizeof cmd, "rm -f %s %s.gz %s.2.gz", path, path, path);
    assert_int_equal(system(cmd), 0);
}

/* Thread CPU seconds to read a file of n one-event threads. */
static double load_threads_s(size_t n)
{
    char *doc = malloc(n * 80 + 16), *p = doc;
    assert_non_null(doc);
    *p++ = '[';
    for (size_t i = 0; i < n; i++)
        p += sprintf(p, "%s{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":%zu,\"ts\":%zu,\"dur\":1}", i ? "," : "",
                     i, i);
    *p++ = ']';
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    opprof_trace *t;
    assert_int_equal(opprof_trace_load_buffer(doc, (size_t)(p - doc), &t), 0);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    assert_int_equal(t->nthreads, n);
    opprof_trace_free(t);
    free(doc);
    return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
}

static void test_many_threads_stay_fast(void **state)
{
    (void)state;
    /* A file with a hundred thousand threads must not take quadratic time:
     * ten times the threads costs about ten times the CPU (a hundred if it
     * were quadratic). CPU time, not wall: a busy machine (TSan beside two
     * busy loops took over 5 s of wall) does not change it. */
    double small = load_threads_s(10000), big = load_threads_s(100000);
    print_message("10k threads %.3f s, 100k threads %.3f s of CPU: %.1fx\n", small, big, big / small);
    assert_true(big < 40 * small + 0.05);
    assert_true(big < 30.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_legacy_array),
        cmocka_unit_test(test_kineto_object),
        cmocka_unit_test(test_memory_events),
        cmocka_unit_test(test_string_ids_after_numeric),
        cmocka_unit_test(test_lenient_where_python_is),
        cmocka_unit_test(test_gzip_and_files),
        cmocka_unit_test(test_many_threads_stay_fast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* opprof_trace_convert: every trace read back from a converted file is the
 * trace that was converted, event for event (name, category, thread, times
 * to the nanosecond, shapes, types, FLOPs, args, stack), memory for memory,
 * with its base time and metadata, in each of the four formats and across
 * batch boundaries (a batch of 7 events: ranges open across batches, a
 * thread named after its first batch). Chrome "B"/"E" pairs are read as
 * complete events, so a trace of them has the table of the same trace made
 * of "X" events. A failed conversion leaves the target as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "export/convert.h"
#include "fixtures.h"
#include "opprof_trace.h"
#include "sample_session.h"
#include "slurp.h"
#include "tmpdir.h"

static char g_tmp[] = "/tmp/opprof_convert_XXXXXX";

static const char *const FORMATS[] = {"json", "json.gz", "pftrace", "pftrace.gz"};

static char *path_of(const char *name)
{
    static char buf[4][700];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_tmp, name);
    return buf[k];
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Each event as one line of text, sorted: the model orders events of equal
 * start and end as they were added, which batches may change. */
static char **event_lines(const opprof_trace *t, size_t *n)
{
    *n = opprof_trace_event_count(t);
    char **lines = calloc(*n + 1, sizeof *lines);
    assert_non_null(lines);
    for (size_t i = 0; i < *n; i++) {
        opprof_event e;
        assert_int_equal(opprof_trace_event(t, i, &e), OPPROF_OK);
        char frames[2048] = "";
        size_t at = 0;
        for (unsigned k = 0; k < opprof_trace_event_stack_depth(t, i) && at < sizeof frames - 1; k++)
            at += (size_t)snprintf(frames + at, sizeof frames - at, "%s|", opprof_trace_event_frame(t, i, k));
        size_t len = strlen(e.name) + strlen(e.input_shapes) + strlen(e.input_types) + strlen(e.args) + at + 256;
        lines[i] = malloc(len);
        assert_non_null(lines[i]);
        snprintf(lines[i], len, "%lld %lld %lld %lld %s %d %s %s %llu %s %s %x", (long long)e.pid, (long long)e.tid,
                 (long long)e.start_ns, (long long)e.dur_ns, e.name, e.category, e.input_shapes, e.input_types,
                 (unsigned long long)e.flops, e.args, frames, e.flags & OPPROF_EVENT_DEVICE);
    }
    qsort(lines, *n, sizeof *lines, by_text);
    return lines;
}

static void free_lines(char **lines, size_t n)
{
    for (size_t i = 0; i < n; i++) free(lines[i]);
    free(lines);
}

/* a and b hold the same events, memory, times and metadata. */
static void expect_same_trace(const opprof_trace *a, const opprof_trace *b, const char *what)
{
    size_t na, nb;
    char **la = event_lines(a, &na), **lb = event_lines(b, &nb);
    if (na != nb) {
        for (size_t i = 0; i < na; i++) fprintf(stderr, "  want %s\n", la[i]);
        for (size_t i = 0; i < nb; i++) fprintf(stderr, "  got  %s\n", lb[i]);
        fail_msg("%s: %zu events, read back %zu", what, na, nb);
    }
    for (size_t i = 0; i < na; i++)
        if (strcmp(la[i], lb[i])) fail_msg("%s: event\n  %s\nread back as\n  %s", what, la[i], lb[i]);
    free_lines(la, na);
    free_lines(lb, nb);
    if (opprof_trace_base_time_ns(a) != opprof_trace_base_time_ns(b))
        fail_msg("%s: base time %lld, read back %lld", what, (long long)opprof_trace_base_time_ns(a),
                 (long long)opprof_trace_base_time_ns(b));
    opprof_memory_stats ma, mb;
    assert_int_equal(opprof_trace_memory_stats(a, &ma), OPPROF_OK);
    assert_int_equal(opprof_trace_memory_stats(b, &mb), OPPROF_OK);
    if (ma.allocations != mb.allocations || ma.frees != mb.frees || ma.bytes_allocated != mb.bytes_allocated ||
        ma.peak_bytes != mb.peak_bytes || ma.peak_time_ns != mb.peak_time_ns)
        fail_msg("%s: memory differs", what);
    assert_int_equal(opprof_trace_dropped(a), opprof_trace_dropped(b));
    assert_int_equal(opprof_trace_incomplete(a), opprof_trace_incomplete(b));
    opprof_distributed_info da, db;
    int ra = opprof_trace_distributed_info(a, &da), rb = opprof_trace_distributed_info(b, &db);
    assert_int_equal(ra, rb);
    if (ra == OPPROF_OK) {
        assert_int_equal(da.rank, db.rank);
        assert_int_equal(da.world_size, db.world_size);
    }
}

/* in, converted to every format with the given batch, reads back as in. */
static void expect_round_trips(const char *in_path, size_t batch)
{
    char in[1024];
    snprintf(in, sizeof in, "%s", in_path); /* path_of's buffers turn over */
    opprof_trace *want = NULL;
    assert_int_equal(opprof_trace_load(in, &want), OPPROF_OK);
    op_convert_batch = batch;
    for (size_t f = 0; f < sizeof FORMATS / sizeof *FORMATS; f++) {
        char name[64], what[1200];
        snprintf(name, sizeof name, "out.%s", FORMATS[f]);
        const char *out = path_of(name);
        if (opprof_trace_convert(in, out, NULL) != OPPROF_OK) fail_msg("%s -> %s: %s", in, out, opprof_last_error());
        opprof_trace *got = NULL;
        if (opprof_trace_load(out, &got) != OPPROF_OK) fail_msg("%s: %s", out, opprof_last_error());
        snprintf(what, sizeof what, "%s -> .%s, batches of %zu", in, FORMATS[f], batch);
        expect_same_trace(want, got, what);
        opprof_trace_free(got);
    }
    op_convert_batch = (size_t)1 << 20;
    opprof_trace_free(want);
}

static void test_fixtures_round_trip(void **state)
{
    (void)state;
    static const char *const files[] = {
        "kineto/nccl_data.json.gz",
        "kineto/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
        "kineto/benchmark_result_2869224_1695835535_trace.json.gz",
        "torch-traces/resnet18_infer_b5.trace.json",
        "torch-traces/mlp_train_3steps.trace.json",
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[1024];
        if (!fixture_path(path, sizeof path, files[i])) {
            fprintf(stderr, "skipping %s: not found\n", path);
            continue;
        }
        expect_round_trips(path, (size_t)1 << 20);
    }
}

/* Through small batches: a live session's trace (shapes, FLOPs, memory,
 * names with a tab and quotes), and one whose main range opens first and
 * ends last around 50 ranges with call stacks and args, on a thread with a
 * string id named by metadata at the end. */
static void test_session_across_batches(void **state)
{
    (void)state;
    opprof_trace *t = sample_session_to(40, NULL);
    assert_non_null(t);
    char json[700], nested[700];
    snprintf(json, sizeof json, "%s", path_of("session.json"));
    assert_int_equal(opprof_export_chrome_trace(t, json), OPPROF_OK);
    opprof_trace_free(t);
    /* a trace whose main range opens first and ends last: open across every batch */
    snprintf(nested, sizeof nested, "%s", path_of("nested.json"));
    FILE *f = fopen(nested, "w");
    assert_non_null(f);
    fprintf(f, "{\"baseTimeNanoseconds\": 1700000000000000000, \"traceEvents\": [\n");
    fprintf(f, "{\"ph\": \"B\", \"name\": \"main\", \"pid\": 7, \"tid\": \"worker\", \"ts\": 0}");
    for (int i = 0; i < 50; i++)
        fprintf(f, ",\n{\"ph\": \"X\", \"name\": \"step\", \"pid\": 7, \"tid\": \"worker\", \"ts\": %d, \"dur\": 3,"
                   " \"args\": {\"Call stack\": \"s.c(%d): step;m.c(1): main\", \"Seq\": %d}}",
                10 * i + 1, i % 3, i);
    fprintf(f, ",\n{\"ph\": \"E\", \"pid\": 7, \"tid\": \"worker\", \"ts\": 1000}");
    fprintf(f, ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 7, \"tid\": \"worker\","
               " \"args\": {\"name\": \"the worker\"}}\n]}\n");
    fclose(f);
    size_t batches[] = {1, 7, 1000};
    for (size_t b = 0; b < 3; b++) {
        expect_round_trips(json, batches[b]);
        expect_round_trips(nested, batches[b]);
    }
}

static void write_file(const char *name, const char *text)
{
    FILE *f = fopen(path_of(name), "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *table_of(const char *path)
{
    opprof_trace *t = NULL;
    if (opprof_trace_load(path, &t) != OPPROF_OK) fail_msg("%s: %s", path, opprof_last_error());
    opprof_key_averages *ka = NULL;
    assert_int_equal(opprof_key_averages(t, NULL, &ka), OPPROF_OK);
    char *s = NULL;
    assert_int_equal(opprof_table_string(ka, "cpu_time_total", -1, &s), OPPROF_OK);
    opprof_key_averages_free(ka);
    opprof_trace_free(t);
    return s;
}

/* Duration events: B/E pairs per thread (an E ends its thread's innermost
 * B), an E with args, an E with no B (ignored), a B never ended (lasts to
 * the last time), interleaved threads. */
static void test_duration_events_are_ranges(void **state)
{
    (void)state;
    write_file("be.json", "{\"traceEvents\": ["
                          "{\"ph\": \"B\", \"name\": \"outer\", \"pid\": 1, \"tid\": 1, \"ts\": 0},"
                          "{\"ph\": \"B\", \"name\": \"other\", \"pid\": 1, \"tid\": 2, \"ts\": 1},"
                          "{\"ph\": \"B\", \"name\": \"inner\", \"pid\": 1, \"tid\": 1, \"ts\": 2},"
                          "{\"ph\": \"E\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"args\": {\"Seq\": 3}},"
                          "{\"ph\": \"E\", \"pid\": 1, \"tid\": 2, \"ts\": 9},"
                          "{\"ph\": \"E\", \"pid\": 1, \"tid\": 3, \"ts\": 9},"
                          "{\"ph\": \"E\", \"pid\": 1, \"tid\": 1, \"ts\": 20},"
                          "{\"ph\": \"B\", \"name\": \"open\", \"pid\": 1, \"tid\": 1, \"ts\": 30},"
                          "{\"ph\": \"X\", \"name\": \"last\", \"pid\": 1, \"tid\": 2, \"ts\": 40, \"dur\": 10}]}");
    write_file("x.json", "{\"traceEvents\": ["
                         "{\"ph\": \"X\", \"name\": \"outer\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 20},"
                         "{\"ph\": \"X\", \"name\": \"other\", \"pid\": 1, \"tid\": 2, \"ts\": 1, \"dur\": 8},"
                         "{\"ph\": \"X\", \"name\": \"inner\", \"pid\": 1, \"tid\": 1, \"ts\": 2, \"dur\": 3},"
                         "{\"ph\": \"X\", \"name\": \"open\", \"pid\": 1, \"tid\": 1, \"ts\": 30, \"dur\": 20},"
                         "{\"ph\": \"X\", \"name\": \"last\", \"pid\": 1, \"tid\": 2, \"ts\": 40, \"dur\": 10}]}");
    char *be = table_of(path_of("be.json")), *x = table_of(path_of("x.json"));
    assert_string_equal(be, x);
    assert_non_null(strstr(be, "outer"));
    free(be);
    free(x);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_trace_load(path_of("be.json"), &t), OPPROF_OK);
    int seen = 0;
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        assert_int_equal(opprof_trace_event(t, i, &e), OPPROF_OK);
        if (!strcmp(e.name, "inner")) {
            assert_int_equal(e.dur_ns, 3000);
            assert_string_equal(e.args, "\"Seq\": 3");
            seen++;
        }
    }
    assert_int_equal(seen, 1);
    opprof_trace_free(t);
    /* converted, a B/E trace is a trace of complete events */
    expect_round_trips(path_of("be.json"), 2);
}

static void test_failure_keeps_the_target(void **state)
{
    (void)state;
    write_file("target.json", "previous");
    write_file("bad.json", "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 0}, 42]}");
    op_convert_batch = 1; /* the first event is written before the bad one is met */
    int rc = opprof_trace_convert(path_of("bad.json"), path_of("target.json"), NULL);
    op_convert_batch = (size_t)1 << 20;
    assert_int_equal(rc, OPPROF_E_PARSE);
    assert_non_null(strstr(opprof_last_error(), "bad.json: byte "));
    char *s = slurp(path_of("target.json"));
    assert_string_equal(s, "previous");
    free(s);
    assert_int_equal(opprof_trace_convert(path_of("missing.json"), path_of("target.json"), NULL), OPPROF_E_NOT_FOUND);
    assert_int_equal(opprof_trace_convert(path_of("target.json"), path_of("target.json"), NULL), OPPROF_E_INVAL);
}

TMPDIR_SETUP(g_tmp)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures_round_trip),
        cmocka_unit_test(test_session_across_batches),
        cmocka_unit_test(test_duration_events_are_ranges),
        cmocka_unit_test(test_failure_keeps_the_target),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

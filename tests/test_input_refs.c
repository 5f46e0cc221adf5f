/* Input shapes stored as references: a site that repeats one of its last
 * few input tuples writes a 32-byte record that refers back to the tuple
 * instead of a copy (capture/record.c). Whatever the pattern (tuples
 * alternating within the cache, cycling past it, too long to cache, sites
 * sharing a set), every event must read back its own shapes, types and
 * FLOPs, in the model, the table by input shape and the trace's Input Dims. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "capture/state.h"
#include "opprof_trace.h"

static int64_t g_now;

static int64_t fake_clock(void *ctx)
{
    (void)ctx;
    return g_now;
}

static uint64_t mm_flops(const opprof_input *in, unsigned n)
{
    if (n < 2 || in[0].ndim < 2 || in[1].ndim < 2) return 0;
    return 2ull * (uint64_t)in[0].dims[0] * (uint64_t)in[0].dims[1] * (uint64_t)in[1].dims[1];
}

static const opprof_site site_mm = {"aten::mm", __FILE__, __LINE__, OPPROF_CAT_CPU_OP, mm_flops};

/* More sites than the cache has sets, each with a tuple of its own, so
 * that some share a set with aten::mm and with each other. */
#define NOTHER 20
static char g_other_names[NOTHER][8];
static opprof_site g_other[NOTHER];

#define NTUPLES 7
#define BIG NTUPLES /* index of the tuple too long to cache */
static opprof_input g_tuple[NTUPLES + 1][4];
static unsigned g_tuple_n[NTUPLES + 1];
static char g_tuple_dims[NTUPLES + 1][256];

static void setup_tuples(void)
{
    for (int i = 0; i < NOTHER; i++) {
        snprintf(g_other_names[i], sizeof g_other_names[i], "op%02d", i);
        g_other[i] = (opprof_site){g_other_names[i], __FILE__, 1, OPPROF_CAT_CPU_OP, NULL};
    }
    for (int i = 0; i < NTUPLES; i++) { /* [[i+1, 8], [8, 16]]: equal but for one dim */
        g_tuple[i][0] = (opprof_input){OPPROF_DTYPE_FLOAT, 2, {i + 1, 8}};
        g_tuple[i][1] = (opprof_input){OPPROF_DTYPE_FLOAT, 2, {8, 16}};
        g_tuple_n[i] = 2;
        snprintf(g_tuple_dims[i], sizeof g_tuple_dims[i], "[[%d, 8], [8, 16]]", i + 1);
    }
    /* 4 inputs of 8 dims: 32 dims, more than an entry holds. */
    char *p = g_tuple_dims[BIG];
    p += sprintf(p, "[");
    for (int i = 0; i < 4; i++) {
        g_tuple[BIG][i] = (opprof_input){OPPROF_DTYPE_FLOAT, 8, {2, 3, 1, 1, 1, 1, 1, 2 + i}};
        p += sprintf(p, "%s[2, 3, 1, 1, 1, 1, 1, %d]", i ? ", " : "", 2 + i);
    }
    sprintf(p, "]");
    g_tuple_n[BIG] = 4;
}

/* The tuples aten::mm records, in order: 4 alternating (within the
 * cache), 6 cycling (past it), the long one, then back to the first ones. */
static int g_seq[256];
static int g_nseq;

static void setup_seq(void)
{
    g_nseq = 0;
    for (int r = 0; r < 10; r++)
        for (int k = 0; k < 4; k++) g_seq[g_nseq++] = k;
    for (int r = 0; r < 5; r++)
        for (int k = 0; k < 6; k++) g_seq[g_nseq++] = k;
    g_seq[g_nseq++] = BIG;
    g_seq[g_nseq++] = BIG;
    for (int r = 0; r < 8; r++) g_seq[g_nseq++] = r % 2 ? 6 : 1;
}

static void record_seq(void)
{
    opprof_input other_in[1] = {{OPPROF_DTYPE_INT64, 1, {0}}};
    for (int i = 0; i < g_nseq; i++) {
        const opprof_site *o = &g_other[i % NOTHER];
        other_in[0].dims[0] = i % NOTHER;
        g_now += 10;
        opprof_begin_inputs(&site_mm, g_tuple[g_seq[i]], g_tuple_n[g_seq[i]]);
        g_now += 10;
        opprof_begin_inputs(o, other_in, 1);
        g_now += 10;
        assert_int_equal(opprof_end(o), OPPROF_OK);
        g_now += 10;
        assert_int_equal(opprof_end(&site_mm), OPPROF_OK);
    }
}

static void start_session(int flops)
{
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.record_shapes = 1;
    cfg.with_flops = flops;
    cfg.clock = fake_clock;
    g_now = 1000;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
}

static opprof_trace *stop_trace(void)
{
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_non_null(t);
    return t;
}

/* The model: each aten::mm and each other op, with its own inputs. */
static void check_events(const opprof_trace *t, int flops)
{
    assert_int_equal(opprof_trace_event_count(t), 2 * (size_t)g_nseq);
    int nth_mm = 0, nth_other[NOTHER] = {0};
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        assert_int_equal(opprof_trace_event(t, i, &e), OPPROF_OK);
        if (strcmp(e.name, "aten::mm") == 0) {
            int k = g_seq[nth_mm++];
            assert_string_equal(e.input_shapes, g_tuple_dims[k]);
            assert_string_equal(e.input_types,
                                k == BIG ? "[\"float\", \"float\", \"float\", \"float\"]" : "[\"float\", \"float\"]");
            assert_int_equal(e.flops, flops ? mm_flops(g_tuple[k], g_tuple_n[k]) : 0);
        } else {
            int o = atoi(e.name + 2);
            char want[16];
            snprintf(want, sizeof want, "[[%d]]", o);
            assert_string_equal(e.input_shapes, want);
            nth_other[o]++;
        }
    }
    assert_int_equal(nth_mm, g_nseq);
}

/* The table by input shape: exact counts per shape. */
static void check_table(const opprof_trace *t)
{
    int want[NTUPLES + 1] = {0};
    for (int i = 0; i < g_nseq; i++) want[g_seq[i]]++;
    opprof_avg_options opt = {.group_by_input_shape = 1};
    opprof_key_averages *ka = NULL;
    assert_int_equal(opprof_key_averages(t, &opt, &ka), OPPROF_OK);
    int seen = 0;
    for (size_t r = 0; r < opprof_key_averages_count(ka); r++) {
        opprof_avg_row row;
        assert_int_equal(opprof_key_averages_row(ka, r, &row), OPPROF_OK);
        if (strcmp(row.name, "aten::mm") != 0) continue;
        int k = 0;
        while (k <= NTUPLES && strcmp(row.input_shapes, g_tuple_dims[k]) != 0) k++;
        assert_true(k <= NTUPLES);
        assert_int_equal(row.count, want[k]);
        seen++;
    }
    assert_int_equal(seen, NTUPLES + 1);
    opprof_key_averages_free(ka);
}

/* The trace: each aten::mm's Input Dims, found by its Ev Idx. */
static void check_json(const opprof_trace *t)
{
    char *json = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&json, &len);
    assert_non_null(f);
    assert_int_equal(opprof_export_chrome_trace_stream(t, f, NULL), OPPROF_OK);
    fclose(f);
    int nth = 0;
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        assert_int_equal(opprof_trace_event(t, i, &e), OPPROF_OK);
        if (strcmp(e.name, "aten::mm") != 0) continue;
        char idx[48], want[300];
        snprintf(idx, sizeof idx, "\"Ev Idx\": %zu}", i);
        snprintf(want, sizeof want, "\"Input Dims\": %s, ", g_tuple_dims[g_seq[nth++]]);
        const char *at = strstr(json, idx);
        assert_non_null(at);
        const char *line = at;
        while (line > json && line[-1] != '\n') line--;
        const char *dims = strstr(line, "\"Input Dims\": ");
        assert_true(dims && dims < at);
        assert_memory_equal(dims, want, strlen(want));
    }
    assert_int_equal(nth, g_nseq);
    free(json);
}

static void test_alternating_tuples_read_back_per_event(void **state)
{
    (void)state;
    setup_tuples();
    setup_seq();
    /* Twice with FLOPs, twice without: a later session's references start
     * again and must not meet the cache the last one left. */
    for (int session = 0; session < 4; session++) {
        int flops = session < 2;
        start_session(flops);
        record_seq();
        opprof_trace *t = stop_trace();
        check_events(t, flops);
        check_table(t);
        check_json(t);
        opprof_trace_free(t);
    }
}

/* Bytes the calling thread's buffers hold now. */
static size_t buffer_bytes(void)
{
    return op_thread_bytes(op_tls);
}

/* Four tuples alternating on one site: the first of each is copied (4
 * header words, a descriptor word and 4 dims), every later one is a bare
 * 32-byte header. */
static void test_four_alternating_tuples_cost_32_bytes_each(void **state)
{
    (void)state;
    setup_tuples();
    start_session(0);
    const int n = 400;
    for (int i = 0; i < n; i++) {
        g_now += 10;
        opprof_begin_inputs(&site_mm, g_tuple[i % 4], 2);
        g_now += 10;
        assert_int_equal(opprof_end(&site_mm), OPPROF_OK);
    }
    assert_int_equal(buffer_bytes(), (size_t)n * 32 + 4 * 5 * sizeof(op_word));
    opprof_trace *t = stop_trace();
    for (int i = 0; i < n; i++) {
        opprof_event e;
        assert_int_equal(opprof_trace_event(t, (size_t)i, &e), OPPROF_OK);
        assert_string_equal(e.input_shapes, g_tuple_dims[i % 4]);
    }
    opprof_trace_free(t);
}

/* A flight recorder's ring overwrites its oldest records, tuples written
 * in full among them: it stores every tuple in full, and a dump after the
 * ring wrapped reads back each event's own shapes. */
static void test_ring_that_wraps_keeps_shapes(void **state)
{
    (void)state;
    setup_tuples();
    char path[] = "/tmp/opprof_input_refs_XXXXXX", run[] = "/tmp/opprof_input_refs_run_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    /* the recorder's trigger socket in a folder of the test's, not the user's */
    assert_non_null(mkdtemp(run));
    assert_int_equal(setenv("XDG_RUNTIME_DIR", run, 1), 0);
    opprof_flight_config fc;
    opprof_flight_config_init(&fc);
    fc.session.record_shapes = 1;
    fc.session.clock = fake_clock;
    fc.ring_bytes = 2u << 20;
    fc.signal = -1;
    fc.path = path;
    g_now = 1000;
    assert_int_equal(opprof_flight_start(&fc), OPPROF_OK);
    assert_int_equal(op_tls ? op_tls->opts & OP_OPT_INPUT_REFS : 0, 0);
    const int n = 100000; /* 72 bytes each: the 2 MiB ring wraps */
    for (int i = 0; i < n; i++) {
        g_now += 10;
        opprof_begin_inputs(&site_mm, g_tuple[i % 4], 2);
        g_now += 10;
        assert_int_equal(opprof_end(&site_mm), OPPROF_OK);
    }
    assert_int_equal(op_tls->opts & OP_OPT_INPUT_REFS, 0);
    assert_int_equal(opprof_flight_dump(NULL), OPPROF_OK);
    assert_int_equal(opprof_flight_stop(), OPPROF_OK);
    unsetenv("XDG_RUNTIME_DIR");
    char rm[128];
    snprintf(rm, sizeof rm, "rm -rf %s", run);
    assert_int_equal(system(rm), 0);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_trace_load(path, &t), OPPROF_OK);
    unlink(path);
    size_t count = opprof_trace_event_count(t), mm = 0;
    int prev = -1;
    for (size_t i = 0; i < count; i++) {
        opprof_event e;
        assert_int_equal(opprof_trace_event(t, i, &e), OPPROF_OK);
        if (strcmp(e.name, "aten::mm") != 0) continue;
        int k = 0;
        while (k < 4 && strcmp(e.input_shapes, g_tuple_dims[k]) != 0) k++;
        assert_true(k < 4);
        if (prev >= 0) assert_int_equal(k, (prev + 1) % 4);
        prev = k;
        mm++;
    }
    assert_true(mm > 1000 && mm < (size_t)n);
    opprof_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alternating_tuples_read_back_per_event),
        cmocka_unit_test(test_four_alternating_tuples_cost_32_bytes_each),
        cmocka_unit_test(test_ring_that_wraps_keeps_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

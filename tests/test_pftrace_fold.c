/* The key averages of a .pftrace folded as it is read
 * (opprof_trace_load_table, import/pftrace_fold.c) against the same file
 * read into the model (opprof_trace_load_max): the same table, CSV and
 * footer to the byte for every sort and grouping, the same error (status
 * and message) for every truncation, corruption and --max-events, on
 * traces written by the exporter (random nested trees with zero-length
 * ranges, ties across threads, ProfilerStep#N, shapes, FLOPs), by a
 * streamed session, by hand (lanes, times that go back, ranges open at the
 * end, skipped categories, ends without begins) and converted from the
 * shared fixtures (memory, device activity: the model's). Then a streamed
 * session's 3M-slice trace is summed in a few MB where its model takes
 * some 40 bytes per slice, and `opprof summary` prints the same either way. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <zstd.h>

#include "common/pfschema.h"
#include "export/pbw.h"
#include "fixtures.h"
#include "model/model.h"
#include "nested_ranges.h"
#include "opprof_trace.h"
#include "tmpdir.h"

TMPDIR_GROUP(g_dir, "/tmp/opprof_pffold_XXXXXX")

static const char *path_in(const char *name)
{
    static char buf[4][700];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
    return buf[k];
}

/* The table (every row) by sort, then the CSV; or the failure's text. */
static char *text_of(const opprof_trace *t, const opprof_avg_options *o, const char *sort)
{
    opprof_key_averages *ka = NULL;
    char *out = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&out, &n);
    assert_non_null(f);
    if (opprof_key_averages(t, o, &ka) != OPPROF_OK) {
        fprintf(f, "error: %s\n", opprof_last_error());
    } else {
        char *tab = NULL;
        assert_int_equal(opprof_table_string(ka, sort, -1, &tab), OPPROF_OK);
        fputs(tab, f);
        free(tab);
        assert_int_equal(opprof_key_averages_sort(ka, sort), OPPROF_OK);
        assert_int_equal(opprof_key_averages_write_csv(ka, f), OPPROF_OK);
    }
    opprof_key_averages_free(ka);
    fclose(f);
    return out;
}

static const opprof_avg_options OPTS[] = {{0, 0, 0}, {1, 0, 0}, {0, 0, 1}, {0, 2, 0}};

/* Both readers of path with max (0: none): the same outcome. Returns 1 when
 * the fold kept no events (it summed), 0 when it read the model, -1 when
 * both failed. */
static int same_both_ways(const char *path, const opprof_avg_options *o, uint64_t max)
{
    opprof_trace *a = NULL, *b = NULL;
    int ra = opprof_trace_load_max(path, max, &a);
    char ea[512];
    snprintf(ea, sizeof ea, "%s", opprof_last_error());
    int rb = opprof_trace_load_table(path, max, o, &b);
    if (ra != rb || (ra != OPPROF_OK && strcmp(ea, opprof_last_error())))
        fail_msg("%s: model %d \"%s\", fold %d \"%s\"", path, ra, ea, rb, opprof_last_error());
    if (ra != OPPROF_OK) return -1;
    assert_int_equal(opprof_trace_incomplete(a), opprof_trace_incomplete(b));
    assert_int_equal(opprof_trace_dropped(a), opprof_trace_dropped(b));
    static const char *const sorts[] = {"cpu_time_total", "self_cpu_time_total", "count", "cpu_time", "flops"};
    for (size_t s = 0; s < sizeof sorts / sizeof *sorts; s++) {
        char *x = text_of(a, o, sorts[s]), *y = text_of(b, o, sorts[s]);
        if (strcmp(x, y)) fail_msg("%s (shape %d, top %d, stack %d, %s):\nmodel:\n%s\nfold:\n%s", path,
                                   o->group_by_input_shape, o->top_level_only, o->group_by_stack_n, sorts[s], x, y);
        free(x);
        free(y);
    }
    int folded = opprof_trace_event_count(b) == 0 && opprof_trace_event_count(a) > 0;
    opprof_trace_free(a);
    opprof_trace_free(b);
    return folded;
}

/* Every grouping; returns how many of them folded. */
static int same_every_way(const char *path)
{
    int folded = 0;
    for (size_t k = 0; k < sizeof OPTS / sizeof *OPTS; k++) folded += same_both_ways(path, &OPTS[k], 0) == 1;
    return folded;
}

/* ---- traces written by the exporter ---- */

static uint64_t g_rng = 88172645463325252ull;

static uint64_t rnd(uint64_t n)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng % n;
}

static int g_many_names; /* tree() names its slices from 300 names instead of NAMES */

static const char *const NAMES[] = {"aten::mm", "aten::add", "ProfilerStep#1", "ProfilerStep#2", "leaf", "",
                                    "aten::relu", "user"};

/* Children of [start, end) on thread th, depth levels down: siblings one
 * after another, some of no length, some touching their neighbours. */
static void tree(opprof_trace *t, uint32_t th, int64_t start, int64_t end, int depth)
{
    int64_t at = start;
    while (depth > 0 && at < end && rnd(5)) {
        int64_t len = rnd(4) == 0 ? 0 : 1 + (int64_t)rnd((uint64_t)(end - at));
        if (rnd(3) == 0 && at > start) at += (int64_t)rnd(3); /* touching or a little after */
        if (at + len > end) len = end - at;
        char many[16];
        const char *name = NAMES[rnd(sizeof NAMES / sizeof *NAMES)];
        if (g_many_names) snprintf(many, sizeof many, "op%d", (int)rnd(300)), name = many;
        op_event *e = op_trace_add_event(t, th, op_trace_intern(t, name, strlen(name)),
                                         rnd(4) ? OPPROF_CAT_CPU_OP : OPPROF_CAT_USER_ANNOTATION, at, len);
        if (rnd(3) == 0) {
            static const char *const shapes[] = {"[[2, 3]]", "[]", "[[4], [4]]"};
            const char *s = shapes[rnd(3)];
            op_evx_add(t, e)->shapes = op_trace_intern(t, s, strlen(s));
            t->options |= OP_TRACE_SHAPES;
        }
        if (rnd(4) == 0) {
            op_evx_add(t, e)->flops = 1 + rnd(1000);
            t->options |= OP_TRACE_FLOPS;
        }
        tree(t, th, at, at + len, depth - 1);
        at += len;
    }
}

static void write_random(const char *name, int threads, int same_start)
{
    opprof_trace *t = op_trace_new();
    for (int k = 0; k < threads; k++) {
        uint32_t th = (uint32_t)op_trace_thread(t, 7, 100 + k);
        int64_t at = same_start ? 1000 : 1000 + (int64_t)rnd(50);
        for (int top = 0; top < 6; top++) {
            int64_t len = 1 + (int64_t)rnd(5000);
            const char *n = NAMES[rnd(sizeof NAMES / sizeof *NAMES)];
            op_trace_add_event(t, th, op_trace_intern(t, n, strlen(n)), OPPROF_CAT_CPU_OP, at, len);
            tree(t, th, at, at + len, 5);
            at += len + (int64_t)rnd(3);
        }
    }
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    assert_int_equal(opprof_export_chrome_trace(t, path_in(name)), OPPROF_OK);
    opprof_trace_free(t);
}

static void test_exported_traces(void **state)
{
    (void)state;
    int folded = 0;
    for (int round = 0; round < 24; round++) {
        char name[64];
        static const char *const ext[] = {"pftrace", "pftrace.gz"};
        snprintf(name, sizeof name, "random_%d.%s", round, ext[round % 2]);
        if (round % 3 == 0) setenv("OPPROF_PFTRACE_COMPRESS", "0", 1); /* plain packets */
        write_random(name, 1 + round % 3, round % 4 == 1);
        unsetenv("OPPROF_PFTRACE_COMPRESS");
        folded += same_every_way(path_in(name));
    }
    print_message("%d of 96 readings folded\n", folded);
    assert_true(folded >= 40); /* 2 of the 4 groupings fold, unless a thread overlaps itself */
}

/* ---- by hand: what the fold must give back to the model ---- */

typedef struct hev {
    uint64_t track;
    int type; /* PF_TYPE_SLICE_BEGIN / END / INSTANT */
    uint64_t ts;
    const char *name, *cat;
    int64_t flops;  /* -1 none */
    const char *shapes;
} hev;

static size_t frame(FILE *f, const op_pbw *b)
{
    op_pbw o = {0};
    op_pbw_bytes(&o, PF_TRACE_PACKET, b->out.p, b->out.n);
    fwrite(o.out.p, 1, o.out.n, f);
    size_t n = o.out.n;
    op_pbw_free(&o);
    return n;
}

static void annotation(op_pbw *b, const char *name, const char *s, uint64_t v)
{
    op_pbw_begin(b, PF_TE_DEBUG_ANNOTATIONS);
    op_pbw_bytes(b, PF_DA_NAME, name, strlen(name));
    if (s) op_pbw_bytes(b, PF_DA_STRING, s, strlen(s));
    else op_pbw_uint(b, PF_DA_UINT, v);
    op_pbw_end(b);
}

/* How write_shaped lays out an event's packet: time and event only; the
 * usual shape (time, event, sequence id, flags: the reader's fast path);
 * the same fields with the sequence id first (its general loop); the usual
 * shape with the incremental state cleared (the general loop too). */
enum { SHAPE_PLAIN, SHAPE_USUAL, SHAPE_SEQ_FIRST, SHAPE_CLEARED };

/* Tracks: 9 thread 1, 10 thread 2, 11 a lane under 9 (thread 1 again), 12
 * not a thread's; then the events, inline names, absolute times. */
static void write_shaped(const char *name, const hev *ev, size_t n, int shape)
{
    FILE *f = fopen(path_in(name), "wb");
    assert_non_null(f);
    op_pbw b = {0};
    for (int k = 0; k < 4; k++) {
        op_pbw_reset(&b);
        op_pbw_begin(&b, PF_PKT_TRACK_DESCRIPTOR);
        op_pbw_uint(&b, PF_TD_UUID, 9 + (uint64_t)k);
        if (k < 2) {
            op_pbw_begin(&b, PF_TD_THREAD);
            op_pbw_uint(&b, PF_THD_PID, 1);
            op_pbw_uint(&b, PF_THD_TID, 1 + (uint64_t)k);
            op_pbw_end(&b);
        } else if (k == 2) {
            op_pbw_uint(&b, PF_TD_PARENT_UUID, 9);
        }
        op_pbw_end(&b);
        frame(f, &b);
    }
    for (size_t i = 0; i < n; i++) {
        op_pbw_reset(&b);
        if (shape == SHAPE_SEQ_FIRST) op_pbw_uint(&b, PF_PKT_SEQUENCE_ID, 7);
        op_pbw_uint(&b, PF_PKT_TIMESTAMP, ev[i].ts);
        op_pbw_begin(&b, PF_PKT_TRACK_EVENT);
        op_pbw_uint(&b, PF_TE_TRACK_UUID, ev[i].track);
        op_pbw_uint(&b, PF_TE_TYPE, (uint64_t)ev[i].type);
        if (ev[i].name) op_pbw_bytes(&b, PF_TE_NAME, ev[i].name, strlen(ev[i].name));
        if (ev[i].cat) op_pbw_bytes(&b, PF_TE_CATEGORIES, ev[i].cat, strlen(ev[i].cat));
        if (ev[i].flops >= 0) annotation(&b, "flops", NULL, (uint64_t)ev[i].flops);
        if (ev[i].shapes) annotation(&b, "Input Dims", ev[i].shapes, 0);
        op_pbw_end(&b);
        if (shape == SHAPE_USUAL || shape == SHAPE_CLEARED) op_pbw_uint(&b, PF_PKT_SEQUENCE_ID, 7);
        if (shape != SHAPE_PLAIN)
            op_pbw_uint(&b, PF_PKT_SEQUENCE_FLAGS,
                        PF_SEQ_NEEDS_INCREMENTAL_STATE | (shape == SHAPE_CLEARED ? PF_SEQ_INCREMENTAL_STATE_CLEARED : 0));
        frame(f, &b);
    }
    op_pbw_free(&b);
    fclose(f);
}

static void write_hand(const char *name, const hev *ev, size_t n)
{
    write_shaped(name, ev, n, SHAPE_PLAIN);
}

#define B(tr, ts, nm) {tr, PF_TYPE_SLICE_BEGIN, ts, nm, NULL, -1, NULL}
#define E(tr, ts) {tr, PF_TYPE_SLICE_END, ts, NULL, NULL, -1, NULL}

static void test_hand_made(void **state)
{
    (void)state;
    /* Nesting, ties across threads, a zero-length range touching its
     * sibling's end, an end's FLOPs and shapes, an unknown category (skipped,
     * its children the enclosing one's), an end without a begin, and ranges
     * open at the end (they last to the trace's last time). */
    const hev nested[] = {
        B(9, 100, "outer"), B(10, 100, "outer"), B(9, 110, "a"), E(9, 150), B(9, 150, "z"), E(9, 150),
        {9, PF_TYPE_SLICE_BEGIN, 150, "s", "gpu_user_annotation", -1, NULL}, B(9, 160, "a"), E(9, 170),
        E(9, 180), {9, PF_TYPE_SLICE_BEGIN, 180, "mm", NULL, 5, "[[1]]"},
        {9, PF_TYPE_SLICE_END, 190, NULL, NULL, 7, "[[2, 2]]"}, E(10, 200), E(10, 210), B(10, 220, "open"),
        B(10, 230, "inner"), E(9, 300), B(12, 300, "elsewhere"), E(12, 320), B(9, 400, "open"),
    };
    write_hand("nested.pftrace", nested, sizeof nested / sizeof *nested);
    assert_int_equal(same_every_way(path_in("nested.pftrace")), 2);
    /* What goes back to the model: a thread's slices on two tracks, a time
     * that goes back on a track, memory, a kernel. */
    const hev lanes[] = {B(9, 100, "a"), B(11, 120, "b"), E(9, 130), E(11, 140)};
    const hev back[] = {B(9, 100, "a"), E(9, 200), B(9, 150, "b"), E(9, 160)};
    const hev memory[] = {B(9, 100, "a"), {9, PF_TYPE_INSTANT, 120, "[memory]", NULL, -1, NULL}, E(9, 200)};
    const hev kernel[] = {B(9, 100, "a"), E(9, 200), {10, PF_TYPE_SLICE_BEGIN, 120, "k", "kernel", -1, NULL},
                          E(10, 150)};
    struct { const char *name; const hev *ev; size_t n; } model[] = {
        {"lanes.pftrace", lanes, 4}, {"back.pftrace", back, 4}, {"memory.pftrace", memory, 3},
        {"kernel.pftrace", kernel, 4},
    };
    for (size_t k = 0; k < sizeof model / sizeof *model; k++) {
        write_hand(model[k].name, model[k].ev, model[k].n);
        int folded = same_every_way(path_in(model[k].name));
        /* [memory] without Bytes is no memory event: that one folds */
        assert_int_equal(folded, k == 2 ? 2 : 0);
    }
}

/* The reader's fast path for a slice's usual packet and its general loop
 * read the same packets alike: the tables of each shape are the plain
 * shape's, through the model and the fold. */
static void test_packet_shapes_read_alike(void **state)
{
    (void)state;
    const hev ev[] = {
        B(9, 100, "outer"), B(10, 100, "outer"), B(9, 110, "a"), E(9, 150), B(9, 150, "z"), E(9, 150),
        B(9, 160, "a"), E(9, 170), {9, PF_TYPE_SLICE_BEGIN, 180, "mm", NULL, 5, "[[1]]"},
        {9, PF_TYPE_SLICE_END, 190, NULL, NULL, 7, "[[2, 2]]"}, E(9, 200), E(10, 210), B(10, 220, "open"),
    };
    size_t n = sizeof ev / sizeof *ev;
    char *want[2] = {NULL, NULL};
    static const char *const names[] = {"plain.pftrace", "usual.pftrace", "seqfirst.pftrace", "cleared.pftrace"};
    for (int shape = SHAPE_PLAIN; shape <= SHAPE_CLEARED; shape++) {
        write_shaped(names[shape], ev, n, shape);
        assert_int_equal(same_every_way(path_in(names[shape])), 2); /* the fold agrees with the model (2 groupings fold) */
        for (int fold = 0; fold < 2; fold++) {
            opprof_trace *t = NULL;
            assert_int_equal(fold ? opprof_trace_load_table(path_in(names[shape]), 0, &OPTS[0], &t)
                                  : opprof_trace_load(path_in(names[shape]), &t),
                             OPPROF_OK);
            char *got = text_of(t, &OPTS[0], "cpu_time_total");
            opprof_trace_free(t);
            if (shape == SHAPE_PLAIN) {
                want[fold] = got;
                continue;
            }
            if (strcmp(want[fold], got)) fail_msg("%s (%s):\n%s\nplain:\n%s", names[shape], fold ? "fold" : "model", got, want[fold]);
            free(got);
        }
    }
    free(want[0]);
    free(want[1]);
}

/* ---- errors: every truncation and corruption, and --max-events ---- */

static void test_errors_are_the_models(void **state)
{
    (void)state;
    const char *src = path_in("random_0.pftrace"); /* plain packets */
    const char *gz = path_in("random_3.pftrace"); /* a compressed batch */
    write_random("random_0.pftrace", 2, 0);
    write_random("random_3.pftrace", 2, 0);
    const char *files[] = {src, gz};
    int failures = 0;
    for (int k = 0; k < 2; k++) {
        FILE *f = fopen(files[k], "rb");
        assert_non_null(f);
        static unsigned char buf[1 << 20];
        size_t len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        assert_true(len > 0 && len < sizeof buf);
        const char *cut = path_in("cut.pftrace");
        size_t step = len / 300 + 1;
        for (size_t n = 0; n < len; n += step) { /* truncated */
            f = fopen(cut, "wb");
            fwrite(buf, 1, n, f);
            fclose(f);
            failures += same_both_ways(cut, &OPTS[0], 0) < 0;
        }
        for (size_t i = 0; i < len; i += step) { /* one byte changed */
            unsigned char was = buf[i];
            buf[i] ^= (unsigned char)(0x55 + i);
            f = fopen(cut, "wb");
            fwrite(buf, 1, len, f);
            fclose(f);
            buf[i] = was;
            failures += same_both_ways(cut, &OPTS[1], 0) < 0;
        }
        for (uint64_t max = 1; max < 200; max += 7) failures += same_both_ways(files[k], &OPTS[0], max) < 0;
    }
    print_message("%d readings failed, each the same way\n", failures);
    assert_true(failures > 100);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_trace_load_table(path_in("absent.pftrace"), 0, NULL, &t), OPPROF_E_NOT_FOUND);
    assert_null(t);
}

/* ---- the short path of a batch's plain slices (op_pf_fold_run) ---- */

/* The packets pk[0..n) in one zstd batch, as a streamed trace holds its
 * slices: the fold reads those through its short path, the model through
 * the general reader. */
static void write_batch(const char *name, const unsigned char *pk, size_t n)
{
    size_t cap = ZSTD_compressBound(n);
    unsigned char *z = malloc(cap);
    assert_non_null(z);
    size_t zn = ZSTD_compress(z, cap, pk, n, 1);
    assert_false(ZSTD_isError(zn));
    op_pbw b = {0};
    op_pbw_bytes(&b, PF_PKT_ZSTD_COMPRESSED, z, zn);
    FILE *f = fopen(path_in(name), "wb");
    assert_non_null(f);
    frame(f, &b);
    fclose(f);
    op_pbw_free(&b);
    free(z);
}

static size_t read_all(const char *path, unsigned char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    assert_true(n > 0 && n < cap);
    return n;
}

/* The exporter's plain packets in one batch, whole and with every
 * truncation, changed byte and --max-events: the fold gives the model's
 * tables and the model's errors, name iids past a byte and slices on
 * lanes (the general reader's, between the short path's runs) included. */
static void test_batch_short_path(void **state)
{
    (void)state;
    static unsigned char buf[1 << 20];
    int folded = 0, failures = 0;
    for (int round = 0; round < 4; round++) {
        g_many_names = round == 3;
        setenv("OPPROF_PFTRACE_COMPRESS", "0", 1);
        write_random("run_src.pftrace", 1 + round % 3, round == 1);
        unsetenv("OPPROF_PFTRACE_COMPRESS");
        g_many_names = 0;
        size_t len = read_all(path_in("run_src.pftrace"), buf, sizeof buf);
        write_batch("run.pftrace", buf, len);
        folded += same_every_way(path_in("run.pftrace"));
        if (round) continue;
        size_t step = len / 400 + 1;
        for (size_t n = 0; n < len; n += step) { /* cut inside the batch: a frame that holds part of a packet */
            write_batch("run_cut.pftrace", buf, n);
            failures += same_both_ways(path_in("run_cut.pftrace"), &OPTS[0], 0) < 0;
        }
        for (size_t i = 0; i < len; i += step) {
            unsigned char was = buf[i];
            buf[i] ^= (unsigned char)(0x55 + i);
            write_batch("run_cut.pftrace", buf, len);
            buf[i] = was;
            failures += same_both_ways(path_in("run_cut.pftrace"), &OPTS[i % 2], 0) < 0;
        }
        for (uint64_t max = 1; max < 300; max += 5) failures += same_both_ways(path_in("run.pftrace"), &OPTS[0], max) < 0;
    }
    print_message("%d of 16 readings folded; %d readings failed, each the same way\n", folded, failures);
    assert_true(folded >= 6);
    assert_true(failures > 50);
}

/* ---- the shared fixtures and the repository's .pftrace, converted ---- */

static void test_fixtures(void **state)
{
    (void)state;
    static const char *const fixtures[] = {
        "torch-traces/mlp_train_3steps.trace.json",
        "kineto/nccl_data.json.gz",
        "kineto/benchmark_result_2869224_1695835535_trace.json.gz",
        "torch-traces/resnet18_infer_b5.trace.json",
    };
    int seen = 0;
    for (size_t k = 0; k < sizeof fixtures / sizeof *fixtures; k++) {
        char in[600];
        if (!fixture_path(in, sizeof in, fixtures[k])) continue;
        const char *out = path_in("fixture.pftrace");
        if (opprof_trace_convert(in, out, NULL) != OPPROF_OK) { /* a reader's matter, tested elsewhere */
            print_message("%s: %s\n", fixtures[k], opprof_last_error());
            continue;
        }
        same_every_way(out);
        seen++;
    }
    const char *srcdir = getenv("OPPROF_SOURCE_DIR");
    char mlp[600];
    snprintf(mlp, sizeof mlp, "%s/tests/import/pftrace/mlp-train.pftrace", srcdir ? srcdir : ".");
    if (access(mlp, R_OK) == 0) {
        same_every_way(mlp);
        seen++;
    }
    if (!seen) print_message("no fixtures under %s: skipped\n", fixtures_dir());
}

/* ---- a streamed session's trace: sums in bounded memory ---- */


/* Records calls ranges (a loop of outer > mid > 2 x leaf) into a streamed
 * .pftrace, in a child process, so that this one's peak is the reader's. */
static void record_streamed(const char *path, long calls, int shapes_flops)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        opprof_config cfg;
        opprof_config_init(&cfg);
        cfg.stream_trace = path;
        cfg.record_shapes = cfg.with_flops = shapes_flops;
        if (opprof_start(&cfg) != OPPROF_OK) {
            fprintf(stderr, "opprof_start: %s\n", opprof_last_error());
            _exit(1);
        }
        nested_ranges(calls);
        opprof_trace *t = NULL;
        if (opprof_stop(&t) != OPPROF_OK || !opprof_trace_streamed(t)) _exit(1); /* which also links the writer */
        opprof_trace_free(t);
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* A line of /proc/self/status ("VmHWM:", "VmRSS:"), KiB. */
static long status_kib(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, strlen(key))) kib = atol(line + strlen(key));
    if (f) fclose(f);
    return kib;
}

/* Sets this process's peak resident size (VmHWM) to what it holds now, so
 * that what earlier tests held does not hide the reader's peak. */
static int peak_reset(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return -1;
    int ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void test_streamed_small(void **state)
{
    (void)state;
    const char *p = path_in("streamed.pftrace");
    record_streamed(p, 40000, 1);
    assert_int_equal(same_every_way(p), 2);
}

enum { BIG = 3000000 };

static void test_big_trace_bounded_memory(void **state)
{
    (void)state;
    const char *p = path_in("big.pftrace");
    record_streamed(p, BIG, 0);
    assert_int_equal(peak_reset(), 0);
    long before = status_kib("VmRSS:");
    assert_true(status_kib("VmHWM:") - before < 1024);
    double t0 = now_s();
    opprof_trace *t = NULL;
    assert_int_equal(opprof_trace_load_table(p, 0, NULL, &t), OPPROF_OK);
    double dt = now_s() - t0;
    long grew = status_kib("VmHWM:") - before;
    assert_int_equal(opprof_trace_event_count(t), 0);
    assert_int_equal(opprof_trace_aggregated(t), BIG);
    opprof_key_averages *ka = NULL;
    assert_int_equal(opprof_key_averages(t, NULL, &ka), OPPROF_OK);
    assert_int_equal(opprof_key_averages_count(ka), 3);
    opprof_key_averages_free(ka);
    opprof_trace_free(t);
    print_message("%d slices summed in %.2f s (%.1fM slices/s), peak grew %ld KiB (the model: some %ld KiB)\n", BIG,
                  dt, BIG / dt / 1e6, grew, (long)BIG * 40 / 1024);
    /* the model needs 40 bytes a slice (117 MiB here); the fold, its buffers
     * and the inflater's (pftrace_ahead.h), which TSan shadows several
     * times over and gives a thread's state of its own (27 MiB in all). */
#if defined(__SANITIZE_THREAD__)
    assert_true(grew < 48 * 1024);
#else
    assert_true(grew < 16 * 1024);
#endif
}

/* ---- the command: the same output either way ---- */

static char *run(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char *out = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&out, &n);
    char buf[4096];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, p)) > 0) fwrite(buf, 1, k, m);
    fclose(m);
    pclose(p);
    return out;
}

static void test_cli_same_output(void **state)
{
    (void)state;
    const char *bin = getenv("OPPROF_BIN");
    if (!bin || access(bin, X_OK) != 0) {
        print_message("no opprof command (OPPROF_BIN): skipped\n");
        skip();
    }
    const char *p = path_in("cli.pftrace");
    record_streamed(p, 40000, 1);
    static const char *const args[] = {"summary %s", "summary %s --group-by-input-shape --sort count",
                                       "summary %s --format csv", "summary %s --max-events 100",
                                       "diff %s %s", "summary %s.absent"};
    for (size_t k = 0; k < sizeof args / sizeof *args; k++) {
        char a[1400], cmd[2000];
        snprintf(a, sizeof a, args[k], p, p);
        snprintf(cmd, sizeof cmd, "OPPROF_READ_FOLD=0 %s %s 2>&1; echo rc=$?", bin, a);
        char *x = run(cmd);
        snprintf(cmd, sizeof cmd, "%s %s 2>&1; echo rc=$?", bin, a);
        char *y = run(cmd);
        assert_string_equal(x, y);
        free(x);
        free(y);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        /* first: they fork to record, before this process has run anything */
        cmocka_unit_test(test_streamed_small),
        cmocka_unit_test(test_big_trace_bounded_memory),
        cmocka_unit_test(test_cli_same_output),
        cmocka_unit_test(test_exported_traces),
        cmocka_unit_test(test_hand_made),
        cmocka_unit_test(test_packet_shapes_read_alike),
        cmocka_unit_test(test_errors_are_the_models),
        cmocka_unit_test(test_batch_short_path),
        cmocka_unit_test(test_fixtures),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

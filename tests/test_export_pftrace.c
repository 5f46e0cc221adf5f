/* Perfetto's format (.pftrace): the tables of a session written as .pftrace
 * (compressed batches, the default; plain packets; gzip'd) and read back
 * are byte for byte those of the same session written as Chrome JSON and
 * read back; protoc decodes the file with Perfetto's own schema into the
 * begins, ends, interned names and sequence flags opprof means to write,
 * and decodes the packets inflated from each compressed batch alike. The
 * clock snapshots label the wall-clock times as CLOCK_REALTIME and give
 * BOOTTIME beside them, so that Perfetto lines the trace up with a system
 * trace of the machine. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>
#include <zstd.h>

#include "common/pfschema.h"
#include "fixtures.h"
#include "import/pbr.h"
#include "model/model.h"
#include "opprof.h"
#include "sample_session.h"
#include "slurp.h"
#include "tmpdir.h"

TMPDIR_GROUP(g_dir, "/tmp/opprof_pftrace_XXXXXX")

/* Every table a user sees of t: by name and by input shape, sorted by
 * total and by self time, with every row. */
static char *tables(const opprof_trace *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    for (int by_shape = 0; by_shape < 2; by_shape++) {
        opprof_avg_options o = {by_shape, 0, 0};
        opprof_key_averages *ka = NULL;
        assert_int_equal(opprof_key_averages(t, &o, &ka), OPPROF_OK);
        assert_int_equal(opprof_table_write(ka, "cpu_time_total", -1, f), OPPROF_OK);
        assert_int_equal(opprof_table_write(ka, "self_cpu_time_total", -1, f), OPPROF_OK);
        opprof_key_averages_free(ka);
    }
    fclose(f);
    return buf;
}

static unsigned char *read_all(const char *path, size_t *n);

/* Exports t to path; plain: .pftrace packets uncompressed. */
static void export_to(const opprof_trace *t, const char *path, int plain)
{
    if (plain) setenv("OPPROF_PFTRACE_COMPRESS", "0", 1);
    int rc = opprof_export_chrome_trace(t, path);
    unsetenv("OPPROF_PFTRACE_COMPRESS");
    if (rc != OPPROF_OK) fail_msg("%s: %s", path, opprof_last_error());
}

static opprof_trace *write_and_load_as(const opprof_trace *t, const char *name, int plain)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    export_to(t, path, plain);
    opprof_trace *back = NULL;
    if (opprof_trace_load(path, &back) != OPPROF_OK) fail_msg("%s: %s", path, opprof_last_error());
    return back;
}

static opprof_trace *write_and_load(const opprof_trace *t, const char *name)
{
    return write_and_load_as(t, name, 0);
}

/* t written as .json, .pftrace (compressed and plain) and .pftrace.gz: the
 * same tables from all. */
static void same_tables(const opprof_trace *t, const char *stem)
{
    char name[128];
    snprintf(name, sizeof name, "%s.json", stem);
    opprof_trace *j = write_and_load(t, name);
    char *want = tables(j);
    static const char *const ext[] = {"pftrace", "plain.pftrace", "pftrace.gz"};
    for (int k = 0; k < 3; k++) {
        snprintf(name, sizeof name, "%s.%s", stem, ext[k]);
        opprof_trace *p = write_and_load_as(t, name, k == 1);
        char *got = tables(p);
        if (strcmp(want, got) != 0) {
            fprintf(stderr, "JSON:\n%s\n%s:\n%s\n", want, name, got);
            fail_msg("%s: the tables differ from the JSON's", name);
        }
        assert_int_equal(opprof_trace_event_count(p), opprof_trace_event_count(j));
        assert_int_equal(p->nmem, j->nmem);
        assert_int_equal(p->dropped, j->dropped);
        assert_int_equal(p->base_time_ns, j->base_time_ns);
        assert_int_equal(p->options & OP_TRACE_INCOMPLETE, j->options & OP_TRACE_INCOMPLETE);
        for (size_t i = 0; i < p->nev; i++) { /* every time to the nanosecond */
            assert_int_equal(p->ev[i].start_ns, j->ev[i].start_ns);
            assert_int_equal(p->ev[i].dur_ns, j->ev[i].dur_ns);
        }
        free(got);
        opprof_trace_free(p);
    }
    free(want);
    opprof_trace_free(j);
}

/* Shapes, FLOPs, memory, annotations, sub-microsecond times. */
static opprof_trace *live_session(int n)
{
    opprof_trace *t = sample_session(n);
    assert_non_null(t);
    return t;
}

static void test_live_session_tables_match_json(void **state)
{
    (void)state;
    opprof_trace *t = live_session(20);
    same_tables(t, "live");
    opprof_trace_free(t);
}

/* A packet larger than a batch may hold (a 600 KB name, interned in the
 * packet of its first use) goes to the file uncompressed between batches,
 * in order: the file has both kinds and reads back as the JSON does. */
static void test_packet_larger_than_a_batch(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    uint32_t th = (uint32_t)op_trace_thread(t, 7, 7);
    size_t big = 600 * 1000;
    char *name = malloc(big);
    assert_non_null(name);
    for (size_t i = 0; i < big; i++) name[i] = (char)('a' + (i * 7919) % 26);
    uint32_t a = op_trace_intern(t, "a", 1), huge = op_trace_intern(t, name, big);
    free(name);
    for (int i = 0; i < 30; i++) op_trace_add_event(t, th, i == 15 ? huge : a, OPPROF_CAT_CPU_OP, 100 * i, 50);
    t->base_time_ns = 1700000000000000000;
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    same_tables(t, "huge");
    char path[256];
    snprintf(path, sizeof path, "%s/huge.pftrace", g_dir);
    size_t n;
    unsigned char *b = read_all(path, &n);
    op_pbr file = {b, b + n}, pkt;
    op_pbf f, g;
    const char *why = "";
    size_t batches = 0, plain = 0;
    while (op_pbr_next(&file, &f, &why) > 0) {
        pkt = f.sub;
        int z = 0;
        while (op_pbr_next(&pkt, &g, &why) > 0) z |= g.field == PF_PKT_ZSTD_COMPRESSED;
        if (z) batches++;
        else if (f.sub.end - f.sub.p > 480 * 1024) plain++;
        else fail_msg("a small packet outside the batches");
    }
    assert_int_equal(plain, 1);
    assert_true(batches >= 2); /* before and after it */
    free(b);
    opprof_trace_free(t);
}

/* Ranges that overlap without nesting on one thread (possible in imported
 * traces) go on extra tracks and still come back exactly; so do dropped
 * events and an incomplete trace. */
static void test_overlapping_ranges_and_metadata(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    uint32_t th = (uint32_t)op_trace_thread(t, 7, 7), th2 = (uint32_t)op_trace_thread(t, 7, 8);
    uint32_t a = op_trace_intern(t, "a", 1), b = op_trace_intern(t, "b", 1), c = op_trace_intern(t, "c", 1);
    op_trace_add_event(t, th, a, OPPROF_CAT_CPU_OP, 100, 1000);
    op_trace_add_event(t, th, b, OPPROF_CAT_CPU_OP, 500, 1000); /* crosses a's end */
    op_trace_add_event(t, th, c, OPPROF_CAT_USER_ANNOTATION, 600, 0);
    op_trace_add_event(t, th, c, OPPROF_CAT_CPU_OP, 1100, 400); /* starts at a's end */
    op_trace_add_event(t, th2, a, OPPROF_CAT_CPU_OP, 100, 1000);
    t->base_time_ns = 1700000000000000000;
    t->dropped = 42;
    t->options |= OP_TRACE_INCOMPLETE;
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    same_tables(t, "overlap");
    opprof_trace *back = write_and_load(t, "overlap2.pftrace");
    assert_int_equal(back->dropped, 42);
    assert_true(back->options & OP_TRACE_INCOMPLETE);
    assert_int_equal(back->base_time_ns, 1700000000000000100);
    opprof_trace_free(back);
    opprof_trace_free(t);
}

/* Kineto traces with kernels, runtime calls, flows and device time. */
static void test_kineto_fixtures_tables_match_json(void **state)
{
    (void)state;
    static const char *const names[] = {"kineto/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
                                        "kineto/benchmark_result_2869224_1695835535_trace.json.gz",
                                        "kineto/nccl_data.json.gz", "torch-traces/resnet18_infer_b5.trace.json"};
    int any = 0;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char path[1024];
        if (!fixture_path(path, sizeof path, names[i])) continue;
        any = 1;
        opprof_trace *t = NULL;
        if (opprof_trace_load(path, &t) != OPPROF_OK) fail_msg("%s: %s", path, opprof_last_error());
        char stem[32];
        snprintf(stem, sizeof stem, "fixture%zu", i);
        same_tables(t, stem);
        opprof_trace_free(t);
    }
    if (!any) {
        print_message("fixtures not found under %s: skipped\n", fixtures_dir());
        skip();
    }
}

/* Occurrences of what in text, in linear time under every sanitizer:
 * ASan's strstr and TSan's memmem check the whole rest of the text at
 * each call (quadratic on the decoded text of a big file: past 300 s under
 * TSan), while memchr and memcmp check only the bytes they read. */
static size_t count(const char *text, const char *what)
{
    size_t n = 0, k = strlen(what);
    const char *end = text + strlen(text);
    for (const char *p = text; (p = memchr(p, what[0], (size_t)(end - p))); p++) {
        if ((size_t)(end - p) >= k && memcmp(p, what, k) == 0) {
            n++;
            p += k - 1;
        }
    }
    return n;
}

/* The text protoc decodes from path, with Perfetto's schema from the
 * fixtures, saved at txt. */
static char *decode(const char *path, const char *txt)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "protoc -I %s/perfetto --decode=perfetto.protos.Trace perfetto_trace.proto < %s > %s",
             fixtures_dir(), path, txt);
    if (system(cmd) != 0) fail_msg("protoc could not decode %s", path);
    char *text = slurp(txt);
    assert_non_null(text);
    return text;
}

/* What protoc decodes from a session's packets: a begin and an end per
 * event, one sequence per thread that starts by clearing its state, and
 * each name interned once per sequence however often it is used. */
static void check_decoded(const char *text, const opprof_trace *t)
{
    size_t nev = opprof_trace_event_count(t);
    assert_int_equal(count(text, "type: TYPE_SLICE_BEGIN"), nev);
    assert_int_equal(count(text, "type: TYPE_SLICE_END"), nev);
    assert_int_equal(count(text, "name: \"[memory]\""), 1);                  /* interned once */
    assert_int_equal(count(text, "type: TYPE_INSTANT"), t->nmem + 1);        /* + the metadata instant */
    assert_int_equal(count(text, "type: TYPE_COUNTER"), t->nmem);            /* live memory */
    assert_int_equal(count(text, "name: \"aten::mm\""), 1);                  /* 50 uses, interned once */
    assert_int_equal(count(text, "\n    name_iid: "), nev + t->nmem); /* the events', not the annotations' */
    assert_int_equal(count(text, "sequence_flags: 1\n"), t->nthreads);       /* one sequence per thread */
    /* An event's packet names its sequence and sets no flags (put_short in
     * export/pftrace.c): interned ids resolve by the sequence alone. */
    assert_int_equal(count(text, "sequence_flags: 2\n"), 0);
    assert_true(count(text, "trusted_packet_sequence_id: ") >= 2 * nev + 2 * t->nmem);
    assert_int_equal(count(text, "is_incremental: true"), t->nthreads);
    assert_true(count(text, "thread {") == t->nthreads && count(text, "process {") == 1);
    assert_true(count(text, "name: \"Input Dims\"") == 1 && count(text, "name: \"flops\"") == 1);
    assert_int_equal(count(text, "name: \"Total Allocated\""), 2); /* the annotation and the counter track */
}

static void need_protoc(void)
{
    char schema[1024];
    if (!fixture_path(schema, sizeof schema, "perfetto/perfetto_trace.proto")) {
        print_message("%s missing: skipped\n", schema);
        skip();
    }
    if (system("command -v protoc >/dev/null 2>&1") != 0)
        fail_msg("protoc not found: install protobuf-compiler (scripts/deps.sh)");
}

/* protoc, with Perfetto's schema from the fixtures, decodes a file of
 * plain packets into what check_decoded expects: the export of a session's
 * events, or (streamed) the file the same session streamed as it recorded,
 * each slice's begin written before its end was known. */
static void decodes_plain(const char *stem, int streamed)
{
    need_protoc();
    opprof_trace *t = live_session(50);
    char path[256], out[300];
    snprintf(path, sizeof path, "%s/%s.pftrace", g_dir, stem);
    snprintf(out, sizeof out, "%s/%s.txt", g_dir, stem);
    if (streamed) {
        setenv("OPPROF_PFTRACE_COMPRESS", "0", 1);
        opprof_trace *sums = sample_session_to(50, path);
        unsetenv("OPPROF_PFTRACE_COMPRESS");
        assert_non_null(sums);
        assert_int_equal(opprof_trace_streamed(sums), 1);
        opprof_trace_free(sums);
    } else {
        export_to(t, path, 1);
    }
    char *text = decode(path, out);
    assert_int_equal(count(text, "compressed_packets"), 0);
    check_decoded(text, t);
    /* FLOPs, on the begins of an export, on the ends of a stream */
    assert_int_equal(count(text, "name_iid: 4\n      uint_value: "), 50);
    free(text);
    opprof_trace_free(t);
}

static void test_protoc_decodes_with_perfettos_schema(void **state)
{
    (void)state;
    decodes_plain("decode", 0);
}

static void test_protoc_decodes_streamed_trace(void **state)
{
    (void)state;
    decodes_plain("streamed", 1);
}

static unsigned char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)len + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return b;
}

/* The packets of every batch in the file at path (zstd_compressed_packets,
 * or with zlib compressed_packets), decompressed with zstd's or zlib's own
 * library and concatenated (each batch is a Trace message, so the whole is
 * one), into the file inner; returns how many batches there were and the
 * largest packet that holds one. */
static size_t inflate_batches_of(const char *path, const char *inner, size_t *largest, int zlib)
{
    size_t n;
    unsigned char *b = read_all(path, &n);
    FILE *out = fopen(inner, "wb");
    assert_non_null(out);
    op_pbr file = {b, b + n}, pkt;
    op_pbf f, g;
    const char *why = "";
    size_t batches = 0;
    *largest = 0;
    while (op_pbr_next(&file, &f, &why) > 0) {
        assert_int_equal(f.field, PF_TRACE_PACKET);
        pkt = f.sub;
        while (op_pbr_next(&pkt, &g, &why) > 0) {
            if (g.field == (zlib ? PF_PKT_ZSTD_COMPRESSED : PF_PKT_COMPRESSED)) fail_msg("a batch of the other codec");
            if (g.field != (zlib ? PF_PKT_COMPRESSED : PF_PKT_ZSTD_COMPRESSED)) continue;
            batches++;
            size_t whole = (size_t)(f.sub.end - f.sub.p) + 4; /* with the two tags and lengths */
            if (whole > *largest) *largest = whole;
            if (!zlib) { /* one zstd frame, its size in its header */
                unsigned long long size = ZSTD_getFrameContentSize(g.sub.p, (size_t)(g.sub.end - g.sub.p));
                assert_true(size != ZSTD_CONTENTSIZE_UNKNOWN && size != ZSTD_CONTENTSIZE_ERROR && size < (1u << 20));
                void *d = malloc(size ? size : 1);
                assert_non_null(d);
                size_t got = ZSTD_decompress(d, size, g.sub.p, (size_t)(g.sub.end - g.sub.p));
                assert_false(ZSTD_isError(got));
                assert_int_equal(got, size);
                fwrite(d, 1, got, out);
                free(d);
                continue;
            }
            z_stream z;
            memset(&z, 0, sizeof z);
            assert_int_equal(inflateInit(&z), Z_OK); /* a zlib stream, as Perfetto's service writes */
            z.next_in = (Bytef *)g.sub.p;
            z.avail_in = (uInt)(g.sub.end - g.sub.p);
            unsigned char chunk[65536];
            int rc;
            do {
                z.next_out = chunk;
                z.avail_out = sizeof chunk;
                rc = inflate(&z, Z_NO_FLUSH);
                assert_true(rc == Z_OK || rc == Z_STREAM_END);
                fwrite(chunk, 1, sizeof chunk - z.avail_out, out);
            } while (rc != Z_STREAM_END);
            assert_int_equal(z.avail_in, 0);
            inflateEnd(&z);
        }
    }
    assert_true(file.p == file.end);
    fclose(out);
    free(b);
    return batches;
}

static size_t inflate_batches(const char *path, const char *inner, size_t *largest)
{
    return inflate_batches_of(path, inner, largest, 0);
}

/* The default .pftrace: protoc decodes its outer layer (packets holding
 * compressed_packets), and the packets inflated from the batches decode
 * into exactly what the plain file holds. A session large enough for
 * several batches keeps each under Perfetto's 512 KiB, and its tables
 * equal the JSON's. */
static void test_compressed_batches_decode(void **state)
{
    (void)state;
    need_protoc();
    opprof_trace *t = live_session(50);
    char path[256], txt[300], inner[300];
    snprintf(path, sizeof path, "%s/batches.pftrace", g_dir);
    snprintf(txt, sizeof txt, "%s/batches.txt", g_dir);
    snprintf(inner, sizeof inner, "%s/batches.inner", g_dir);
    export_to(t, path, 0);
    char *text = decode(path, txt);
    assert_true(count(text, "zstd_compressed_packets: ") >= 1);
    assert_int_equal(count(text, "TYPE_SLICE_BEGIN"), 0); /* all inside the batches */
    free(text);
    size_t largest;
    assert_int_equal(inflate_batches(path, inner, &largest), 1);
    text = decode(inner, txt);
    check_decoded(text, t);
    free(text);
    opprof_trace_free(t);

    t = live_session(20000);
    same_tables(t, "many");
    snprintf(path, sizeof path, "%s/many.pftrace", g_dir);
    export_to(t, path, 0);
    size_t batches = inflate_batches(path, inner, &largest);
    assert_true(batches >= 2);
    assert_true(largest < 512 * 1024);
    text = decode(inner, txt);
    size_t nev = opprof_trace_event_count(t);
    assert_int_equal(count(text, "type: TYPE_SLICE_BEGIN"), nev);
    assert_int_equal(count(text, "type: TYPE_SLICE_END"), nev);
    free(text);
    /* Smaller on disk than its plain packets. */
    char plain[300];
    snprintf(plain, sizeof plain, "%s/many_plain.pftrace", g_dir);
    export_to(t, plain, 1);
    size_t zn, pn;
    free(read_all(path, &zn));
    free(read_all(plain, &pn));
    assert_true(zn * 4 < pn);
    /* OPPROF_PFTRACE_COMPRESS=zlib: the same packets, batch for batch, in
     * zlib streams (compressed_packets); zstd's file is the smaller. (Not
     * the same bytes: each writer reads the boot clock's offset anew.) */
    char zl[300], zl_inner[300];
    snprintf(zl, sizeof zl, "%s/many_zlib.pftrace", g_dir);
    snprintf(zl_inner, sizeof zl_inner, "%s/many_zlib.inner", g_dir);
    setenv("OPPROF_PFTRACE_COMPRESS", "zlib", 1);
    int rc = opprof_export_chrome_trace(t, zl);
    unsetenv("OPPROF_PFTRACE_COMPRESS");
    assert_int_equal(rc, OPPROF_OK);
    assert_int_equal(inflate_batches_of(zl, zl_inner, &largest, 1), batches);
    assert_true(largest < 512 * 1024);
    text = decode(zl_inner, txt);
    assert_int_equal(count(text, "type: TYPE_SLICE_BEGIN"), nev);
    assert_int_equal(count(text, "type: TYPE_SLICE_END"), nev);
    free(text);
    size_t ln;
    free(read_all(zl, &ln));
    assert_true(zn < ln);
    opprof_trace *back = NULL;
    assert_int_equal(opprof_trace_load(zl, &back), OPPROF_OK);
    assert_int_equal(opprof_trace_event_count(back), nev);
    opprof_trace_free(back);
    opprof_trace_free(t);
}

/* A device trace: its streams are threads of "GPU n" processes, and every
 * launch with a kernel gets a flow to it. */
static void test_device_tracks_and_flows(void **state)
{
    (void)state;
    char path[1024];
    if (!fixture_path(path, sizeof path, "kineto/benchmark_result_2869224_1695835535_trace.json.gz")) {
        print_message("%s missing: skipped\n", path);
        skip();
    }
    opprof_trace *t = NULL;
    if (opprof_trace_load(path, &t) != OPPROF_OK) fail_msg("%s: %s", path, opprof_last_error());
    char out[256], txt[300];
    snprintf(out, sizeof out, "%s/device.pftrace", g_dir);
    snprintf(txt, sizeof txt, "%s/device.txt", g_dir);
    export_to(t, out, 1);
    char *text = decode(out, txt);
    size_t kernels = 0, launches_with_kernel = 0;
    for (size_t i = 0; i < t->nev; i++)
        if (t->ev[i].cat == OPPROF_CAT_KERNEL && (t->ev[i].flags & OP_EV_HAS_CORR)) kernels++;
    for (size_t i = 0; i < t->nev; i++)
        if (op_cat_is_launch(t->ev[i].cat) && (t->ev[i].flags & OP_EV_HAS_CORR)) launches_with_kernel++;
    assert_true(kernels > 0);
    assert_true(count(text, "process_name: \"GPU ") > 0);
    assert_true(count(text, "terminating_flow_ids: ") >= kernels);
    assert_int_equal(count(text, "\n    flow_ids: "), launches_with_kernel);
    free(text);
    opprof_trace_free(t);
}

/* The trace handler writes Perfetto's format when its file name says so. */
static void test_trace_handler_file_name(void **state)
{
    (void)state;
    opprof_trace *t = live_session(3);
    opprof_trace_handler h;
    assert_int_equal(opprof_trace_handler_init(&h, g_dir, NULL, 1), OPPROF_OK);
    snprintf(h.file_name, sizeof h.file_name, "handler.pftrace");
    opprof_trace_handler_ready(t, &h);
    assert_int_equal(opprof_trace_handler_status(&h), OPPROF_OK);
    char want[512];
    snprintf(want, sizeof want, "%s/handler.pftrace.gz", g_dir);
    assert_string_equal(opprof_trace_handler_last_path(&h), want);
    opprof_trace *back = NULL;
    assert_int_equal(opprof_trace_load(want, &back), OPPROF_OK);
    assert_int_equal(opprof_trace_event_count(back), opprof_trace_event_count(t));
    opprof_trace_free(back);
    opprof_trace_free(t);
}

static int64_t clock_ns(clockid_t c)
{
    struct timespec ts;
    assert_int_equal(clock_gettime(c, &ts), 0);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void test_clock_snapshot_names_its_clocks(void **state)
{
    (void)state;
    int64_t base = clock_ns(CLOCK_REALTIME), boot_off = base - clock_ns(CLOCK_BOOTTIME);
    opprof_trace *t = op_trace_new();
    uint32_t th = (uint32_t)op_trace_thread(t, 7, 7);
    uint32_t a = op_trace_intern(t, "a", 1);
    for (int i = 0; i < 5; i++) op_trace_add_event(t, th, a, OPPROF_CAT_CPU_OP, 1000 + 100 * i, 50);
    t->base_time_ns = base;
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    char path[256];
    snprintf(path, sizeof path, "%s/clocks.pftrace", g_dir);
    export_to(t, path, 1);
    size_t n;
    unsigned char *b = read_all(path, &n);
    op_pbr file = {b, b + n};
    op_pbf f, g, c, k;
    const char *why = "";
    int snapshots = 0, realtime_packets = 0;
    while (op_pbr_next(&file, &f, &why) > 0) {
        op_pbr pkt = f.sub;
        while (op_pbr_next(&pkt, &g, &why) > 0) {
            if (g.field == PF_PKT_CLOCK_ID && g.v == PF_CLOCK_REALTIME) realtime_packets++;
            if (g.field != PF_PKT_CLOCK_SNAPSHOT) continue;
            uint64_t real = 0, boottime = 0;
            int have = 0;
            op_pbr cs = g.sub;
            while (op_pbr_next(&cs, &c, &why) > 0) {
                uint64_t id = 0, ts = 0;
                op_pbr clk = c.sub;
                while (op_pbr_next(&clk, &k, &why) > 0) {
                    if (k.field == PF_CLK_ID) id = k.v;
                    if (k.field == PF_CLK_TIMESTAMP) ts = k.v;
                }
                if (id == PF_CLOCK_REALTIME) real = ts, have |= 1;
                if (id == PF_CLOCK_BOOTTIME) boottime = ts, have |= 2;
            }
            assert_int_equal(have, 3);
            assert_int_equal((int64_t)real, base + 1000); /* the first event, on the clock that was read */
            int64_t off = (int64_t)(real - boottime) - boot_off;
            if (off > 1000000000 || off < -1000000000)
                fail_msg("BOOTTIME %llu is not REALTIME %llu less the machine's offset %lld", (unsigned long long)boottime,
                         (unsigned long long)real, (long long)boot_off);
            snapshots++;
        }
    }
    assert_int_equal(snapshots, 1);
    assert_int_equal(realtime_packets, 1); /* the metadata instant, at the base time */
    free(b);
    /* and opprof reads its own times back */
    opprof_trace *back = NULL;
    assert_int_equal(opprof_trace_load(path, &back), OPPROF_OK);
    assert_int_equal(opprof_trace_base_time_ns(back), base + 1000); /* from the first event */
    opprof_trace_free(back);
    opprof_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_live_session_tables_match_json),
        cmocka_unit_test(test_overlapping_ranges_and_metadata),
        cmocka_unit_test(test_packet_larger_than_a_batch),
        cmocka_unit_test(test_kineto_fixtures_tables_match_json),
        cmocka_unit_test(test_protoc_decodes_with_perfettos_schema),
        cmocka_unit_test(test_protoc_decodes_streamed_trace),
        cmocka_unit_test(test_compressed_batches_decode),
        cmocka_unit_test(test_device_tracks_and_flows),
        cmocka_unit_test(test_trace_handler_file_name),
        cmocka_unit_test(test_clock_snapshot_names_its_clocks),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

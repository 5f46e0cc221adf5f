/* Chrome trace export: the text itself (numbers, escapes), and whole traces
 * checked by a strict JSON parser, names with quotes, newlines, control
 * characters and invalid UTF-8 included. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "export/jsonw.h"
#include "model/model.h"
#include "opprof_trace.h"
#include "tmpdir.h"
#include "trace_check.h"

TMPDIR_GROUP(g_dir, "/tmp/opprof_export_test_XXXXXX")

static void path_in(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", g_dir, name);
}

static char *check_or_skip(const char *path)
{
    if (!trace_check_available()) {
        print_message("python3 not found: strict JSON check skipped\n");
        skip();
    }
    char *out = trace_check(path);
    if (!out) fail_msg("%s failed the strict JSON check (see stderr)", path);
    return out;
}

static void assert_contains(const char *hay, const char *needle)
{
    if (!strstr(hay, needle)) fail_msg("expected to find\n  %s\nin\n  %.3000s", needle, hay);
}

/* ---- the text ---- */

static void test_numbers(void **state)
{
    (void)state;
    char b[64];
    static const struct {
        int64_t ns;
        const char *s;
    } us[] = {{0, "0.000"},          {1, "0.001"},        {999, "0.999"},       {1000, "1.000"},
              {1234567, "1234.567"}, {-1, "-0.001"},      {-1500, "-1.500"},    {10, "0.010"},
              {INT64_MAX, "9223372036854775.807"},        {INT64_MIN, "-9223372036854775.808"}};
    for (size_t i = 0; i < sizeof us / sizeof *us; i++) {
        *op_fmt_us3(b, us[i].ns) = '\0';
        assert_string_equal(b, us[i].s);
    }
    static const uint64_t u[] = {0, 9, 10, 99, 100, 1000, 12345, 99999, 100000, 4294967296ull, UINT64_MAX};
    for (size_t i = 0; i < sizeof u / sizeof *u; i++) {
        char want[32];
        snprintf(want, sizeof want, "%llu", (unsigned long long)u[i]);
        *op_fmt_u64(b, u[i]) = '\0';
        assert_string_equal(b, want);
    }
    *op_fmt_i64(b, INT64_MIN) = '\0';
    assert_string_equal(b, "-9223372036854775808");
}

static void escape_is(const char *in, size_t n, const char *want)
{
    char buf[256];
    *op_json_escape(buf, in, n) = '\0';
    if (strcmp(buf, want) != 0) fail_msg("escape gave %s, expected %s", buf, want);
}

static void test_escape(void **state)
{
    (void)state;
    escape_is("plain", 5, "\"plain\"");
    escape_is("a\"b\\c", 5, "\"a\\\"b\\\\c\"");
    escape_is("l1\nl2\r\t\b\f", 9, "\"l1\\nl2\\r\\t\\b\\f\"");
    escape_is("\x01\x1f\x7f", 3, "\"\\u0001\\u001f\\u007f\"");
    escape_is("nul\0x", 5, "\"nul\\u0000x\"");
    escape_is("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14, "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    /* Ill-formed: a lone continuation, a cut sequence, an overlong, a
     * surrogate, a byte never valid, past U+10FFFF. */
    escape_is("a\x80z", 3, "\"a\xef\xbf\xbdz\"");
    escape_is("a\xe2\x82z", 4, "\"a\xef\xbf\xbdz\"");
    escape_is("\xc0\xaf", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\"");
    escape_is("\xed\xa0\x80", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
    escape_is("\xff", 1, "\"\xef\xbf\xbd\"");
    escape_is("\xf4\x90\x80\x80", 4, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
    escape_is("end\xe2\x82", 5, "\"end\xef\xbf\xbd\"");
}

static void test_validators(void **state)
{
    (void)state;
    assert_true(op_json_is_value("[[5, 3, 224, 224], [], [-1]]", 28));
    assert_true(op_json_is_value("[\"float\", \"\", \"c10::Half\"]", 26));
    assert_true(op_json_is_value(" {\"a\": [1.5e3, true, null, \"x\\u00e9\"]} ", 39));
    assert_false(op_json_is_value("[1, 2", 5));
    assert_false(op_json_is_value("['float']", 9));
    assert_false(op_json_is_value("[\"a\nb\"]", 7));
    assert_false(op_json_is_value("[\"\xff\"]", 5));
    assert_false(op_json_is_value("[01]", 4));
    assert_false(op_json_is_value("[1] [2]", 7));
    assert_true(op_json_is_members("\"stream\": 7, \"grid\": [1, 2, 3]", 30));
    assert_false(op_json_is_members("\"stream\": 7,", 12));
    assert_false(op_json_is_members("stream: 7", 9));
}

/* ---- whole traces from a live session ---- */

static int64_t g_now;
static int64_t fake_clock(void *ctx)
{
    (void)ctx;
    return g_now;
}

static uint64_t mm_flops(const opprof_input *in, unsigned n)
{
    return n >= 2 ? 2ull * (uint64_t)in[0].dims[0] * (uint64_t)in[0].dims[1] * (uint64_t)in[1].dims[1] : 0;
}

static const opprof_site site_mm = OPPROF_SITE_INIT("aten::mm", OPPROF_CAT_CPU_OP, mm_flops);

/* Names that break naive writers. */
static const char k_nasty[] = "q\"uote\\back\nnew\ttab\x01" "ctl\xff" "bad caf\xc3\xa9";
static const char k_nasty_json[] = "q\\\"uote\\\\back\\nnew\\ttab\\u0001ctl\\ufffdbad caf\\u00e9";

static opprof_trace *record_session(void)
{
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.record_shapes = 1;
    cfg.with_flops = 1;
    cfg.profile_memory = 1;
    cfg.clock = fake_clock;
    g_now = 5000;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    const opprof_site *nasty = opprof_intern(k_nasty, OPPROF_CAT_USER_ANNOTATION);
    assert_non_null(nasty);
    g_now = 5010;
    opprof_begin(nasty);
    opprof_input in[2] = {{OPPROF_DTYPE_FLOAT, 2, {4, 8}}, {OPPROF_DTYPE_FLOAT, 2, {8, 16}}};
    g_now = 6000;
    opprof_begin_inputs(&site_mm, in, 2);
    g_now = 6500;
    opprof_record_memory((void *)0x1000, 512);
    g_now = 7234;
    assert_int_equal(opprof_end(&site_mm), OPPROF_OK);
    g_now = 7300;
    opprof_record_memory((void *)0x1000, -512);
    g_now = 9999;
    assert_int_equal(opprof_end(nasty), OPPROF_OK);
    g_now = 12000;
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    return t;
}

static void test_live_session_strict(void **state)
{
    (void)state;
    opprof_trace *t = record_session();
    char path[256];
    path_in(path, sizeof path, "live.json");
    assert_int_equal(opprof_export_chrome_trace(t, path), OPPROF_OK);
    char *out = check_or_skip(path);
    /* Times relative to the start, nanosecond exact; the nasty name intact. */
    assert_contains(out, "[\"user_annotation\", \"");
    assert_contains(out, k_nasty_json);
    assert_contains(out, "\", 0.01, 4.989]");
    assert_contains(out, "[\"cpu_op\", \"aten::mm\", 1.0, 1.234]");
    assert_contains(out, "\"Input Dims\": [[4, 8], [8, 16]]");
    assert_contains(out, "\"Input type\": [\"float\", \"float\"]");
    assert_contains(out, "\"flops\": 1024");
    assert_contains(out, "\"Addr\": 4096, \"Bytes\": 512, \"Device Id\": -1, \"Device Type\": 0");
    assert_contains(out, "\"Bytes\": -512");
    assert_contains(out, "\"Total Allocated\": 512");
    assert_contains(out, "\"Total Allocated\": 0");
    assert_contains(out, "\"record_shapes\": 1");
    assert_contains(out, "\"profile_memory\": 1");
    assert_contains(out, "\"droppedEvents\": 0");
    assert_contains(out, "[\"process_name\", ");
    assert_contains(out, "[\"thread_name\", ");
    free(out);

    /* The text itself: ts as Kineto writes it, numeric pid everywhere. */
    FILE *f = fopen(path, "r");
    char text[8192] = {0};
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    assert_true(n > 0);
    assert_contains(text, "\"ts\": 1.000, \"dur\": 1.234");
    assert_contains(text, "\"displayTimeUnit\": \"ms\"");
    assert_contains(text, "\"schemaVersion\": 1");
    assert_null(strstr(text, "\"pid\": \""));
    opprof_trace_free(t);
}

/* The same trace gzip-compressed is the same text, in one gzip member. */
static void test_gzip_same_text(void **state)
{
    (void)state;
    opprof_trace *t = record_session();
    char plain[256], gz[256];
    path_in(plain, sizeof plain, "same.json");
    path_in(gz, sizeof gz, "same.json.gz");
    assert_int_equal(opprof_export_chrome_trace(t, plain), OPPROF_OK);
    assert_int_equal(opprof_export_chrome_trace(t, gz), OPPROF_OK);
    opprof_trace_free(t);
    char *out = check_or_skip(gz);
    free(out);
    static char a[1 << 16], b[1 << 16];
    FILE *f = fopen(plain, "rb");
    size_t na = fread(a, 1, sizeof a, f);
    fclose(f);
    gzFile z = gzopen(gz, "rb");
    assert_non_null(z);
    int nb = gzread(z, b, sizeof b);
    gzclose(z);
    assert_int_equal((size_t)nb, na);
    assert_memory_equal(a, b, na);
    unsigned char magic[2];
    f = fopen(gz, "rb");
    assert_int_equal(fread(magic, 1, 2, f), 2);
    fclose(f);
    assert_int_equal(magic[0], 0x1f);
    assert_int_equal(magic[1], 0x8b);
}

/* ---- traces built directly: device events, imported oddities ---- */

static opprof_trace *build_trace(size_t nev)
{
    opprof_trace *t = op_trace_new();
    int64_t host = op_trace_thread(t, 42, 43);
    int64_t dev = op_trace_thread(t, 0, 7);
    t->threads[dev].device = 0;
    t->threads[host].name = op_trace_intern(t, "main \"thread\"", 13);
    t->threads[dev].pid_name = op_trace_intern(t, "GPU functions", 13);
    uint32_t names[3] = {op_trace_intern(t, "aten::conv2d", 12), op_trace_intern(t, "cudaLaunchKernel", 16),
                         op_trace_intern(t, "volta_sgemm", 11)};
    for (size_t i = 0; i < nev; i++) {
        int64_t s = (int64_t)i * 1000;
        op_event *e = op_trace_add_event(t, (uint32_t)host, names[0], OPPROF_CAT_CPU_OP, s, 900);
        op_evx_add(t, e)->external_id = (int64_t)i + 100;
        e->flags |= OP_EV_HAS_EXT;
        op_evx_add(t, e)->shapes = op_trace_intern(t, "[[1, 3, 224, 224], [64, 3, 7, 7]]", 33);
        op_evx_add(t, e)->types = op_trace_intern(t, "['float', 'float']", 18); /* not JSON: must come out as a string */
        e = op_trace_add_event(t, (uint32_t)host, names[1], OPPROF_CAT_CUDA_RUNTIME, s + 100, 50);
        op_evx_add(t, e)->correlation = (int64_t)i + 1;
        e->flags |= OP_EV_HAS_CORR;
        op_evx_add(t, e)->args = op_trace_intern(t, "\"cbid\": 211", 11);
        e = op_trace_add_event(t, (uint32_t)dev, names[2], OPPROF_CAT_KERNEL, s + 200, 300);
        op_evx_add(t, e)->correlation = (int64_t)i + 1;
        e->flags |= OP_EV_HAS_CORR;
        op_evx_add(t, e)->args = op_trace_intern(t, "\"stream\": 7, \"grid\": [1, 2, 3]", 30);
    }
    uint32_t frames[2] = {op_trace_intern(t, "model.c(10): conv", 17), op_trace_intern(t, "main.c(3): main", 15)};
    op_evx_add(t, &t->ev[0])->stack = op_trace_add_stack(t, frames, 2);
    op_evx_add(t, &t->ev[1])->args = op_trace_intern(t, "broken, \"x\": 1", 14); /* not members: kept as a string */
    t->dropped = 17;
    t->base_time_ns = 1719853884000000000;
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    return t;
}

static void test_built_trace_strict(void **state)
{
    (void)state;
    opprof_trace *t = build_trace(3);
    char path[256];
    path_in(path, sizeof path, "built.json");
    opprof_export_options o;
    opprof_export_options_init(&o);
    o.rank = 3;
    o.world_size = 8;
    assert_int_equal(opprof_export_chrome_trace_ex(t, path, &o), OPPROF_OK);
    char *out = check_or_skip(path);
    assert_contains(out, "\"distributedInfo\": {\"rank\": 3, \"world_size\": 8}");
    assert_contains(out, "\"droppedEvents\": 17");
    assert_contains(out, "\"baseTimeNanoseconds\": 1719853884000000000");
    assert_contains(out, "\"External id\": 100");
    assert_contains(out, "\"correlation\": 1");
    assert_contains(out, "\"Input type\": \"['float', 'float']\"");
    assert_contains(out, "\"Input Dims\": [[1, 3, 224, 224], [64, 3, 7, 7]]");
    assert_contains(out, "\"grid\": [1, 2, 3]");
    assert_contains(out, "\"cbid\": 211");
    assert_contains(out, "\"opprof invalid args\": \"broken, \\\"x\\\": 1\"");
    assert_contains(out, "\"Call stack\": \"model.c(10): conv;main.c(3): main\"");
    assert_contains(out, "[\"kernel\", \"volta_sgemm\"");
    assert_contains(out, "[\"process_name\", 0, 0, \"GPU functions\"]");
    assert_contains(out, "[\"thread_name\", 42, 43, \"main \\\"thread\\\"\"]");
    assert_contains(out, "[\"thread_name\", 0, 7, \"stream 7\"]");
    assert_contains(out, "\"instant\": [\"opprof: 17 events dropped (event cap reached)\"]");
    free(out);
    opprof_trace_free(t);
}

/* Many events: several gzip blocks compressed in parallel, stdout stream. */
static void test_large_gzip_and_stream(void **state)
{
    (void)state;
    opprof_trace *t = build_trace(20000); /* about 8 MB of text */
    char gz[256], plain[256];
    path_in(gz, sizeof gz, "big.json.gz");
    path_in(plain, sizeof plain, "big.json");
    assert_int_equal(opprof_export_chrome_trace(t, gz), OPPROF_OK);
    FILE *f = fopen(plain, "wb");
    assert_int_equal(opprof_export_chrome_trace_stream(t, f, NULL), OPPROF_OK);
    fclose(f);
    opprof_trace_free(t);
    char *a = check_or_skip(gz), *b = trace_check(plain);
    assert_non_null(b);
    assert_string_equal(a, b);
    assert_contains(a, "\"Ev Idx\": 59999");
    free(a);
    free(b);
    struct stat sg, sp;
    assert_int_equal(stat(gz, &sg), 0);
    assert_int_equal(stat(plain, &sp), 0);
    assert_true(sp.st_size > 4 * 1024 * 1024);
    assert_true(sg.st_size * 4 < sp.st_size);
}

static void test_empty_trace(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    char path[256];
    path_in(path, sizeof path, "empty.json.gz");
    assert_int_equal(opprof_export_chrome_trace(t, path), OPPROF_OK);
    char *out = check_or_skip(path);
    assert_contains(out, "\"x\": []");
    free(out);
    opprof_trace_free(t);
}

/* RANK from the environment gives distributedInfo; the default has none. */
static void test_rank_from_environment(void **state)
{
    (void)state;
    opprof_trace *t = build_trace(1);
    char path[256];
    path_in(path, sizeof path, "rank.json");
    unsetenv("RANK");
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("PMI_RANK");
    assert_int_equal(opprof_export_chrome_trace(t, path), OPPROF_OK);
    char *out = check_or_skip(path);
    assert_null(strstr(out, "distributedInfo"));
    free(out);
    setenv("PMI_RANK", "5", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "6", 1);
    assert_int_equal(opprof_export_chrome_trace(t, path), OPPROF_OK);
    out = trace_check(path);
    assert_non_null(out);
    assert_contains(out, "\"distributedInfo\": {\"rank\": 5, \"world_size\": 6}");
    free(out);
    unsetenv("PMI_RANK");
    unsetenv("OMPI_COMM_WORLD_SIZE");
    opprof_trace_free(t);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.' || (e->d_name[1] && e->d_name[1] != '.');
    closedir(d);
    return n;
}

static void test_bad_paths(void **state)
{
    (void)state;
    opprof_trace *t = build_trace(1);
    char path[256];
    path_in(path, sizeof path, "no/such/dir/t.json");
    assert_int_equal(opprof_export_chrome_trace(t, path), OPPROF_E_IO);
    assert_contains(opprof_last_error(), path);
    assert_contains(opprof_last_error(), "No such file or directory");
    path_in(path, sizeof path, "");
    assert_int_equal(opprof_export_chrome_trace(t, path), OPPROF_E_INVAL); /* ends in '/' */
    assert_int_equal(opprof_export_chrome_trace(NULL, "x.json"), OPPROF_E_INVAL);
    assert_int_equal(opprof_export_chrome_trace(t, NULL), OPPROF_E_INVAL);
    /* A directory in the way: the rename fails, nothing is left behind. */
    char sub[256];
    path_in(sub, sizeof sub, "adir");
    mkdir(sub, 0755);
    int before = count_entries(g_dir);
    assert_int_equal(opprof_export_chrome_trace(t, sub), OPPROF_E_IO);
    assert_contains(opprof_last_error(), "rename");
    assert_int_equal(count_entries(g_dir), before);
    opprof_trace_free(t);
}

/* Replacing keeps what writing in place would: a symbolic link still
 * points to the (new) file, the mode stays, and a device is written to, not
 * replaced. */
static void test_links_modes_devices(void **state)
{
    (void)state;
    opprof_trace *t = build_trace(1);
    char real[256], link[256];
    path_in(real, sizeof real, "real.json");
    path_in(link, sizeof link, "link.json");
    FILE *f = fopen(real, "w");
    fclose(f);
    assert_int_equal(chmod(real, 0640), 0);
    assert_int_equal(symlink(real, link), 0);
    assert_int_equal(opprof_export_chrome_trace(t, link), OPPROF_OK);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(stat(real, &st), 0);
    assert_true(st.st_size > 100);
    assert_int_equal(st.st_mode & 0777, 0640);
    assert_int_equal(opprof_export_chrome_trace(t, "/dev/null"), OPPROF_OK);
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    char fifo[256];
    path_in(fifo, sizeof fifo, "fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cat '%s' > '%s.out' &", fifo, fifo);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(opprof_export_chrome_trace(t, fifo), OPPROF_OK);
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    opprof_trace_free(t);
}

/* A name far longer than a buffer, cut into pieces between UTF-8 sequences:
 * Python's own decoder (errors="replace") must read the same characters. */
static void test_long_mixed_name(void **state)
{
    (void)state;
    static const char unit[] = "ab\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xff\xe2\x82\"\n\x01";
    size_t n = 300000, u = sizeof unit - 1;
    char *name = malloc(n);
    for (size_t i = 0; i < n; i++) name[i] = unit[i % u];
    opprof_trace *t = op_trace_new();
    int64_t th = op_trace_thread(t, 1, 1);
    op_trace_add_event(t, (uint32_t)th, op_trace_intern(t, name, n), OPPROF_CAT_CPU_OP, 0, 10);
    op_trace_finish(t);
    char path[256], raw[256];
    path_in(path, sizeof path, "long.json");
    path_in(raw, sizeof raw, "long.raw");
    FILE *f = fopen(raw, "wb");
    fwrite(name, 1, n, f);
    fclose(f);
    assert_int_equal(opprof_export_chrome_trace(t, path), OPPROF_OK);
    if (!trace_check_available()) skip();
    char *out = trace_check_name(path, raw);
    if (!out) fail_msg("the long name did not survive (see stderr)");
    free(out);
    free(name);
    opprof_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_validators),
        cmocka_unit_test(test_live_session_strict),
        cmocka_unit_test(test_gzip_same_text),
        cmocka_unit_test(test_built_trace_strict),
        cmocka_unit_test(test_large_gzip_and_stream),
        cmocka_unit_test(test_empty_trace),
        cmocka_unit_test(test_rank_from_environment),
        cmocka_unit_test(test_bad_paths),
        cmocka_unit_test(test_links_modes_devices),
        cmocka_unit_test(test_long_mixed_name),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* The report file without a browser: its structure, that user strings can
 * never close a data block, that the embedded columns decode back to the
 * trace, and that writing is atomic and fails cleanly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <cmocka.h>

#include "slurp.h"
#include "synth.h"

#define HOSTILE "</script><img src=x onerror=alert(1)><!--<script>alert(2)</script>"

static size_t count_ci(const char *hay, const char *needle)
{
    size_t n = 0, k = strlen(needle);
    for (const char *p = hay; *p; p++)
        if (!strncasecmp(p, needle, k)) n++;
    return n;
}

static void tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "/tmp/opprof-report-test-%d-%s", (int)getpid(), name);
}

static opprof_trace *small_trace(const char *hostile, int device)
{
    synth_opts o = {.events = 3000, .threads = 3, .depth = 4, .names = 12, .memory = 1, .device = device,
                    .steps = 1, .seed = 7, .hostile = hostile};
    opprof_trace *t = synth_trace(&o);
    assert_non_null(t);
    return t;
}

static void test_structure_and_escaping(void **state)
{
    (void)state;
    opprof_trace *t = small_trace(HOSTILE, 1);
    char path[256];
    tmp_path(path, sizeof path, "a.html");
    const char *cfg[] = {"model", HOSTILE, NULL};
    opprof_report_options opt = {.title = HOSTILE, .label_a = HOSTILE, .config = cfg};
    assert_int_equal(opprof_report_write(t, NULL, &opt, path), OPPROF_OK);
    char *html = slurp(path);
    assert_non_null(html);
    assert_int_equal(strncmp(html, "<!DOCTYPE html>", 15), 0);
    assert_non_null(strstr(html, "script-src 'sha256-"));
    /* exactly the page's own elements: meta, 3 blocks per trace, the script */
    assert_int_equal(count_ci(html, "</script"), 5);
    assert_int_equal(count_ci(html, "<script"), 5);
    assert_int_equal(count_ci(html, "<!--"), 1); /* the template's own comment */
    assert_int_equal(count_ci(html, "<img"), 0);
    assert_null(strstr(html, "http://"));
    assert_null(strstr(html, "https://"));
    /* the hostile text is there, escaped */
    assert_non_null(strstr(html, "\\u003c/script\\u003e\\u003cimg src=x onerror=alert(1)\\u003e"));
    free(html);
    unlink(path);
    opprof_trace_free(t);
}

static void test_two_traces(void **state)
{
    (void)state;
    opprof_trace *a = small_trace(NULL, 0), *b = small_trace(NULL, 1);
    char path[256];
    tmp_path(path, sizeof path, "diff.html");
    assert_int_equal(opprof_report_write(a, b, NULL, path), OPPROF_OK);
    char *html = slurp(path);
    assert_int_equal(count_ci(html, "</script"), 8);
    assert_non_null(strstr(html, "id=\"opprof-events-1\""));
    assert_non_null(strstr(html, "\"label\":\"base\""));
    assert_non_null(strstr(html, "\"label\":\"test\""));
    free(html);
    unlink(path);
    opprof_trace_free(a);
    opprof_trace_free(b);
}

/* ---- decoding the embedded columns in C, as the page does ------------- */

static size_t b64_decode(const char *s, size_t n, uint8_t *out)
{
    static int8_t val[256];
    static int init;
    if (!init) {
        const char *al = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        memset(val, -1, sizeof val);
        for (int i = 0; i < 64; i++) val[(unsigned char)al[i]] = (int8_t)i;
        init = 1;
    }
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = val[(unsigned char)s[i]];
        if (v < 0) continue;
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (uint8_t)(acc >> bits);
        }
    }
    return o;
}

static uint64_t uv(const uint8_t **p)
{
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 127) << shift;
        if (b < 128) return v;
    }
}

static int64_t unzig(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Decodes column `name` of the events block into out[n]. */
static void decode_col(const char *html, const uint8_t *bytes, const char *name, size_t n, double *out)
{
    char pat[64];
    snprintf(pat, sizeof pat, "[\"%s\",\"", name);
    const char *c = strstr(html, pat);
    assert_non_null(c);
    char kind[4] = {0};
    size_t off = 0, len = 0;
    const char *k = c + strlen(pat);
    kind[0] = k[0];
    if (k[1] != '"') kind[1] = k[1];
    const char *nums = strchr(strchr(k, ',') + 1, ','); /* kind","type",off,len] */
    assert_int_equal(sscanf(nums, ",%zu,%zu", &off, &len), 2);
    const uint8_t *p = bytes + off;
    memset(out, 0, n * sizeof *out);
    if (kind[0] == 's') {
        uint64_t m = uv(&p);
        size_t at = 0;
        for (uint64_t j = 0; j < m; j++) {
            at += uv(&p);
            uint64_t v = uv(&p);
            out[at++] = kind[1] == 'z' ? (double)unzig(v) : (double)v;
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            uint64_t v = uv(&p);
            out[i] = kind[0] == 'u' ? (double)v : (double)unzig(v); /* z, d and g are zigzag */
        }
    }
    assert_ptr_equal(p, bytes + off + len);
}

/* A multiset of pairs compares by the sum of a mixing hash of each. */
static uint64_t pair_hash(int64_t a, int64_t b)
{
    uint64_t x = (uint64_t)a * 0x9e3779b97f4a7c15ull ^ (uint64_t)b;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    return x ^ (x >> 29);
}

static void test_columns_decode_to_the_trace(void **state)
{
    (void)state;
    opprof_trace *t = small_trace(NULL, 1);
    char path[256];
    tmp_path(path, sizeof path, "cols.html");
    assert_int_equal(opprof_report_write(t, NULL, NULL, path), OPPROF_OK);
    char *html = slurp(path);
    const char *b = strstr(html, "id=\"opprof-events-0\">");
    assert_non_null(b);
    b = strchr(b, '>') + 1;
    const char *e = strstr(b, "</script>");
    uint8_t *bytes = malloc((size_t)(e - b));
    b64_decode(b, (size_t)(e - b), bytes);
    size_t n = t->nev;
    double *dur = malloc(n * sizeof *dur), *flops = malloc(n * sizeof *flops), *cat = malloc(n * sizeof *cat);
    decode_col(html, bytes, "dur", n, dur);
    decode_col(html, bytes, "flops", n, flops);
    decode_col(html, bytes, "cat", n, cat);
    double sd = 0, sf = 0, sc = 0, td = 0, tf = 0, tc = 0;
    for (size_t i = 0; i < n; i++) {
        sd += dur[i];
        sf += flops[i];
        sc += cat[i];
        td += (double)t->ev[i].dur_ns;
        tf += (double)op_evx_of(t, &t->ev[i])->flops;
        tc += t->ev[i].cat;
    }
    assert_true(sd == td && sf == tf && sc == tc);
    /* the level table covers every event, and the starts (gaps after the
     * previous event of each level) give back the model's (start, dur) pairs */
    double *gap = malloc(n * sizeof *gap);
    decode_col(html, bytes, "start", n, gap);
    const char *lv = strstr(html, "\"levels\":[");
    assert_non_null(lv);
    lv += 10;
    size_t covered = 0;
    unsigned th, row, cnt;
    int used;
    uint64_t page_pairs = 0, model_pairs = 0;
    while (sscanf(lv, "%u,%u,%u%n", &th, &row, &cnt, &used) == 3) {
        int64_t prev_end = 0;
        for (size_t p = covered; p < covered + cnt; p++) {
            int64_t start = prev_end + (int64_t)gap[p];
            prev_end = start + (int64_t)dur[p];
            page_pairs += pair_hash(start, (int64_t)dur[p]);
        }
        covered += cnt;
        lv += used;
        if (*lv == ',') lv++;
    }
    assert_int_equal(covered, n);
    for (size_t i = 0; i < n; i++) model_pairs += pair_hash(t->ev[i].start_ns, t->ev[i].dur_ns);
    assert_true(page_pairs == model_pairs);
    free(gap);
    free(dur);
    free(flops);
    free(cat);
    free(bytes);
    free(html);
    unlink(path);
    opprof_trace_free(t);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    opprof_trace *t = small_trace(NULL, 0);
    assert_int_equal(opprof_report_write(NULL, NULL, NULL, "/tmp/x.html"), OPPROF_E_INVAL);
    assert_int_equal(opprof_report_write(t, NULL, NULL, NULL), OPPROF_E_INVAL);
    assert_int_equal(opprof_report_write(t, NULL, NULL, ""), OPPROF_E_INVAL);
    opprof_trace *unfinished = op_trace_new();
    assert_int_equal(opprof_report_write(unfinished, NULL, NULL, "/tmp/x.html"), OPPROF_E_INVAL);
    opprof_trace_free(unfinished);
    assert_int_equal(opprof_report_write(t, NULL, NULL, "/nonexistent-dir/r.html"), OPPROF_E_IO);
    assert_non_null(strstr(opprof_last_error(), "/nonexistent-dir/r.html"));
    opprof_trace_free(t);
}

static void test_empty_trace(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    char path[256];
    tmp_path(path, sizeof path, "empty.html");
    assert_int_equal(opprof_report_write(t, NULL, NULL, path), OPPROF_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    unlink(path);
    opprof_trace_free(t);
}

/* A write that fails half-way (file size limit) leaves the previous report
 * untouched and no temporary file behind. */
static void test_failed_write_keeps_previous_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/opprof-report-atomic-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[512];
    snprintf(path, sizeof path, "%s/r.html", dir);
    FILE *f = fopen(path, "w");
    fputs("previous", f);
    fclose(f);
    opprof_trace *t = small_trace(NULL, 0);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {16384, 16384};
        setrlimit(RLIMIT_FSIZE, &rl);
        int rc = opprof_report_write(t, NULL, NULL, path);
        _exit(rc == OPPROF_E_IO ? 0 : 1);
    }
    int status = -1;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char *html = slurp(path);
    assert_string_equal(html, "previous");
    free(html);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) -eq 1", dir);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    opprof_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_structure_and_escaping),
        cmocka_unit_test(test_two_traces),
        cmocka_unit_test(test_columns_decode_to_the_trace),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_empty_trace),
        cmocka_unit_test(test_failed_write_keeps_previous_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Hostile .pftrace input: the reader fails with "PATH: byte N: reason"
 * (OPPROF_E_PARSE, OPPROF_E_RANGE for a packet over its bound) and never
 * crashes: every truncation and every corrupted byte of a real file, and
 * hand-made packets for each check. `opprof summary` exits 2 on them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/pfschema.h"
#include "export/pbw.h"
#include "model/model.h"
#include "opprof.h"
#include "slurp.h"
#include "tmpdir.h"

static char g_dir[] = "/tmp/opprof_pfhostile_XXXXXX";

static int setup(void **state)
{
    (void)state;
    return tmpdir_make(g_dir);
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove(g_dir);
}

/* A small real file: two threads, shapes, memory, an annotation. */
static unsigned char *real_file(size_t *len)
{
    opprof_trace *t = op_trace_new();
    uint32_t a = (uint32_t)op_trace_thread(t, 3, 3), b = (uint32_t)op_trace_thread(t, 3, 4);
    uint32_t mm = op_trace_intern(t, "aten::mm", 8), ann = op_trace_intern(t, "step", 4);
    op_event *e = op_trace_add_event(t, a, ann, OPPROF_CAT_USER_ANNOTATION, 0, 5000);
    e = op_trace_add_event(t, a, mm, OPPROF_CAT_CPU_OP, 100, 900);
    e->shapes = op_trace_intern(t, "[[2, 3]]", 8);
    e->flops = 12;
    op_trace_add_event(t, b, mm, OPPROF_CAT_CPU_OP, 50, 70);
    op_trace_add_mem(t, a, 200, 0x1000, 64);
    op_trace_add_mem(t, a, 800, 0x1000, -64);
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    char path[256];
    snprintf(path, sizeof path, "%s/real.pftrace", g_dir);
    assert_int_equal(opprof_export_chrome_trace(t, path), OPPROF_OK);
    opprof_trace_free(t);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char *buf = malloc(1 << 16);
    *len = fread(buf, 1, 1 << 16, f);
    fclose(f);
    assert_true(*len > 100 && *len < (1 << 16));
    return buf;
}

/* Loaded from memory: OK, or a parse/range error naming a byte. */
static int load_ok_or_error(const unsigned char *p, size_t n)
{
    opprof_trace *t = NULL;
    int rc = opprof_trace_load_buffer(p, n, &t);
    if (rc == OPPROF_OK) {
        for (size_t i = 0; i < t->nev; i++)
            if (t->ev[i].thread >= t->nthreads || t->ev[i].dur_ns < 0) fail_msg("a bad event from %zu bytes", n);
        opprof_trace_free(t);
        return rc;
    }
    if (rc != OPPROF_E_PARSE && rc != OPPROF_E_RANGE) fail_msg("status %d: %s", rc, opprof_last_error());
    if (strncmp(opprof_last_error(), "<buffer>: byte ", 15) != 0) fail_msg("no offset in: %s", opprof_last_error());
    return rc;
}

static void test_every_truncation_and_corruption(void **state)
{
    (void)state;
    size_t len;
    unsigned char *buf = real_file(&len);
    assert_int_equal(load_ok_or_error(buf, len), OPPROF_OK);
    size_t failed = 0;
    for (size_t n = 2; n < len; n++) failed += load_ok_or_error(buf, n) != OPPROF_OK;
    assert_true(failed > len / 2); /* most cuts fall inside a packet */
    unsigned char *c = malloc(len);
    static const unsigned char flips[] = {0xff, 0x80, 0x01, 0x7f};
    for (size_t i = 0; i < len; i++) {
        for (size_t k = 0; k < sizeof flips; k++) {
            memcpy(c, buf, len);
            c[i] ^= flips[k];
            (void)load_ok_or_error(c, len);
        }
    }
    free(c);
    free(buf);
}

/* A packet around the fields in b: Trace.packet tag, length, body. */
static size_t frame(unsigned char *out, const op_pbw *b)
{
    op_pbw f = {0};
    op_pbw_bytes(&f, PF_TRACE_PACKET, b->out.p, b->out.n);
    memcpy(out, f.out.p, f.out.n);
    size_t n = f.out.n;
    op_pbw_free(&f);
    return n;
}

static void expect(const unsigned char *p, size_t n, int status, const char *msg)
{
    opprof_trace *t = NULL;
    assert_int_equal(opprof_trace_load_buffer(p, n, &t), status);
    assert_null(t);
    if (!strstr(opprof_last_error(), msg)) fail_msg("want \"%s\" in: %s", msg, opprof_last_error());
}

static void test_each_check_names_its_byte(void **state)
{
    (void)state;
    static const unsigned char long_varint[] = {0x0a, 0x0c, 0x08, 0x80, 0x80, 0x80, 0x80, 0x80,
                                                0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    expect(long_varint, sizeof long_varint, OPPROF_E_PARSE, "byte 13: trace packet: a varint is longer than 10 bytes");
    static const unsigned char huge[] = {0x0a, 0x80, 0x80, 0x80, 0x80, 0x04}; /* 1 GiB */
    expect(huge, sizeof huge, OPPROF_E_RANGE, "byte 0: a packet of 1073741824 bytes (at most 268435456");
    static const unsigned char cut[] = {0x0a, 0x05, 0x08, 0x01};
    expect(cut, sizeof cut, OPPROF_E_PARSE, "byte 4: the input ends inside a packet of 5 bytes");
    static const unsigned char group[] = {0x0a, 0x02, 0x0b, 0x00}; /* field 1, wire type 3 */
    expect(group, sizeof group, OPPROF_E_PARSE, "byte 3: trace packet: a field has an unknown or unsupported wire");
    static const unsigned char inner_len[] = {0x0a, 0x03, 0x5a, 0x09, 0x00}; /* track_event claims 9 bytes */
    expect(inner_len, sizeof inner_len, OPPROF_E_PARSE, "a length runs past the end of its message");

    unsigned char buf[256];
    op_pbw b = {0};
    size_t n = 0;
    /* A name iid no packet interned. */
    op_pbw_uint(&b, PF_PKT_SEQUENCE_ID, 2);
    op_pbw_begin(&b, PF_PKT_TRACK_DESCRIPTOR);
    op_pbw_uint(&b, PF_TD_UUID, 9);
    op_pbw_begin(&b, PF_TD_THREAD);
    op_pbw_uint(&b, PF_THD_PID, 1);
    op_pbw_uint(&b, PF_THD_TID, 1);
    op_pbw_end(&b);
    op_pbw_end(&b);
    n += frame(buf + n, &b);
    op_pbw_reset(&b);
    op_pbw_uint(&b, PF_PKT_SEQUENCE_ID, 2);
    op_pbw_uint(&b, PF_PKT_TIMESTAMP, 100);
    op_pbw_begin(&b, PF_PKT_TRACK_EVENT);
    op_pbw_uint(&b, PF_TE_TRACK_UUID, 9);
    op_pbw_uint(&b, PF_TE_TYPE, PF_TYPE_SLICE_BEGIN);
    op_pbw_uint(&b, PF_TE_NAME_IID, 5);
    op_pbw_end(&b);
    size_t ok = n;
    n += frame(buf + n, &b);
    expect(buf, n, OPPROF_E_PARSE, "name iid 5 is not interned on its sequence");
    /* A timestamp on a sequence clock no snapshot defines. */
    op_pbw_reset(&b);
    op_pbw_uint(&b, PF_PKT_SEQUENCE_ID, 2);
    op_pbw_uint(&b, PF_PKT_TIMESTAMP, 100);
    op_pbw_uint(&b, PF_PKT_CLOCK_ID, 70);
    n = ok + frame(buf + ok, &b);
    expect(buf, n, OPPROF_E_PARSE, "a timestamp on clock 70, which no snapshot of its sequence defines");
    /* A time past 2^61 ns, where sums of times could overflow. */
    op_pbw_reset(&b);
    op_pbw_uint(&b, PF_PKT_TIMESTAMP, (uint64_t)1 << 62);
    op_pbw_begin(&b, PF_PKT_TRACK_EVENT);
    op_pbw_uint(&b, PF_TE_TRACK_UUID, 9);
    op_pbw_uint(&b, PF_TE_TYPE, PF_TYPE_SLICE_BEGIN);
    op_pbw_bytes(&b, PF_TE_NAME, "late", 4);
    op_pbw_end(&b);
    n = ok + frame(buf + ok, &b);
    expect(buf, n, OPPROF_E_PARSE, "a timestamp is out of range (more than 2^61 ns");
    /* Inline names and a begin without its end: kept to the trace's end. */
    op_pbw_reset(&b);
    op_pbw_uint(&b, PF_PKT_TIMESTAMP, 100);
    op_pbw_begin(&b, PF_PKT_TRACK_EVENT);
    op_pbw_uint(&b, PF_TE_TRACK_UUID, 9);
    op_pbw_uint(&b, PF_TE_TYPE, PF_TYPE_SLICE_BEGIN);
    op_pbw_bytes(&b, PF_TE_NAME, "open", 4);
    op_pbw_end(&b);
    n = ok + frame(buf + ok, &b);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_trace_load_buffer(buf, n, &t), OPPROF_OK);
    assert_int_equal(t->nev, 1);
    assert_int_equal(t->ev[0].dur_ns, 0);
    opprof_trace_free(t);
    op_pbw_free(&b);
}

/* A file named .pftrace is read as one whatever it holds; the command line
 * says what is wrong and exits 2. */
static void test_named_pftrace_and_the_cli(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/json.pftrace", g_dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"traceEvents\": []}", f);
    fclose(f);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_trace_load(path, &t), OPPROF_E_PARSE);
    char want[400];
    snprintf(want, sizeof want, "%s: byte 0: not a Trace.packet (field 15, wire type 3)", path);
    assert_string_equal(opprof_last_error(), want);
    const char *bin = getenv("OPPROF_BIN");
    if (!bin) return;
    char cmd[1024], err[300];
    snprintf(err, sizeof err, "%s/err.txt", g_dir);
    snprintf(cmd, sizeof cmd, "%s summary %s >/dev/null 2>%s", bin, path, err);
    int rc = system(cmd);
    assert_true(WIFEXITED(rc));
    assert_int_equal(WEXITSTATUS(rc), 2);
    char *text = slurp(err);
    assert_non_null(strstr(text, "byte 0: not a Trace.packet"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_truncation_and_corruption),
        cmocka_unit_test(test_each_check_names_its_byte),
        cmocka_unit_test(test_named_pftrace_and_the_cli),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

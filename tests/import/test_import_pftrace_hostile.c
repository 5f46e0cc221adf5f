/* Hostile .pftrace input: the reader fails with "PATH: byte N: reason"
 * (OPPROF_E_PARSE, OPPROF_E_RANGE for a packet over its bound) and never
 * crashes: every truncation and every corrupted byte of a real file (plain
 * packets and compressed batches), and hand-made packets for each check,
 * compressed_packets among them (a zlib stream cut, corrupt, nested, or
 * inflating past its bound). `opprof summary` exits 2 on them. */
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
#include <zlib.h>

#include "common/pfschema.h"
#include "export/pbw.h"
#include "model/model.h"
#include "opprof.h"
#include "slurp.h"
#include "tmpdir.h"

TMPDIR_GROUP(g_dir, "/tmp/opprof_pfhostile_XXXXXX")

enum { AS_ZSTD, AS_PLAIN, AS_ZLIB };

/* A small real file: two threads, shapes, memory, an annotation; plain
 * packets, or a compressed batch: a zstd frame (the default) or a zlib
 * stream (OPPROF_PFTRACE_COMPRESS=zlib). */
static unsigned char *real_file(size_t *len, int how)
{
    opprof_trace *t = op_trace_new();
    uint32_t a = (uint32_t)op_trace_thread(t, 3, 3), b = (uint32_t)op_trace_thread(t, 3, 4);
    uint32_t mm = op_trace_intern(t, "aten::mm", 8), ann = op_trace_intern(t, "step", 4);
    op_event *e = op_trace_add_event(t, a, ann, OPPROF_CAT_USER_ANNOTATION, 0, 5000);
    e = op_trace_add_event(t, a, mm, OPPROF_CAT_CPU_OP, 100, 900);
    op_evx_add(t, e)->shapes = op_trace_intern(t, "[[2, 3]]", 8);
    op_evx_add(t, e)->flops = 12;
    op_trace_add_event(t, b, mm, OPPROF_CAT_CPU_OP, 50, 70);
    op_trace_add_mem(t, a, 200, 0x1000, 64);
    op_trace_add_mem(t, a, 800, 0x1000, -64);
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    char path[256];
    snprintf(path, sizeof path, "%s/real.pftrace", g_dir);
    if (how != AS_ZSTD) setenv("OPPROF_PFTRACE_COMPRESS", how == AS_PLAIN ? "0" : "zlib", 1);
    assert_int_equal(opprof_export_chrome_trace(t, path), OPPROF_OK);
    unsetenv("OPPROF_PFTRACE_COMPRESS");
    opprof_trace_free(t);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char *buf = malloc(1 << 16);
    *len = fread(buf, 1, 1 << 16, f);
    fclose(f);
    assert_true(*len > 100 && *len < (1 << 16));
    /* after the packet's tag and length: zstd_compressed_packets' tag (field
     * 133, bytes 0xaa 0x08), compressed_packets' (field 50: 0x92 0x03), or neither */
    size_t i = 1;
    while (i < 10 && (buf[i] & 0x80)) i++;
    int zstd = buf[i + 1] == 0xaa && buf[i + 2] == 0x08, zlib = buf[i + 1] == 0x92 && buf[i + 2] == 0x03;
    assert_int_equal(zstd, how == AS_ZSTD);
    assert_int_equal(zlib, how == AS_ZLIB);
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

static void every_truncation_and_corruption(int how)
{
    size_t len;
    unsigned char *buf = real_file(&len, how);
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

static void test_every_truncation_and_corruption(void **state)
{
    (void)state;
    every_truncation_and_corruption(AS_PLAIN);
    every_truncation_and_corruption(AS_ZSTD);
    every_truncation_and_corruption(AS_ZLIB);
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

/* Sequence 2's packet declaring track 9, the thread 1 of process 1. */
static void thread_track(op_pbw *b)
{
    op_pbw_uint(b, PF_PKT_SEQUENCE_ID, 2);
    op_pbw_begin(b, PF_PKT_TRACK_DESCRIPTOR);
    op_pbw_uint(b, PF_TD_UUID, 9);
    op_pbw_begin(b, PF_TD_THREAD);
    op_pbw_uint(b, PF_THD_PID, 1);
    op_pbw_uint(b, PF_THD_TID, 1);
    op_pbw_end(b);
    op_pbw_end(b);
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
    thread_track(&b);
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

/* A packet holding compressed_packets: zlib(body[0..n)), or the given
 * bytes as they are when raw. */
static size_t batch(unsigned char *out, const void *body, size_t n, int raw)
{
    uLong cap = compressBound((uLong)n);
    unsigned char *z = malloc(cap);
    assert_non_null(z);
    uLong zn = cap;
    if (raw) {
        memcpy(z, body, n);
        zn = n;
    } else {
        assert_int_equal(compress2(z, &zn, body, (uLong)n, 6), Z_OK);
    }
    op_pbw b = {0};
    op_pbw_bytes(&b, PF_PKT_COMPRESSED, z, zn);
    size_t k = frame(out, &b);
    op_pbw_free(&b);
    free(z);
    return k;
}

static void test_compressed_packets_checks(void **state)
{
    (void)state;
    static unsigned char buf[1 << 16], inner[256];
    /* A batch of a good packet and a packet whose varint never ends: the
     * file's byte of the compressed bytes (5: after two tags and lengths),
     * then the byte inside the inflated text. */
    op_pbw b = {0};
    op_pbw_uint(&b, PF_PKT_SEQUENCE_ID, 2);
    size_t n = frame(inner, &b);
    static const unsigned char bad[] = {0x0a, 0x04, 0x08, 0x80, 0x80, 0x80};
    memcpy(inner + n, bad, sizeof bad);
    size_t k = batch(buf, inner, n + sizeof bad, 0);
    expect(buf, k, OPPROF_E_PARSE, "byte 5: compressed packets, inflated byte 10: trace packet: a varint is cut off");
    /* A batch in a batch. */
    size_t m = batch(inner, "x", 1, 0);
    k = batch(buf, inner, m, 0);
    expect(buf, k, OPPROF_E_PARSE, "byte 5: compressed packets, inflated byte 5: compressed packets inside compressed packets");
    /* Something else than Trace.packet fields inside. */
    k = batch(buf, "\x10\x01", 2, 0);
    expect(buf, k, OPPROF_E_PARSE, "inflated byte 0: not a Trace.packet (field 2, wire type 0)");
    /* Not zlib; zlib cut short; an empty field. */
    k = batch(buf, "not zlib at all", 15, 1);
    expect(buf, k, OPPROF_E_PARSE, "byte 5: compressed packets are not a valid zlib stream");
    k = batch(buf, inner, n, 0);
    buf[1] -= 3; /* the packet's and the field's lengths: three bytes fewer */
    buf[4] -= 3;
    expect(buf, k - 3, OPPROF_E_PARSE, "byte 5: compressed packets end inside their zlib stream");
    k = batch(buf, "", 0, 1);
    expect(buf, k, OPPROF_E_PARSE, "compressed packets end inside their zlib stream");
    /* A decompression bomb: 65 MiB of zeros (a 65 KiB batch) is refused
     * at the bound, before it is all inflated. */
    size_t big = (size_t)65 << 20;
    unsigned char *zeros = calloc(1, big);
    assert_non_null(zeros);
    unsigned char *bomb = malloc(big / 512);
    assert_non_null(bomb);
    k = batch(bomb, zeros, big, 0);
    free(zeros);
    assert_true(k < big / 512);
    expect(bomb, k, OPPROF_E_RANGE, "compressed packets inflate to more than 67108864 bytes");
    free(bomb);
    /* A good batch reads as its packets would. */
    op_pbw_reset(&b);
    thread_track(&b);
    n = frame(inner, &b);
    op_pbw_reset(&b);
    op_pbw_uint(&b, PF_PKT_TIMESTAMP, 100);
    op_pbw_begin(&b, PF_PKT_TRACK_EVENT);
    op_pbw_uint(&b, PF_TE_TRACK_UUID, 9);
    op_pbw_uint(&b, PF_TE_TYPE, PF_TYPE_SLICE_BEGIN);
    op_pbw_bytes(&b, PF_TE_NAME, "zipped", 6);
    op_pbw_end(&b);
    n += frame(inner + n, &b);
    k = batch(buf, inner, n, 0);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_trace_load_buffer(buf, k, &t), OPPROF_OK);
    assert_int_equal(t->nev, 1);
    assert_string_equal(op_strtab_get(&t->str, t->ev[0].name), "zipped");
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
        cmocka_unit_test(test_compressed_packets_checks),
        cmocka_unit_test(test_named_pftrace_and_the_cli),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

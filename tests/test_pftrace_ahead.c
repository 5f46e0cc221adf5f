/* Compressed batches inflated ahead of the .pftrace reader
 * (import/pftrace_ahead.h): the inflater hands back in order exactly what
 * libdeflate makes of each batch, refuses what it should leave to the
 * reader, and says "not done" for what it cannot inflate; and a reader
 * with it reads every table, and fails on every truncation and corruption
 * of a many-batch trace, with the same status and message as a reader
 * without it (OPPROF_READ_AHEAD=0), having inflated most batches ahead. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libdeflate.h>
#include <zstd.h>

#include "import/pftrace_ahead.h"
#include "model/model.h"
#include "opprof_trace.h"
#include "tmpdir.h"

TMPDIR_GROUP(g_dir, "/tmp/opprof_pfahead_XXXXXX")

/* ---- the inflater alone ---- */

/* n bytes of text that compresses as a trace does (repeats, some noise). */
static unsigned char *text(size_t n, unsigned seed)
{
    unsigned char *b = malloc(n);
    assert_non_null(b);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        b[i] = (unsigned char)("aten::mm aten::add leaf "[i % 24] + ((seed >> 28) == 0));
    }
    return b;
}

/* b[0..n) as a zlib stream (gzip 1: as gzip; 2: as a zstd frame), in *z[0..*zn). */
static void deflate_it(const unsigned char *b, size_t n, int gzip, unsigned char **z, size_t *zn)
{
    if (gzip == 2) {
        size_t cap = ZSTD_compressBound(n);
        *z = malloc(cap);
        assert_non_null(*z);
        *zn = ZSTD_compress(*z, cap, b, n, 1);
        assert_false(ZSTD_isError(*zn));
        return;
    }
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(1);
    assert_non_null(c);
    size_t cap = libdeflate_zlib_compress_bound(c, n) + 64;
    *z = malloc(cap);
    assert_non_null(*z);
    *zn = gzip ? libdeflate_gzip_compress(c, b, n, *z, cap) : libdeflate_zlib_compress(c, b, n, *z, cap);
    assert_true(*zn > 0);
    libdeflate_free_compressor(c);
}

static void test_batches_back_in_order(void **state)
{
    (void)state;
    enum { N = 11 };
    static const size_t sizes[N] = {1, 100, 4096, 300000, 1 << 20, (1 << 20) + 1, 3 << 20, 17, 65536, 500000, 9};
    unsigned char *plain[N], *z[N];
    size_t zn[N];
    for (int i = 0; i < N; i++) {
        plain[i] = text(sizes[i], (unsigned)i);
        deflate_it(plain[i], sizes[i], i % 3, &z[i], &zn[i]); /* zlib, gzip and zstd */
    }
    pf_ahead *a = op_pf_ahead_new();
    assert_non_null(a);
    uint64_t taken = op_pf_ahead_taken();
    int given = 0, took = 0, full = 0;
    while (took < N) { /* give until the ring is full, then take one: every batch passes a full ring */
        while (given < N) {
            int rc = op_pf_ahead_give(a, 1000u * (unsigned)given, given % 3 == 2, z[given], zn[given]);
            assert_true(rc == 0 || rc == 1);
            if (rc == 1) {
                full++;
                break;
            }
            given++;
        }
        assert_int_equal(op_pf_ahead_take(a, 999999, zn[took], &(const unsigned char *){0}, &(size_t){0}), 0);
        const unsigned char *out = NULL;
        size_t n = 0;
        assert_int_equal(op_pf_ahead_take(a, 1000u * (unsigned)took, zn[took], &out, &n), 1);
        assert_int_equal(n, sizes[took]);
        assert_memory_equal(out, plain[took], n);
        op_pf_ahead_release(a);
        took++;
    }
    assert_true(full > 0); /* four slots: eleven batches filled the ring */
    assert_int_equal(op_pf_ahead_taken() - taken, N);
    for (int i = 0; i < N; i++) {
        free(plain[i]);
        free(z[i]);
    }

    /* What the reader must inflate itself: a bad stream (not done), one past
     * 4 MiB inflated (not done), compressed bytes past 4 MiB (not taken). */
    unsigned char *big = text(5 << 20, 7), *bz;
    size_t bzn;
    deflate_it(big, 5 << 20, 0, &bz, &bzn);
    unsigned char bad[64];
    memcpy(bad, "\x78\x01", 2);
    memset(bad + 2, 0xff, sizeof bad - 2);
    assert_int_equal(op_pf_ahead_give(a, 1, 0, bad, sizeof bad), 0);
    assert_int_equal(op_pf_ahead_give(a, 2, 0, bz, bzn), 0);
    unsigned char *huge = text((4 << 20) + 1, 3);
    assert_int_equal(op_pf_ahead_give(a, 3, 0, huge, (4 << 20) + 1), -1);
    unsigned char *zbig; /* a zstd frame past 4 MiB inflated, and one that is not zstd's */
    size_t zbign;
    deflate_it(big, 5 << 20, 2, &zbig, &zbign);
    assert_int_equal(op_pf_ahead_give(a, 6, 1, zbig, zbign), 0);
    assert_int_equal(op_pf_ahead_give(a, 7, 1, bad, sizeof bad), 0);
    const unsigned char *out;
    size_t n;
    assert_int_equal(op_pf_ahead_take(a, 1, sizeof bad, &out, &n), 0);
    assert_int_equal(op_pf_ahead_take(a, 2, bzn, &out, &n), 0);
    assert_int_equal(op_pf_ahead_take(a, 3, (4 << 20) + 1, &out, &n), 0);
    assert_int_equal(op_pf_ahead_take(a, 6, zbign, &out, &n), 0);
    assert_int_equal(op_pf_ahead_take(a, 7, sizeof bad, &out, &n), 0);
    free(zbig);
    op_pf_ahead_release(a); /* nothing held: nothing happens */
    /* and the ring goes on after them */
    unsigned char *one = text(1000, 1), *oz;
    size_t ozn;
    deflate_it(one, 1000, 0, &oz, &ozn);
    assert_int_equal(op_pf_ahead_give(a, 4, 0, oz, ozn), 0);
    assert_int_equal(op_pf_ahead_take(a, 4, ozn, &out, &n), 1);
    assert_int_equal(n, 1000);
    assert_memory_equal(out, one, 1000);
    op_pf_ahead_release(a);
    assert_int_equal(op_pf_ahead_give(a, 5, 0, oz, ozn), 0); /* given, never taken: freed with the inflater */
    op_pf_ahead_free(a);
    op_pf_ahead_free(NULL);
    free(big);
    free(bz);
    free(huge);
    free(one);
    free(oz);
}

/* ---- a reader with it against a reader without ---- */

static const char *path_in(const char *name)
{
    static char buf[2][700];
    static int k;
    k ^= 1;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
    return buf[k];
}

/* A trace of some 18 compressed batches: two threads of nested ranges,
 * some with shapes, exported as a .pftrace. */
static void write_trace(const char *path)
{
    static const char *const names[] = {"aten::mm", "aten::add", "leaf", "aten::relu", "step"};
    opprof_trace *t = op_trace_new();
    assert_non_null(t);
    for (int k = 0; k < 2; k++) {
        uint32_t th = (uint32_t)op_trace_thread(t, 7, 100 + k);
        int64_t at = 1000 + k;
        for (int i = 0; i < 80000; i++) {
            const char *n = names[(i * 7 + k) % 5];
            op_event *e = op_trace_add_event(t, th, op_trace_intern(t, n, strlen(n)), OPPROF_CAT_CPU_OP, at,
                                             20 + i % 13);
            assert_non_null(e);
            if (i % 5 == 0) {
                op_evx_add(t, e)->shapes = op_trace_intern(t, "[[2, 3]]", 8);
                t->options |= OP_TRACE_SHAPES;
            }
            op_trace_add_event(t, th, op_trace_intern(t, "leaf", 4), OPPROF_CAT_CPU_OP, at + 2, 5 + i % 3);
            at += 40;
        }
    }
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    assert_int_equal(opprof_export_chrome_trace(t, path), OPPROF_OK);
    opprof_trace_free(t);
}

/* The table of path folded (opprof_trace_load_table), or its failure, with
 * OPPROF_READ_AHEAD set to ahead. */
static char *read_as(const char *path, const char *ahead)
{
    setenv("OPPROF_READ_AHEAD", ahead, 1);
    opprof_trace *t = NULL;
    char *out = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&out, &n);
    assert_non_null(f);
    static const opprof_avg_options shapes = {1, 0, 0};
    int rc = opprof_trace_load_table(path, 0, &shapes, &t);
    if (rc != OPPROF_OK) {
        fprintf(f, "error %d: %s\n", rc, opprof_last_error());
    } else {
        opprof_key_averages *ka = NULL;
        assert_int_equal(opprof_key_averages(t, &shapes, &ka), OPPROF_OK);
        char *tab = NULL;
        assert_int_equal(opprof_table_string(ka, "cpu_time_total", -1, &tab), OPPROF_OK);
        fputs(tab, f);
        free(tab);
        opprof_key_averages_free(ka);
        opprof_trace_free(t);
    }
    fclose(f);
    unsetenv("OPPROF_READ_AHEAD");
    return out;
}

/* 1 when path reads the same with and without the inflater (-1 when both
 * failed alike); the test fails when they differ. */
static int alike(const char *path)
{
    char *with = read_as(path, "1"), *without = read_as(path, "0");
    if (strcmp(with, without)) fail_msg("%s:\nahead:\n%s\nin place:\n%s", path, with, without);
    int failed = !strncmp(with, "error", 5);
    free(with);
    free(without);
    return failed ? -1 : 1;
}

static void test_reads_alike(void **state)
{
    (void)state;
    const char *src = path_in("many.pftrace");
    write_trace(src);
    FILE *f = fopen(src, "rb");
    assert_non_null(f);
    static unsigned char buf[8 << 20];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_true(len > 0 && len < sizeof buf);

    uint64_t before = op_pf_ahead_taken();
    assert_int_equal(alike(src), 1);
    uint64_t batches = op_pf_ahead_taken() - before;
    print_message("%zu bytes, %llu batches inflated ahead\n", len, (unsigned long long)batches);
    assert_true(batches >= 10); /* the reader without it took none; all but the first few came ahead */

    const char *cut = path_in("cut.pftrace");
    int failures = 0, runs = 0;
    before = op_pf_ahead_taken();
    enum { COPIES = 24 }; /* each read twice: a few seconds under the sanitizers */
    for (int k = 0; k < COPIES; k++) { /* cut at 12 places, one byte changed at 12 more, past the first batch */
        size_t at = len / 8 + (len - len / 8) * (size_t)(k / 2) / (COPIES / 2) + (size_t)k * 37;
        if (at >= len) at = len - 1;
        f = fopen(cut, "wb");
        assert_non_null(f);
        unsigned char was = buf[at];
        if (k % 2) buf[at] ^= 0x5a;
        fwrite(buf, 1, k % 2 ? len : at, f);
        fclose(f);
        buf[at] = was;
        failures += alike(cut) < 0;
        runs++;
    }
    print_message("%d of %d damaged copies failed, each the same way; %llu batches ahead\n", failures, runs,
                  (unsigned long long)(op_pf_ahead_taken() - before));
    assert_true(failures >= COPIES / 2); /* every cut fails, and the changed bytes inside batches */
    assert_true(op_pf_ahead_taken() - before > COPIES); /* and the reads went past their first batches ahead */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batches_back_in_order),
        cmocka_unit_test(test_reads_alike),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

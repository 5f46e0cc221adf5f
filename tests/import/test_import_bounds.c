/* Small hostile inputs cost what their size justifies (issue 25, item 7):
 * times that fit one by one but not together (merge, .pftrace clock
 * snapshots and metadata), a .pftrace of many one-packet sequences, batches
 * and gzip streams that inflate a thousandfold, names of megabytes. Each
 * is refused with a clear error or read in little memory, never overflowing
 * (the ASan/UBSan build checks that) nor taking gigabytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "common/pfschema.h"
#include "export/pbw.h"
#include "model/model.h"
#include "opprof.h"
#include "opprof_trace.h"

#define L61 ((int64_t)1 << 61)

#define expect_error(rc, want, msg) expect_error_at(rc, want, msg, __LINE__)

static void expect_error_at(int rc, int want, const char *msg, int line)
{
    if (rc != want) fail_msg("line %d: status %d, want %d (%s)", line, rc, want, opprof_last_error());
    if (!strstr(opprof_last_error(), msg)) fail_msg("line %d: want \"%s\" in: %s", line, msg, opprof_last_error());
}

static opprof_trace *load_text(const char *text)
{
    opprof_trace *t = NULL;
    int rc = opprof_trace_load_buffer(text, strlen(text), &t);
    if (rc != OPPROF_OK) fail_msg("load: %s", opprof_last_error());
    return t;
}

/* One event at ts_us, a base time and a clock offset, each within 2^61 ns. */
static opprof_trace *rank_trace(int rank, int64_t base, int64_t offset, int64_t ts_us)
{
    char text[600];
    snprintf(text, sizeof text,
             "{\"baseTimeNanoseconds\": %lld, \"distributedInfo\": {\"rank\": %d, \"world_size\": 2, "
             "\"clock_offset_ns\": %lld, \"clock_uncertainty_ns\": 0, \"clock_sync_at_ns\": 0}, \"traceEvents\": "
             "[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 1, \"tid\": 1, \"ts\": %lld, \"dur\": 1}]}",
             (long long)base, rank, (long long)offset, (long long)ts_us);
    return load_text(text);
}

/* Rank 0 late by 3 x 2^61 ns (base, offset and time), rank 1 early by
 * 2^62: 5 x 2^61 apart, past int64 (merge.c overflowed). Refused by merge and report alike;
 * ranks that fit together still merge. */
static void test_merge_times_that_fit_alone_but_not_together(void **state)
{
    (void)state;
    const opprof_trace *tr[2] = {rank_trace(0, L61, L61, L61 / 1000), rank_trace(1, -L61, -L61, 0)};
    opprof_trace *m = (opprof_trace *)1;
    expect_error(opprof_ranks_merge(tr, 2, &m), OPPROF_E_RANGE, "rank 0: its times on rank 0's clock");
    assert_null(m);
    opprof_ranks_report *rep = NULL;
    expect_error(opprof_ranks_report_new(tr, 2, &rep), OPPROF_E_RANGE, "more than 2^62 ns from 0");
    for (int i = 0; i < 2; i++) opprof_trace_free((opprof_trace *)tr[i]);
    /* 2^62 and -2^61: each fits, but not 3 x 2^61 apart */
    tr[0] = rank_trace(0, L61 - 1000000, L61, 0);
    tr[1] = rank_trace(1, -L61, 0, 0);
    expect_error(opprof_ranks_merge(tr, 2, &m), OPPROF_E_RANGE, "rank 1: the ranks' times on rank 0's clock");
    expect_error(opprof_ranks_report_new(tr, 2, &rep), OPPROF_E_RANGE, "span more than 2^61 ns");
    for (int i = 0; i < 2; i++) opprof_trace_free((opprof_trace *)tr[i]);

    tr[0] = rank_trace(0, 1000, 0, 5);
    tr[1] = rank_trace(1, 1000, 2000, 5);
    assert_int_equal(opprof_ranks_merge(tr, 2, &m), OPPROF_OK);
    assert_int_equal(m->nev, 2);
    assert_int_equal(m->ev[0].start_ns, 0);
    assert_int_equal(m->ev[1].start_ns, 2000);
    opprof_trace_free(m);
    for (int i = 0; i < 2; i++) opprof_trace_free((opprof_trace *)tr[i]);
}

/* ---- .pftrace files made here ---- */

static void packet(op_pbw *file, const op_pbw *body)
{
    op_pbw_bytes(file, PF_TRACE_PACKET, body->out.p, body->out.n);
}

static void thread_track(op_pbw *file)
{
    op_pbw b = {0};
    op_pbw_uint(&b, PF_PKT_SEQUENCE_ID, 2);
    op_pbw_begin(&b, PF_PKT_TRACK_DESCRIPTOR);
    op_pbw_uint(&b, PF_TD_UUID, 9);
    op_pbw_begin(&b, PF_TD_THREAD);
    op_pbw_uint(&b, PF_THD_PID, 1);
    op_pbw_uint(&b, PF_THD_TID, 1);
    op_pbw_end(&b);
    op_pbw_end(&b);
    packet(file, &b);
    op_pbw_free(&b);
}

static void slice_begin(op_pbw *file, uint64_t ts, const char *name, size_t n)
{
    op_pbw b = {0};
    op_pbw_uint(&b, PF_PKT_SEQUENCE_ID, 2);
    op_pbw_uint(&b, PF_PKT_TIMESTAMP, ts);
    op_pbw_begin(&b, PF_PKT_TRACK_EVENT);
    op_pbw_uint(&b, PF_TE_TRACK_UUID, 9);
    op_pbw_uint(&b, PF_TE_TYPE, PF_TYPE_SLICE_BEGIN);
    op_pbw_bytes(&b, PF_TE_NAME, name, n);
    op_pbw_end(&b);
    packet(file, &b);
    op_pbw_free(&b);
}

static int load_pb(const op_pbw *file, opprof_trace **t)
{
    *t = NULL;
    return opprof_trace_load_buffer(file->out.p, file->out.n, t);
}

/* opprof's metadata track (uuid 5) and an instant on it carrying one
 * distributedInfo value. */
static void metadata(op_pbw *file, const char *key, int64_t v)
{
    op_pbw b = {0};
    op_pbw_uint(&b, PF_PKT_SEQUENCE_ID, 2);
    op_pbw_begin(&b, PF_PKT_TRACK_DESCRIPTOR);
    op_pbw_uint(&b, PF_TD_UUID, 5);
    op_pbw_bytes(&b, PF_TD_NAME, PF_META_TRACK_NAME, strlen(PF_META_TRACK_NAME));
    op_pbw_end(&b);
    packet(file, &b);
    op_pbw_reset(&b);
    op_pbw_uint(&b, PF_PKT_SEQUENCE_ID, 2);
    op_pbw_uint(&b, PF_PKT_TIMESTAMP, 1000);
    op_pbw_begin(&b, PF_PKT_TRACK_EVENT);
    op_pbw_uint(&b, PF_TE_TRACK_UUID, 5);
    op_pbw_uint(&b, PF_TE_TYPE, PF_TYPE_INSTANT);
    op_pbw_begin(&b, PF_TE_DEBUG_ANNOTATIONS);
    op_pbw_bytes(&b, PF_DA_NAME, key, strlen(key));
    op_pbw_int(&b, PF_DA_INT, v);
    op_pbw_end(&b);
    op_pbw_end(&b);
    packet(file, &b);
    op_pbw_free(&b);
}

/* A clock offset of -6.9e18 ns in a .pftrace's metadata is refused as the
 * JSON reader refuses it, instead of moving a merged rank by 219 years. */
static void test_pftrace_clock_values_are_bounded(void **state)
{
    (void)state;
    static const char *const keys[] = {"clock_offset_ns", "clock_sync_at_ns", "clock_offset_end_ns"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        op_pbw f = {0};
        thread_track(&f);
        slice_begin(&f, 100, "op", 2);
        metadata(&f, keys[k], -6900000000000000000LL);
        opprof_trace *t;
        char want[120];
        snprintf(want, sizeof want, "distributedInfo \"%s\" is out of range", keys[k]);
        expect_error(load_pb(&f, &t), OPPROF_E_PARSE, want);
        op_pbw_reset(&f);
        thread_track(&f);
        slice_begin(&f, 100, "op", 2);
        metadata(&f, keys[k], -L61); /* at the bound: read */
        assert_int_equal(load_pb(&f, &t), OPPROF_OK);
        opprof_trace_free(t);
        op_pbw_free(&f);
    }
}

/* A snapshot of a sequence clock 64 in microseconds at 2^62 us, with the
 * boot clock at 2^63 + 5: both past 2^61 ns. */
static void snapshot(op_pbw *file, uint64_t boot, uint64_t ts, uint64_t unit)
{
    op_pbw b = {0};
    op_pbw_uint(&b, PF_PKT_SEQUENCE_ID, 2);
    op_pbw_begin(&b, PF_PKT_CLOCK_SNAPSHOT);
    op_pbw_begin(&b, PF_CS_CLOCKS);
    op_pbw_uint(&b, PF_CLK_ID, PF_CLOCK_BOOTTIME);
    op_pbw_uint(&b, PF_CLK_TIMESTAMP, boot);
    op_pbw_end(&b);
    op_pbw_begin(&b, PF_CS_CLOCKS);
    op_pbw_uint(&b, PF_CLK_ID, 64);
    op_pbw_uint(&b, PF_CLK_TIMESTAMP, ts);
    op_pbw_uint(&b, PF_CLK_UNIT_NS, unit);
    op_pbw_end(&b);
    op_pbw_end(&b);
    op_pbw_uint(&b, PF_PKT_CLOCK_ID, 64);
    op_pbw_uint(&b, PF_PKT_TIMESTAMP, 1);
    op_pbw_begin(&b, PF_PKT_TRACK_EVENT);
    op_pbw_uint(&b, PF_TE_TRACK_UUID, 9);
    op_pbw_uint(&b, PF_TE_TYPE, PF_TYPE_SLICE_BEGIN);
    op_pbw_bytes(&b, PF_TE_NAME, "op", 2);
    op_pbw_end(&b);
    packet(file, &b);
    op_pbw_free(&b);
}

static void test_pftrace_clock_snapshot_overflow(void **state)
{
    (void)state;
    const struct {
        uint64_t boot, ts, unit;
        const char *want;
    } cases[] = {
        {1000, (uint64_t)1 << 62, 1000, "clock snapshot: clock 64's time is out of range"}, /* ts * unit wraps */
        {((uint64_t)1 << 63) + 5, 10, 1, "clock snapshot: clock 6's time is out of range"}, /* not an int64 */
        {0, (uint64_t)1 << 62, 1, "clock snapshot: clock 64's time is out of range"},     /* 0 - 2^62 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        op_pbw f = {0};
        thread_track(&f);
        snapshot(&f, cases[i].boot, cases[i].ts, cases[i].unit);
        opprof_trace *t;
        expect_error(load_pb(&f, &t), OPPROF_E_PARSE, cases[i].want);
        op_pbw_free(&f);
    }
    op_pbw f = {0};
    thread_track(&f);
    snapshot(&f, 5000, 2, 1000); /* clock 64 at 2 us is boot time 5000 ns: its tick 1 is 4000 */
    opprof_trace *t;
    assert_int_equal(load_pb(&f, &t), OPPROF_OK);
    assert_int_equal(t->nev, 1);
    assert_int_equal(t->base_time_ns, 4000);
    opprof_trace_free(t);
    op_pbw_free(&f);
}

/* packets, zlib-compressed into one compressed_packets packet of file. */
static void batch(op_pbw *file, const void *packets, size_t n)
{
    /* level 9: a repeated packet shrinks about 1000:1, as a crafted file's */
    uLong cap = compressBound((uLong)n), zn = cap;
    unsigned char *z = malloc(cap);
    assert_non_null(z);
    assert_int_equal(compress2(z, &zn, packets, (uLong)n, 9), Z_OK);
    op_pbw b = {0};
    op_pbw_bytes(&b, PF_PKT_COMPRESSED, z, zn);
    packet(file, &b);
    op_pbw_free(&b);
    free(z);
}

/* The peak memory, in MiB, of loading file in a child process; -1 when the
 * load fails there. Not measured under a sanitizer, whose shadow memory
 * would count (0). */
static long load_peak_mib(const op_pbw *file)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    (void)file;
    return 0;
#else
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        opprof_trace *t;
        int rc = load_pb(file, &t);
        if (rc == OPPROF_OK) opprof_trace_free(t);
        _exit(rc == OPPROF_OK ? 0 : 1);
    }
    int st;
    struct rusage ru;
    assert_int_equal(wait4(pid, &st, 0, &ru), pid);
    if (!WIFEXITED(st) || WEXITSTATUS(st)) return -1;
    return ru.ru_maxrss / 1024;
#endif
}

/* 300000 sequences of one packet each (seven bytes, about two compressed)
 * used 2.3 KiB of reader state each, 690 MiB in all; state is made only
 * for a sequence that sets some. Past 65536 sequences with state of their
 * own (defaults here), the file is refused. */
static void test_one_packet_sequences(void **state)
{
    (void)state;
    enum { NSEQ = 300000 };
    op_pbw inner = {0}, one = {0}, f = {0};
    thread_track(&f);
    for (uint64_t k = 0; k < NSEQ; k++) {
        op_pbw_reset(&one);
        op_pbw_uint(&one, PF_PKT_SEQUENCE_ID, 100 + k);
        packet(&inner, &one);
    }
    batch(&f, inner.out.p, inner.out.n);
    slice_begin(&f, 100, "op", 2);
    long mib = load_peak_mib(&f);
    print_message("%d one-packet sequences, %zu bytes: peak %ld MiB\n", NSEQ, f.out.n, mib);
    assert_true(mib >= 0 && mib < 100);
    opprof_trace *t;
    assert_int_equal(load_pb(&f, &t), OPPROF_OK);
    assert_int_equal(t->nev, 1);
    opprof_trace_free(t);

    op_pbw_reset(&inner);
    op_pbw_reset(&f);
    for (uint64_t k = 0; k < 70000; k++) {
        op_pbw_reset(&one);
        op_pbw_uint(&one, PF_PKT_SEQUENCE_ID, 100 + k);
        op_pbw_begin(&one, PF_PKT_DEFAULTS);
        op_pbw_uint(&one, PF_DEF_CLOCK_ID, 64);
        op_pbw_end(&one);
        packet(&inner, &one);
    }
    batch(&f, inner.out.p, inner.out.n);
    expect_error(load_pb(&f, &t), OPPROF_E_RANGE, "more than 65536 packet sequences");
    op_pbw_free(&one);
    op_pbw_free(&inner);
    op_pbw_free(&f);
}

/* Batches of 40 MiB of empty packets, each 40 KiB compressed: the first
 * inflates within the floor, the second past 64 times the bytes read. Twenty
 * 64 MiB ones took 46 s of CPU. */
static void test_pftrace_batches_that_inflate_a_thousandfold(void **state)
{
    (void)state;
    size_t n = (size_t)40 << 20;
    unsigned char *empty = malloc(n);
    assert_non_null(empty);
    for (size_t i = 0; i < n; i += 2) {
        empty[i] = (PF_TRACE_PACKET << 3) | 2;
        empty[i + 1] = 0;
    }
    op_pbw f = {0};
    thread_track(&f);
    batch(&f, empty, n);
    opprof_trace *t;
    assert_int_equal(load_pb(&f, &t), OPPROF_OK); /* one: within the floor */
    opprof_trace_free(t);
    batch(&f, empty, n);
    free(empty);
    expect_error(load_pb(&f, &t), OPPROF_E_RANGE, "compressed packets inflate to more than 64 times the bytes read");
    op_pbw_free(&f);
}

/* gzip of text: the opening, n bytes of fill, the closing. */
static unsigned char *gzip_of(const char *head, int fill, size_t n, const char *tail, size_t *len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_RLE), Z_OK);
    size_t cap = n / 100 + (1 << 20), got = 0;
    unsigned char *gz = malloc(cap);
    static unsigned char chunk[1 << 20];
    memset(chunk, fill, sizeof chunk);
    assert_non_null(gz);
    for (size_t done = 0, part = 0;; part++) {
        const unsigned char *p;
        size_t k;
        int last = 0;
        if (part == 0) {
            p = (const unsigned char *)head;
            k = strlen(head);
        } else if (done < n) {
            p = chunk;
            k = n - done < sizeof chunk ? n - done : sizeof chunk;
            done += k;
        } else {
            p = (const unsigned char *)tail;
            k = strlen(tail);
            last = 1;
        }
        z.next_in = (unsigned char *)p;
        z.avail_in = (uInt)k;
        do {
            z.next_out = gz + got;
            z.avail_out = (uInt)(cap - got);
            int rc = deflate(&z, last ? Z_FINISH : Z_NO_FLUSH);
            assert_true(rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR);
            got = cap - z.avail_out;
            assert_true(got < cap);
        } while (z.avail_in || (last && z.avail_out == 0));
        if (last) break;
    }
    deflateEnd(&z);
    *len = got;
    return gz;
}

/* 100 MiB of white space in 100 KiB of gzip: refused once past 64 MiB and
 * 64 times what was read. */
static void test_gzip_that_inflates_a_thousandfold(void **state)
{
    (void)state;
    size_t len;
    unsigned char *gz = gzip_of("{\"traceEvents\": [", ' ', (size_t)100 << 20, "]}", &len);
    opprof_trace *t = NULL;
    expect_error(opprof_trace_load_buffer(gz, len, &t), OPPROF_E_RANGE,
                 "the gzip stream inflates to more than 64 times the bytes read so far");
    assert_null(t);
    free(gz);
    gz = gzip_of("{\"traceEvents\": [", ' ', (size_t)32 << 20, "]}", &len); /* within the floor */
    assert_int_equal(opprof_trace_load_buffer(gz, len, &t), OPPROF_OK);
    opprof_trace_free(t);
    free(gz);
}

/* A name of 2 MiB, in JSON and in a .pftrace (inline, interned, a
 * thread's): refused, naming the field (a JSON thread name is left out). Ten 200 MiB
 * names in 2 MB of gzip took 4.1 GB; a token past 16 MiB is refused too. */
static void test_names_of_megabytes(void **state)
{
    (void)state;
    size_t n = (size_t)2 << 20;
    char *name = malloc(n + 1);
    assert_non_null(name);
    memset(name, 'a', n);
    name[n] = '\0';
    char *text = malloc(n + 300);
    assert_non_null(text);
    snprintf(text, n + 300, "[{\"ph\": \"X\", \"name\": \"%s\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}]", name);
    opprof_trace *t = NULL;
    expect_error(opprof_trace_load_buffer(text, strlen(text), &t), OPPROF_E_PARSE,
                 "event field \"name\" is longer than 1 MiB");
    snprintf(text, n + 300, "[{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": 1, \"args\": {\"name\": \"%s\"}}]",
             name);
    /* a thread's name only decorates: one too long is left out, as other unusable ones are */
    assert_int_equal(opprof_trace_load_buffer(text, strlen(text), &t), OPPROF_OK);
    assert_int_equal(t->nthreads, 0);
    opprof_trace_free(t);
    /* not a row: its name is never kept, so no error */
    snprintf(text, n + 300, "[{\"ph\": \"s\", \"name\": \"%s\", \"pid\": 1, \"tid\": 1, \"ts\": 1}]", name);
    assert_int_equal(opprof_trace_load_buffer(text, strlen(text), &t), OPPROF_OK);
    opprof_trace_free(t);
    free(text);

    op_pbw f = {0};
    thread_track(&f);
    slice_begin(&f, 100, name, n);
    expect_error(load_pb(&f, &t), OPPROF_E_PARSE, "track event: a name longer than 1 MiB");
    op_pbw_reset(&f);
    op_pbw b = {0};
    op_pbw_uint(&b, PF_PKT_SEQUENCE_ID, 2);
    op_pbw_begin(&b, PF_PKT_INTERNED_DATA);
    op_pbw_begin(&b, PF_ID_EVENT_NAMES);
    op_pbw_uint(&b, PF_IN_IID, 1);
    op_pbw_bytes(&b, PF_IN_NAME, name, n);
    op_pbw_end(&b);
    op_pbw_end(&b);
    packet(&f, &b);
    expect_error(load_pb(&f, &t), OPPROF_E_PARSE, "interned data: an event name longer than 1 MiB");
    op_pbw_reset(&f);
    op_pbw_reset(&b);
    op_pbw_uint(&b, PF_PKT_SEQUENCE_ID, 2);
    op_pbw_begin(&b, PF_PKT_TRACK_DESCRIPTOR);
    op_pbw_uint(&b, PF_TD_UUID, 9);
    op_pbw_begin(&b, PF_TD_THREAD);
    op_pbw_uint(&b, PF_THD_PID, 1);
    op_pbw_bytes(&b, PF_THD_NAME, name, n);
    op_pbw_end(&b);
    op_pbw_end(&b);
    packet(&f, &b);
    expect_error(load_pb(&f, &t), OPPROF_E_PARSE, "thread descriptor: a name longer than 1 MiB");
    op_pbw_free(&b);
    op_pbw_free(&f);
    free(name);

    size_t len;
    unsigned char *gz = gzip_of("[{\"ph\": \"X\", \"name\": \"", 'b', (size_t)200 << 20, "\"}]", &len);
    expect_error(opprof_trace_load_buffer(gz, len, &t), OPPROF_E_RANGE, "a single token longer than 16 MiB");
    free(gz);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_times_that_fit_alone_but_not_together),
        cmocka_unit_test(test_pftrace_clock_values_are_bounded),
        cmocka_unit_test(test_pftrace_clock_snapshot_overflow),
        cmocka_unit_test(test_one_packet_sequences),
        cmocka_unit_test(test_pftrace_batches_that_inflate_a_thousandfold),
        cmocka_unit_test(test_gzip_that_inflates_a_thousandfold),
        cmocka_unit_test(test_names_of_megabytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

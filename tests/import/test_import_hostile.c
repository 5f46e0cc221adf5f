/* Hostile traces the reader accepts, each with its documented behaviour
 * (tests/import/accepted, written by tests/import/malformed/generate.py;
 * the refused ones are in tests/import/malformed with their messages), and a
 * string longer than the reader's 16 MiB bound, made here from a small
 * gzip stream. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>

#include "opprof_trace.h"

static opprof_trace *load(const char *name)
{
    const char *src = getenv("OPPROF_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/import/accepted/%s", src ? src : ".", name);
    opprof_trace *t = NULL;
    if (opprof_trace_load(path, &t) != OPPROF_OK) fail_msg("%s: %s", name, opprof_last_error());
    return t;
}

/* The event named `name` (there is one). */
static opprof_event find(const opprof_trace *t, const char *name)
{
    opprof_event e, found;
    int n = 0;
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_trace_event(t, i, &e);
        if (!strcmp(e.name, name)) found = e, n++;
    }
    if (n != 1) fail_msg("%d events named %s", n, name);
    return found;
}

static void test_negative_duration_is_an_empty_range(void **state)
{
    (void)state;
    opprof_trace *t = load("negative_dur.json");
    assert_int_equal(opprof_trace_event_count(t), 2);
    assert_int_equal(find(t, "a").dur_ns, 0);
    assert_int_equal(find(t, "b").dur_ns, 5000);
    opprof_trace_free(t);
}

static void test_duplicate_keys_last_wins(void **state)
{
    (void)state;
    opprof_trace *t = load("duplicate_keys.json");
    assert_int_equal(opprof_trace_event_count(t), 2);
    opprof_event y = find(t, "y");
    assert_int_equal(y.start_ns, 7000);
    assert_int_equal(y.dur_ns, 3000);
    opprof_trace_free(t);

    t = load("duplicate_args.json"); /* the second "args" replaces the first whole */
    opprof_event a = find(t, "a");
    assert_int_equal(a.flops, 0);
    assert_string_equal(a.input_shapes, "[[1]]");
    opprof_trace_free(t);
}

static void test_odd_times(void **state)
{
    (void)state;
    opprof_trace *t = load("ts_tiny.json");
    assert_int_equal(find(t, "a").start_ns, 0);
    assert_int_equal(opprof_trace_base_time_ns(t), 0);
    opprof_trace_free(t);

    t = load("ts_negative.json"); /* rebased on the earliest: -100 us */
    assert_int_equal(find(t, "a").start_ns, 0);
    assert_int_equal(find(t, "c").start_ns, 100000);
    assert_int_equal(find(t, "b").start_ns, 150000);
    assert_int_equal(opprof_trace_base_time_ns(t), -100000);
    opprof_trace_free(t);

    t = load("ts_5000_fraction_digits.json");
    assert_int_equal(find(t, "a").start_ns, 1000);
    opprof_trace_free(t);
}

static void test_values_the_reader_does_not_use(void **state)
{
    (void)state;
    opprof_trace *t = load("nan_in_unused_fields.json");
    assert_int_equal(opprof_trace_event_count(t), 1);
    opprof_trace_free(t);
    t = load("deep_255_skipped.json");
    assert_int_equal(opprof_trace_event_count(t), 1);
    opprof_trace_free(t);
}

static void test_incomplete_and_dropped_metadata(void **state)
{
    (void)state;
    opprof_trace *t = load("incomplete_dropped.json");
    assert_int_equal(opprof_trace_incomplete(t), 1);
    assert_int_equal(opprof_trace_dropped(t), 12);
    opprof_trace_free(t);
    t = load("incomplete_other_types.json"); /* a string says neither */
    assert_int_equal(opprof_trace_incomplete(t), 0);
    assert_int_equal(opprof_trace_dropped(t), 0);
    opprof_trace_free(t);
}

/* The table of a trace, sorted by self CPU time, all rows. */
static char *table_of(const opprof_trace *t)
{
    opprof_key_averages *ka = NULL;
    assert_int_equal(opprof_key_averages(t, NULL, &ka), OPPROF_OK);
    char *text = NULL;
    assert_int_equal(opprof_table_string(ka, "self_cpu_time_total", -1, &text), OPPROF_OK);
    opprof_key_averages_free(ka);
    return text;
}

/* Five durations of just under 2^61 ns each: valid alone, 2^63 together. The
 * sum stays at INT64_MAX (9223372036.855 s) and the table says it did,
 * where it used to wrap to a negative total (and abort under UBSan). */
static void test_time_sums_saturate_visibly(void **state)
{
    (void)state;
    opprof_trace *t = load("dur_sum_saturates.json");
    opprof_key_averages *ka = NULL;
    assert_int_equal(opprof_key_averages(t, NULL, &ka), OPPROF_OK);
    assert_int_equal(opprof_key_averages_count(ka), 1);
    opprof_avg_row r;
    assert_int_equal(opprof_key_averages_row(ka, 0, &r), OPPROF_OK);
    assert_int_equal(r.count, 5);
    assert_true(r.cpu_time_total_ns == INT64_MAX);
    assert_true(r.self_cpu_time_total_ns == INT64_MAX);
    opprof_key_averages_free(ka);
    char *text = table_of(t);
    if (!strstr(text, "9223372036.855s") || !strstr(text, "Saturated: some sums passed the 64-bit range"))
        fail_msg("table:\n%s", text);
    for (const char *p = text; *p; p++) /* no negative figure: a '-' only in the rules */
        if (*p == '-' && p[1] >= '0' && p[1] <= '9') fail_msg("negative figure in:\n%s", text);
    free(text);
    opprof_trace_free(t);
}

/* Two allocations of INT64_MAX bytes inside one operator: the operator's
 * memory stays at the limit instead of wrapping to -2 b. */
static void test_memory_sums_saturate_visibly(void **state)
{
    (void)state;
    opprof_trace *t = load("memory_bytes_int64_max.json");
    char *text = table_of(t);
    if (!strstr(text, "8589934592.00 Gb") || !strstr(text, "Saturated:") || strstr(text, "-2 b"))
        fail_msg("table:\n%s", text);
    free(text);
    opprof_trace_free(t);
}

/* Zero bytes after a gzip stream are padding, as gzip(1) reads them. */
static void test_gzip_zero_padding_is_ignored(void **state)
{
    (void)state;
    opprof_trace *t = load("gzip_zero_padding.json.gz");
    assert_int_equal(opprof_trace_event_count(t), 1);
    (void)find(t, "padded");
    opprof_trace_free(t);
}

/* '[{"name": "' and 300 MiB of 'a' that never end, gzip'd into well under
 * a megabyte: refused with OPPROF_E_RANGE once the string passes 16 MiB,
 * the most the reader ever holds of one token. */
static void test_string_past_the_token_bound(void **state)
{
    (void)state;
    static unsigned char in[1 << 20];
    memset(in, 'a', sizeof in);
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_RLE), Z_OK);
    size_t cap = 4 << 20, len = 0;
    unsigned char *gz = malloc(cap);
    assert_non_null(gz);
    static const char head[] = "[{\"name\": \"";
    for (int k = -1; k < 300; k++) {
        z.next_in = k < 0 ? (unsigned char *)head : in;
        z.avail_in = k < 0 ? (uInt)strlen(head) : (uInt)sizeof in;
        int flush = k == 299 ? Z_FINISH : Z_NO_FLUSH;
        do {
            z.next_out = gz + len;
            z.avail_out = (uInt)(cap - len);
            int rc = deflate(&z, flush);
            assert_true(rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR);
            len = cap - z.avail_out;
            assert_true(len < cap); /* well under the buffer */
        } while (z.avail_in || (flush == Z_FINISH && z.avail_out == 0));
    }
    deflateEnd(&z);
    print_message("300 MiB string in %zu bytes of gzip\n", len);
    opprof_trace *t = (opprof_trace *)1;
    int rc = opprof_trace_load_buffer(gz, len, &t);
    free(gz);
    assert_int_equal(rc, OPPROF_E_RANGE);
    assert_null(t);
    const char *err = opprof_last_error();
    if (!strstr(err, "<buffer>: byte ") || !strstr(err, "longer than 16 MiB")) fail_msg("detail: %s", err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_negative_duration_is_an_empty_range),
        cmocka_unit_test(test_duplicate_keys_last_wins),
        cmocka_unit_test(test_odd_times),
        cmocka_unit_test(test_values_the_reader_does_not_use),
        cmocka_unit_test(test_incomplete_and_dropped_metadata),
        cmocka_unit_test(test_string_past_the_token_bound),
        cmocka_unit_test(test_time_sums_saturate_visibly),
        cmocka_unit_test(test_memory_sums_saturate_visibly),
        cmocka_unit_test(test_gzip_zero_padding_is_ignored),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

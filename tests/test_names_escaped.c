/* Names are user data (issue 16, item 5): control characters (C0 and C1)
 * and bidi overrides reach tables, CSV and folded stacks escaped, a NUL read from a
 * trace's \u0000 keeps two names apart everywhere and comes back as \u0000 in
 * JSON, and ordinary names are untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "opprof_trace.h"

static const char TRACE[] =
    "[{\"ph\":\"X\",\"name\":\"a\\u0000b\",\"ts\":0,\"dur\":5,\"pid\":1,\"tid\":1},"
    "{\"ph\":\"X\",\"name\":\"a\\u0000c\",\"ts\":10,\"dur\":6,\"pid\":1,\"tid\":1},"
    "{\"ph\":\"X\",\"name\":\"\\u001b[2Jclear\\r\\nforged,row\",\"ts\":20,\"dur\":7,\"pid\":1,\"tid\":1},"
    "{\"ph\":\"X\",\"name\":\"bidi\\u202eevil\\u2066x\",\"ts\":30,\"dur\":8,\"pid\":1,\"tid\":1},"
    "{\"ph\":\"X\",\"name\":\"del\\u007f and \\\\ plain\",\"ts\":40,\"dur\":9,\"pid\":1,\"tid\":1},"
    "{\"ph\":\"X\",\"name\":\"csi\\u009b2Jnel\\u0085,\\u00a0\\u00e9\",\"ts\":50,\"dur\":4,\"pid\":1,\"tid\":1}]";

static opprof_trace *load(void)
{
    opprof_trace *t = NULL;
    if (opprof_trace_load_buffer(TRACE, strlen(TRACE), &t) != OPPROF_OK) fail_msg("%s", opprof_last_error());
    return t;
}

/* What a writer to FILE * wrote, NUL-terminated. */
typedef int (*writer)(const opprof_key_averages *ka, FILE *f);
static char *capture(const opprof_key_averages *ka, writer w)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(w(ka, f), OPPROF_OK);
    fclose(f);
    return buf;
}

static int table_all(const opprof_key_averages *ka, FILE *f)
{
    return opprof_table_write(ka, "self_cpu_time_total", -1, f);
}

static void no_raw_controls(const char *text, int allow_newline)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if ((*p < 0x20 && !(allow_newline && *p == '\n')) || *p == 0x7f)
            fail_msg("raw 0x%02x at %zu in:\n%s", *p, (size_t)((const char *)p - text), text);
        if (p[0] == 0xE2 && (p[1] == 0x80 || p[1] == 0x81) && p[2] >= 0xA6 && p[2] <= 0xAE)
            fail_msg("raw bidi control in:\n%s", text);
        if (p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) fail_msg("raw C1 control in:\n%s", text);
    }
}

static size_t lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

static void test_table_escapes_and_keeps_nul_names_apart(void **state)
{
    (void)state;
    opprof_trace *t = load();
    opprof_key_averages *ka = NULL;
    assert_int_equal(opprof_key_averages(t, NULL, &ka), OPPROF_OK);
    assert_int_equal(opprof_key_averages_count(ka), 6);
    char *text = capture(ka, table_all);
    no_raw_controls(text, 1);
    assert_int_equal(lines(text), 3 + 6 + 2); /* rules and header, 6 rows, rule and total */
    assert_non_null(strstr(text, "a\\x00b"));
    assert_non_null(strstr(text, "a\\x00c"));
    assert_non_null(strstr(text, "\\x1b[2Jclear\\r\\nforged,row"));
    assert_non_null(strstr(text, "bidi\\u202eevil\\u2066x"));
    assert_non_null(strstr(text, "del\\x7f and \\ plain")); /* a backslash stays as it is */
    /* C1 controls escaped; other characters of that block (NBSP) and beyond kept */
    assert_non_null(strstr(text, "csi\\u009b2Jnel\\u0085,\xc2\xa0\xc3\xa9"));
    free(text);

    text = capture(ka, opprof_key_averages_write_csv);
    no_raw_controls(text, 1);
    assert_int_equal(lines(text), 1 + 6);
    assert_non_null(strstr(text, "\n\"csi\\u009b2Jnel\\u0085,\xc2\xa0\xc3\xa9\",1,"));
    assert_non_null(strstr(text, "\n\"\\x1b[2Jclear\\r\\nforged,row\",1,"));
    assert_non_null(strstr(text, "\na\\x00b,1,"));
    free(text);

    text = capture(ka, opprof_key_averages_write_json);
    assert_non_null(strstr(text, "\"a\\u0000b\""));
    assert_non_null(strstr(text, "\"a\\u0000c\""));
    assert_non_null(strstr(text, "\"\\u001b[2Jclear\\u000d\\nforged,row\""));
    free(text);
    opprof_key_averages_free(ka);
    opprof_trace_free(t);
}

/* The Chrome trace writes the NUL back as \u0000, so a round trip keeps the
 * two names apart. */
static void test_trace_round_trip_keeps_nul(void **state)
{
    (void)state;
    opprof_trace *t = load();
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(opprof_export_chrome_trace_stream(t, f, NULL), OPPROF_OK);
    fclose(f);
    assert_non_null(strstr(buf, "\"a\\u0000b\""));
    opprof_trace *back = NULL;
    assert_int_equal(opprof_trace_load_buffer(buf, len, &back), OPPROF_OK);
    opprof_key_averages *ka = NULL;
    assert_int_equal(opprof_key_averages(back, NULL, &ka), OPPROF_OK);
    assert_int_equal(opprof_key_averages_count(ka), 6);
    opprof_key_averages_free(ka);
    opprof_trace_free(back);
    opprof_trace_free(t);
    free(buf);
}

static void test_escape_name_contract(void **state)
{
    (void)state;
    char out[16];
    assert_int_equal(opprof_escape_name("plain name", out, sizeof out), 10);
    assert_string_equal(out, "plain name");
    assert_int_equal(opprof_escape_name("a\x1b", out, sizeof out), 5);
    assert_string_equal(out, "a\\x1b");
    /* cut between characters: never half an escape or half a UTF-8 sequence */
    assert_int_equal(opprof_escape_name("\x01\x02\x03\x04", out, 10), 16);
    assert_string_equal(out, "\\x01\\x02");
    assert_int_equal(opprof_escape_name("\xc3\xa9\xc3\xa9", out, 4), 4);
    assert_string_equal(out, "\xc3\xa9");
    assert_int_equal(opprof_escape_name("x", NULL, 0), 1);
    assert_int_equal(opprof_escape_name("\xc2\x9b[2J", out, sizeof out), 9);
    assert_string_equal(out, "\\u009b[2J");
    assert_int_equal(opprof_escape_name("\xc2\x80\xc2\x9f\xc2\xa0", out, sizeof out), 14);
    assert_string_equal(out, "\\u0080\\u009f\xc2\xa0");
}

static void test_folded_stacks_stay_one_line_each(void **state)
{
    (void)state;
    opprof_trace *t = load();
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(opprof_write_stacks(t, f, "self_cpu_time_total", 0), OPPROF_OK);
    fclose(f);
    no_raw_controls(buf, 1);
    free(buf);
    opprof_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_escapes_and_keeps_nul_names_apart),
        cmocka_unit_test(test_trace_round_trip_keeps_nul),
        cmocka_unit_test(test_escape_name_contract),
        cmocka_unit_test(test_folded_stacks_stay_one_line_each),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

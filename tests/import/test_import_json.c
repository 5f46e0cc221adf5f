/* The streaming JSON pull parser: tokens, escapes, UTF-8, numbers, nesting,
 * error offsets, and the same result wherever the input is cut into reads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "import/json.h"
#include "import/number.h"
#include "import/source.h"

/* The token stream of doc as text ("{ K:a S:b N:1 }"), or "ERR@off:msg". */
static void tokens(const char *doc, size_t len, size_t max_read, size_t chunk, char *out, size_t cap)
{
    op_source *src;
    assert_int_equal(op_source_open_memory(doc, len, max_read, &src), 0);
    op_json j;
    assert_int_equal(op_json_init(&j, src, chunk), 0);
    size_t n = 0;
    out[0] = '\0';
    for (;;) {
        op_jtok t = op_json_next(&j);
        char one[512];
        switch (t) {
        case OP_JT_ERROR: snprintf(one, sizeof one, "ERR@%llu:%s", (unsigned long long)j.err_off, j.err); break;
        case OP_JT_EOF: snprintf(one, sizeof one, "EOF"); break;
        case OP_JT_OBJ_BEGIN: snprintf(one, sizeof one, "{ "); break;
        case OP_JT_OBJ_END: snprintf(one, sizeof one, "} "); break;
        case OP_JT_ARR_BEGIN: snprintf(one, sizeof one, "[ "); break;
        case OP_JT_ARR_END: snprintf(one, sizeof one, "] "); break;
        case OP_JT_KEY: snprintf(one, sizeof one, "K:%.*s ", (int)j.n, j.s); break;
        case OP_JT_STRING: snprintf(one, sizeof one, "S:%.*s ", (int)j.n, j.s); break;
        case OP_JT_NUMBER: snprintf(one, sizeof one, "N:%.*s ", (int)j.n, j.s); break;
        case OP_JT_TRUE: snprintf(one, sizeof one, "T "); break;
        case OP_JT_FALSE: snprintf(one, sizeof one, "F "); break;
        case OP_JT_NULL: snprintf(one, sizeof one, "null "); break;
        }
        size_t k = strlen(one);
        if (n + k + 1 < cap) {
            memcpy(out + n, one, k + 1);
            n += k;
        }
        if (t == OP_JT_ERROR || t == OP_JT_EOF) break;
    }
    op_json_free(&j);
    op_source_close(src);
}

/* Parses doc with many read sizes and buffer sizes; all must agree. */
static void expect(const char *doc, size_t len, const char *want)
{
    static char got[1 << 16], first[1 << 16];
    static const size_t reads[] = {0, 1, 2, 3, 5, 7, 64};
    static const size_t chunks[] = {16, 17, 64, 4096};
    for (size_t r = 0; r < sizeof reads / sizeof reads[0]; r++)
        for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
            tokens(doc, len, reads[r], chunks[c], got, sizeof got);
            if (r == 0 && c == 0) {
                strcpy(first, got);
                if (strcmp(got, want) != 0) fail_msg("doc %.60s\n got  %s\n want %s", doc, got, want);
            } else if (strcmp(got, first) != 0) {
                fail_msg("read %zu chunk %zu differs:\n %s\n %s", reads[r], chunks[c], got, first);
            }
        }
}

#define EXPECT(lit, want) expect((lit), sizeof(lit) - 1, (want))

static void test_structure(void **state)
{
    (void)state;
    EXPECT("[]", "[ ] EOF");
    EXPECT(" {\"a\" : [1, -2.5e3, true, false, null, \"x\"], \"b\":{}}\n",
           "{ K:a [ N:1 N:-2.5e3 T F null S:x ] K:b { } } EOF");
    EXPECT("\xef\xbb\xbf[1]", "[ N:1 ] EOF"); /* a byte order mark is skipped */
    EXPECT("0", "N:0 EOF");
    EXPECT("\"top\"", "S:top EOF");
}

static void test_structure_errors(void **state)
{
    (void)state;
    EXPECT("", "ERR@0:empty input: no JSON value");
    EXPECT("  \n", "ERR@3:empty input: no JSON value");
    EXPECT("[", "[ ERR@1:unexpected end of input (truncated?)");
    EXPECT("[1,]", "[ N:1 ERR@3:unexpected ']', expected a value");
    EXPECT("{\"a\" 1}", "{ K:a ERR@5:unexpected '1', expected ':' after a member name");
    EXPECT("{1:2}", "{ ERR@1:unexpected '1', expected a member name in quotes");
    EXPECT("{\"a\":1,}", "{ K:a N:1 ERR@7:unexpected '}', expected a member name in quotes");
    EXPECT("[1 2]", "[ N:1 ERR@3:unexpected '2', expected ',' or ']'");
    EXPECT("[1}", "[ N:1 ERR@2:unexpected '}', expected ',' or ']'");
    EXPECT("[] x", "[ ] ERR@3:unexpected 'x', expected the end of the input after the JSON value");
    EXPECT("[]]", "[ ] ERR@2:unexpected ']', expected the end of the input after the JSON value");
    EXPECT("[NaN]", "[ ERR@1:unexpected 'N', expected a value");
    EXPECT("[Infinity]", "[ ERR@1:unexpected 'I', expected a value");
    EXPECT("[tru]", "[ ERR@1:invalid literal (expected true, false or null)");
    EXPECT("[nul", "[ ERR@1:invalid literal (expected true, false or null)");
    EXPECT("[\x01]", "[ ERR@1:unexpected byte 0x01, expected a value");
    expect("[\0]", 3, "[ ERR@1:unexpected byte 0x00, expected a value");
}

static void test_numbers(void **state)
{
    (void)state;
    EXPECT("[0, -0, 1.5, 1e5, 1E+5, 1e-5, -12.34e56]", "[ N:0 N:-0 N:1.5 N:1e5 N:1E+5 N:1e-5 N:-12.34e56 ] EOF");
    EXPECT("[01]", "[ ERR@1:invalid number '01'");
    EXPECT("[1.]", "[ ERR@1:invalid number '1.'");
    EXPECT("[.5]", "[ ERR@1:unexpected '.', expected a value");
    EXPECT("[-]", "[ ERR@1:invalid number '-'");
    EXPECT("[1e+]", "[ ERR@1:invalid number '1e+'");
    EXPECT("[+1]", "[ ERR@1:unexpected '+', expected a value");
    EXPECT("[1.2.3]", "[ ERR@1:invalid number '1.2.3'");
}

static void test_strings(void **state)
{
    (void)state;
    EXPECT("[\"a\\\"b\\\\c\\/d\\n\"]", "[ S:a\"b\\c/d\n ] EOF");
    EXPECT("[\"\\u00e9\\u20ac\"]", "[ S:\xc3\xa9\xe2\x82\xac ] EOF");
    EXPECT("[\"\\ud83d\\ude00\"]", "[ S:\xf0\x9f\x98\x80 ] EOF");
    EXPECT("[\"caf\xc3\xa9 \xf0\x9f\x98\x80\"]", "[ S:caf\xc3\xa9 \xf0\x9f\x98\x80 ] EOF");
    EXPECT("[\"abc", "[ ERR@1:unterminated string");
    EXPECT("[\"a\\q\"]", "[ ERR@3:invalid escape in a string");
    EXPECT("[\"\\u12G4\"]", "[ ERR@2:invalid \\u escape in a string");
    EXPECT("[\"\\ud800\"]", "[ ERR@2:lone UTF-16 surrogate in a string");
    EXPECT("[\"\\udc00\"]", "[ ERR@2:lone UTF-16 surrogate in a string");
    EXPECT("[\"\\ud800\\u0041\"]", "[ ERR@2:lone UTF-16 surrogate in a string");
    EXPECT("[\"a\tb\"]", "[ ERR@3:control character 0x09 in a string");
    EXPECT("[\"\xff\"]", "[ ERR@2:invalid UTF-8 in a string");
    EXPECT("[\"\xc0\x80\"]", "[ ERR@2:invalid UTF-8 in a string");     /* overlong */
    EXPECT("[\"\xed\xa0\x80\"]", "[ ERR@2:invalid UTF-8 in a string"); /* a surrogate */
    EXPECT("[\"\xf4\x90\x80\x80\"]", "[ ERR@2:invalid UTF-8 in a string"); /* above U+10FFFF */
    EXPECT("[\"\xe2\x82\"]", "[ ERR@2:invalid UTF-8 in a string");     /* cut short */
    EXPECT("[\"\xe2\x82", "[ ERR@2:invalid UTF-8 in a string");
}

static void test_depth(void **state)
{
    (void)state;
    char doc[2 * OP_JSON_MAX_DEPTH + 8], want[8 * OP_JSON_MAX_DEPTH];
    size_t n = 0, w = 0;
    for (int i = 0; i < OP_JSON_MAX_DEPTH; i++) doc[n++] = '[';
    for (int i = 0; i < OP_JSON_MAX_DEPTH; i++) doc[n++] = ']';
    for (int i = 0; i < OP_JSON_MAX_DEPTH; i++) w += (size_t)sprintf(want + w, "[ ");
    for (int i = 0; i < OP_JSON_MAX_DEPTH; i++) w += (size_t)sprintf(want + w, "] ");
    sprintf(want + w, "EOF");
    expect(doc, n, want);
    /* One level more fails where it starts, without recursion. */
    char *deep = malloc(1000000);
    memset(deep, '[', 1000000);
    w = 0;
    for (int i = 0; i < OP_JSON_MAX_DEPTH; i++) w += (size_t)sprintf(want + w, "[ ");
    sprintf(want + w, "ERR@%d:nesting deeper than %d levels", OP_JSON_MAX_DEPTH, OP_JSON_MAX_DEPTH);
    tokens(deep, 1000000, 0, 4096, doc, 0); /* cap 0: only check it returns */
    static char got[1 << 16];
    tokens(deep, 1000000, 0, 4096, got, sizeof got);
    assert_string_equal(got, want);
    free(deep);
}

static void test_long_tokens(void **state)
{
    (void)state;
    /* A string far longer than the buffer grows it and stays whole. */
    size_t len = 100000;
    char *doc = malloc(len + 8);
    doc[0] = '[';
    doc[1] = '"';
    for (size_t i = 2; i < len; i++) doc[i] = (char)('a' + i % 26);
    memcpy(doc + len, "\"]", 2);
    op_source *src;
    assert_int_equal(op_source_open_memory(doc, len + 2, 1000, &src), 0);
    op_json j;
    assert_int_equal(op_json_init(&j, src, 16), 0);
    assert_int_equal(op_json_next(&j), OP_JT_ARR_BEGIN);
    assert_int_equal(op_json_next(&j), OP_JT_STRING);
    assert_int_equal(j.n, len - 2);
    assert_memory_equal(j.s, doc + 2, len - 2);
    assert_int_equal(j.off, 1);
    assert_int_equal(op_json_next(&j), OP_JT_ARR_END);
    assert_int_equal(op_json_next(&j), OP_JT_EOF);
    op_json_free(&j);
    op_source_close(src);
    free(doc);
}

static void test_number_conversion(void **state)
{
    (void)state;
    int64_t v;
    uint64_t u;
#define NS(text, want)                                                        \
    do {                                                                      \
        assert_int_equal(op_num_scaled(text, strlen(text), 3, &v), 0);        \
        assert_true(v == (int64_t)(want));                                    \
    } while (0)
    NS("4458676522690.655", 4458676522690655LL);
    NS("343", 343000);
    NS("1.0005", 1001);  /* half rounds away from zero */
    NS("1.00049999", 1000);
    NS("-1.0005", -1001);
    NS("0.0000001", 0);
    NS("1.5e3", 1500000);
    NS("-0", 0);
    NS("123456789012345678901234567890e-30", 123);
    assert_int_equal(op_num_scaled("1e400", 5, 3, &v), -1);
    assert_int_equal(op_num_scaled("-1e400", 6, 3, &v), -1);
    assert_int_equal(op_num_scaled("9223372036854775.808", 20, 3, &v), -1);
    assert_int_equal(op_num_scaled("9223372036854775807", 19, 0, &v), 0);
    assert_true(v == INT64_MAX);
    assert_int_equal(op_num_scaled("9223372036854775808", 19, 0, &v), -1);
    assert_int_equal(op_num_scaled("-9223372036854775808", 20, 0, &v), 0);
    assert_true(v == INT64_MIN);
    assert_int_equal(op_num_scaled("1e-400", 6, 3, &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(op_num_int("1e3", 3, &v), 0);
    assert_int_equal(v, 1000);
    assert_int_equal(op_num_int("5.0", 3, &v), 0);
    assert_int_equal(v, 5);
    assert_int_equal(op_num_int("5.5", 3, &v), -1);
    assert_int_equal(op_num_int("1e-1", 4, &v), -1);
    assert_int_equal(op_num_u64("18446744073709551615", 20, &u), 0);
    assert_true(u == UINT64_MAX);
    assert_int_equal(op_num_u64("18446744073709551616", 20, &u), -1);
    assert_int_equal(op_num_u64("-1", 2, &u), -1);
    assert_int_equal(op_num_u64("1.2e9", 5, &u), 0);
    assert_true(u == 1200000000u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_structure),    cmocka_unit_test(test_structure_errors),
        cmocka_unit_test(test_numbers),      cmocka_unit_test(test_strings),
        cmocka_unit_test(test_depth),        cmocka_unit_test(test_long_tokens),
        cmocka_unit_test(test_number_conversion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

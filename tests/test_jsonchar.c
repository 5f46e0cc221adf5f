/* The JSON character table that the writer and the reader share
 * (common/jsonchar.h): each class checked against its definition, for all
 * 256 bytes, so an edit of the table that drifts from JSON fails here. */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "common/jsonchar.h"
#include "common/jsonesc.h"

static void test_classes_match_their_definitions(void **state)
{
    (void)state;
    for (int c = 0; c < 256; c++) {
        unsigned k = op_json_char[c];
        int ws = c == ' ' || c == '\t' || c == '\n' || c == '\r';
        int hex = c < 128 && isxdigit(c);
        int num = (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E';
        int stop = c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
        int esc = stop || c == 0x7f;
        assert_int_equal(!!(k & OP_JC_WS), ws);
        assert_int_equal(!!(k & OP_JC_HEX), hex);
        assert_int_equal(!!(k & OP_JC_NUM), num);
        assert_int_equal(!!(k & OP_JC_STOP), stop);
        assert_int_equal(!!(k & OP_JC_ESC), esc);
        assert_int_equal(k & ~(unsigned)(OP_JC_WS | OP_JC_HEX | OP_JC_NUM | OP_JC_STOP | OP_JC_ESC), 0);
    }
}

static void test_hex_values(void **state)
{
    (void)state;
    const char *digits = "0123456789abcdef";
    for (int v = 0; v < 16; v++) {
        assert_int_equal(op_json_hexval((unsigned char)digits[v]), v);
        assert_int_equal(op_json_hexval((unsigned char)toupper(digits[v])), v);
    }
    assert_int_equal(op_json_hexval('g'), -1);
    assert_int_equal(op_json_hexval('G'), -1);
    assert_int_equal(op_json_hexval('/'), -1);
    assert_int_equal(op_json_hexval(':'), -1);
    assert_int_equal(op_json_hexval(0xe6), -1); /* 'f' | 0x80 */
}

/* The writer escapes exactly the table's OP_JC_ESC bytes: every other byte
 * is copied as is. */
static void test_writer_follows_the_table(void **state)
{
    (void)state;
    for (int c = 1; c < 128; c++) {
        char in = (char)c, out[16];
        size_t n = (size_t)(op_json_escape(out, &in, 1) - out);
        int copied = n == 3 && out[1] == in;
        assert_int_equal(copied, !(op_json_char[c] & OP_JC_ESC));
    }
    char out[16];
    size_t n = (size_t)(op_json_escape(out, "\x7f", 1) - out);
    assert_int_equal(n, 8);
    assert_memory_equal(out, "\"\\u007f\"", 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes_match_their_definitions),
        cmocka_unit_test(test_hex_values),
        cmocka_unit_test(test_writer_follows_the_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* What each byte is to JSON text: one table read by the writer (which bytes
 * it must escape) and the reader (whitespace, number characters, hex digits,
 * the bytes that end the fast scan of a string), so the two can never
 * disagree about a byte. */
#ifndef OPPROF_COMMON_JSONCHAR_H
#define OPPROF_COMMON_JSONCHAR_H

enum {
    OP_JC_WS = 1,   /* whitespace between tokens: space, \t, \n, \r */
    OP_JC_NUM = 2,  /* may appear in a number: digits, + - . e E */
    OP_JC_HEX = 4,  /* a hex digit of \uXXXX */
    OP_JC_STOP = 8, /* ends a plain run inside a string: '"', '\\', a control
                       character, the lead or continuation of UTF-8 (>= 0x80) */
    OP_JC_ESC = 16, /* the writer escapes or checks it: OP_JC_STOP's bytes and DEL */
};

extern const unsigned char op_json_char[256];

/* The value of hex digit c, or -1. */
static inline int op_json_hexval(unsigned char c)
{
    if (!(op_json_char[c] & OP_JC_HEX)) return -1;
    return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

#endif

/* A JSON value re-written as canonical text: ", " between elements, ": "
 * after names, strings re-escaped. PyTorch prints "Input Dims" with Python's
 * str() of a list, "[[5, 3, 224, 224], [64, 3, 7, 7], []]", which is this
 * text for lists of integers; "Input type" keeps its JSON array form
 * ["float", "float"], as the capture side writes it. */
#ifndef OPPROF_IMPORT_VALUE_TEXT_H
#define OPPROF_IMPORT_VALUE_TEXT_H

#include "common/buf.h"
#include "import/json.h"

/* Consumes the value whose first token `t` was just returned and appends its
 * text to out. Returns the value's last token, or OP_JT_ERROR. */
op_jtok op_json_value_text(op_json *j, op_jtok t, op_buf *out);

/* Appends s[0..n) as a JSON string, re-escaped. 0, or -1 out of memory. */
int op_json_quoted(op_buf *o, const char *s, size_t n);

#endif

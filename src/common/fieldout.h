/* Names (user data) written into CSV and JSON files through stdio. */
#ifndef OPPROF_COMMON_FIELDOUT_H
#define OPPROF_COMMON_FIELDOUT_H

#include <stdio.h>

/* A CSV field: as is, or quoted (quotes doubled) when it holds a comma, a
 * quote or a line break. */
void op_fput_csv_field(FILE *f, const char *s);

/* A JSON string, quotes included: quote and backslash escaped, control
 * characters as \u00XX, other bytes as they are. */
void op_fput_json_string(FILE *f, const char *s);

#endif

/* Names are user data: a trace can name an operator with ESC sequences, line
 * breaks or Unicode bidi overrides, which would clear a terminal, forge a
 * table row or reorder what a reader sees. Text for people (tables) and for
 * spreadsheets (CSV) shows such characters escaped; JSON has escapes of its
 * own.
 *
 * A NUL inside a name (JSON's \u0000) is kept as the two bytes C0 80, a
 * sequence that is never valid UTF-8 and so never stands for anything else:
 * names stay C strings, "a\0b" and "a\0c" stay two names, and every writer
 * gives the NUL back (\u0000 in JSON, \x00 in text). */
#ifndef OPPROF_COMMON_TEXTESC_H
#define OPPROF_COMMON_TEXTESC_H

#include <stddef.h>
#include <stdio.h>

#define OP_NUL_LEAD 0xC0u
#define OP_NUL_TRAIL 0x80u

static inline int op_is_kept_nul(const unsigned char *s, size_t n)
{
    return n >= 2 && s[0] == OP_NUL_LEAD && s[1] == OP_NUL_TRAIL;
}

/* 1 when s has a character that text output escapes. */
int op_text_needs_escape(const char *s, size_t n);

/* s (n bytes) with control characters as \n \r \t or \xNN, a kept NUL as
 * \x00, C1 controls (U+0080-009F) and bidi controls (U+202A-202E,
 * U+2066-2069) as \uXXXX, into out
 * (cap bytes, NUL-terminated, cut only between characters). Returns the
 * length the whole text needs, as snprintf does. */
size_t op_text_escape(const char *s, size_t n, char *out, size_t cap);

/* s as text output shows it: s itself when nothing needs escaping (*owned
 * NULL), else an escaped copy that *owned also holds for the caller to free;
 * NULL when memory runs out. */
const char *op_text_shown(const char *s, size_t n, char **owned);

/* Writers of one name for stdio streams (return 0, or -1 on a stream error):
 * a CSV field (escaped as above, then quoted when it holds a comma or a
 * quote), and a JSON string (quotes included, control characters and a kept
 * NUL as \u00XX). */
int op_fput_csv_field(FILE *f, const char *s);
int op_fput_json_string(FILE *f, const char *s);

#endif

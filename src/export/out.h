/* Where an exporter's text goes: a file replaced atomically or a stdio
 * stream, plain or gzip-compressed, behind one op_jw writer. */
#ifndef OPPROF_EXPORT_OUT_H
#define OPPROF_EXPORT_OUT_H

#include <stdio.h>

#include "export/afile.h"
#include "export/gzip.h"
#include "export/jsonw.h"

typedef struct op_out {
    op_jw w;
    op_afile file;
    int to_file;
    int do_fsync;
    FILE *stream;
    op_gz *gz;
    char *plain; /* the buffer of plain output */
} op_out;

/* 1 when path ends in ".gz". */
int op_path_is_gz(const char *path);

/* gzip: 0 plain, 1 compressed with zlib at `level` (1..9). */
int op_out_open_path(op_out *o, const char *path, int gzip, int level, int do_fsync);
/* A file written while the program runs (a streamed trace): its temporary
 * file has a name, so that it survives the program closing opprof's
 * descriptor (op_afile_open_named); fsync'd at the end. */
int op_out_open_path_named(op_out *o, const char *path, int gzip, int level);
int op_out_open_stream(op_out *o, FILE *f, int gzip, int level);

/* Flushes and, for a file, commits it; on any failure (now or earlier) the
 * target is left as it was. Returns the first failure. */
int op_out_close(op_out *o);

/* Gives up: removes the temporary file, frees everything. */
void op_out_discard(op_out *o);

#endif

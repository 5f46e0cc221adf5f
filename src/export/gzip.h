/* gzip output for the JSON writer: one gzip member (what every reader,
 * Perfetto's included, understands), made of blocks that worker threads
 * deflate independently while the caller formats the next ones. */
#ifndef OPPROF_EXPORT_GZIP_H
#define OPPROF_EXPORT_GZIP_H

#include <stddef.h>

#include "export/jsonw.h"

/* Receives compressed bytes in order; returns 0 or a negative status. */
typedef int (*op_bytes_fn)(void *ctx, const void *p, size_t n);

typedef struct op_gz op_gz;

/* level 1..9; workers < 0: as many as the machine suggests (0: compress in
 * the caller's thread). On success w is set up to write into the stream. */
int op_gz_open(op_gz **out, int level, int workers, op_bytes_fn sink, void *sink_ctx, op_jw *w);

/* Compresses what w holds as the last block and writes the trailer.
 * Returns the first failure of the whole stream. */
int op_gz_finish(op_gz *g, op_jw *w);

/* Stops the workers and frees everything (after finish, or to give up). */
void op_gz_free(op_gz *g);

#endif

/* gzip-compressed sources (gzip.c). */
#ifndef OPPROF_IMPORT_GZIP_H
#define OPPROF_IMPORT_GZIP_H

#include "import/source.h"

/* Wraps raw (taking ownership) in a gzip decoder when its first two bytes are
 * 1f 8b; otherwise returns raw itself. */
int op_source_auto_gzip(op_source *raw, op_source **out);

/* The gzip decoder itself: reads raw (taking ownership) decompressed. */
int op_source_gzip(op_source *raw, op_source **out);

#endif

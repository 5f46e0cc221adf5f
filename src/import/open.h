/* Opening a trace's bytes: a file, stdin or memory, decompressed when its
 * first bytes are the gzip magic (whatever the file's name). */
#ifndef OPPROF_IMPORT_OPEN_H
#define OPPROF_IMPORT_OPEN_H

#include <stddef.h>

#include "import/source.h"

/* Opens path ("-": stdin) and, when its first bytes are the gzip magic,
 * decompresses it. On failure *out is NULL and the detail is set. */
int op_source_open_path(const char *path, op_source **out);

/* A source over memory it does not own; max_read > 0 limits each read (tests
 * use it to cut the input at every possible place). gzip is detected too. */
int op_source_open_memory(const void *buf, size_t len, size_t max_read, op_source **out);

#endif

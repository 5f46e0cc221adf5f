/* Byte sources for the trace reader: a file or stdin read in chunks, a
 * memory buffer (open.h), and a gzip stream decompressed on the fly on top
 * of either (gzip.h). The reader never needs a whole file in memory. */
#ifndef OPPROF_IMPORT_SOURCE_H
#define OPPROF_IMPORT_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct op_source op_source;

struct op_source {
    /* Up to cap bytes into buf: the count, 0 at the end, or a negative
     * opprof_status with err and err_off set. */
    ssize_t (*read)(op_source *s, unsigned char *buf, size_t cap);
    void (*close)(op_source *s);
    unsigned char back[16]; /* bytes peeked and given back */
    size_t nback;
    uint64_t err_off;      /* where the failure lies in this source's bytes */
    char err[160];
};

ssize_t op_source_read(op_source *s, unsigned char *buf, size_t cap);
void op_source_close(op_source *s);

#endif

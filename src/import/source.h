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

/* ---- what an input can cost ---- */

/* Decompression bombs: a compressed input (gzip, a .pftrace's
 * compressed_packets) may inflate to OP_INFLATE_FLOOR bytes, then to at
 * most OP_INFLATE_RATIO times the compressed bytes read so far. Deflate
 * shrinks at best about 1000:1; real traces 5-15:1 (Kineto's JSON 10-13,
 * opprof's .pftrace batches 6-7), so only a crafted file is refused, and the
 * work and memory a small file can ask for are bounded by its size. */
#define OP_INFLATE_FLOOR ((uint64_t)64 << 20)
#define OP_INFLATE_RATIO 64

/* 1 when out bytes inflated from in compressed ones pass the bound above. */
static inline int op_inflate_over(uint64_t out, uint64_t in)
{
    return out > OP_INFLATE_FLOOR && (out - OP_INFLATE_FLOOR) / OP_INFLATE_RATIO > in;
}

/* The longest operator or thread name a reader keeps: far past any real
 * one (a templated kernel's name is a few KiB); a longer one is refused with
 * its byte, instead of being interned at any size. */
#define OP_IMPORT_MAX_NAME ((size_t)1 << 20)

/* ---- opening a trace's bytes (open.c) ---- */

/* Opens path ("-": stdin) and, when its first bytes are the gzip magic,
 * decompresses it. On failure *out is NULL and the detail is set. */
int op_source_open_path(const char *path, op_source **out);

/* A source over memory it does not own; max_read > 0 limits each read (tests
 * use it to cut the input at every possible place). gzip is detected too. */
int op_source_open_memory(const void *buf, size_t len, size_t max_read, op_source **out);

/* ---- gzip (gzip.c) ---- */

/* Wraps raw (taking ownership) in a gzip decoder when its first two bytes are
 * 1f 8b; otherwise returns raw itself. */
int op_source_auto_gzip(op_source *raw, op_source **out);

/* The gzip decoder itself: reads raw (taking ownership) decompressed. */
int op_source_gzip(op_source *raw, op_source **out);

#endif

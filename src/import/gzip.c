/* A gzip stream decompressed on the fly with zlib (source.h), so a compressed
 * trace of any size is read with a fixed amount of memory. Concatenated members (what
 * `cat a.gz b.gz` gives) are read one after the other, as gzip(1) does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/error.h"
#include "import/source.h"

#define GZ_IN_CHUNK (64u * 1024u)

typedef struct gz_source {
    op_source base;
    op_source *raw;
    z_stream z;
    int z_ready;
    int member_done; /* the last member ended; more input must start a new one */
    int zero_pad;    /* zero bytes followed the last member: only zeros may come */
    int raw_eof;
    int pending;      /* a failure found after some output: reported on the next read */
    uint64_t raw_off; /* compressed bytes handed to zlib so far */
    uint64_t out_off; /* bytes inflated so far, bounded by op_inflate_over */
    unsigned char in[GZ_IN_CHUNK];
} gz_source;

static uint64_t gz_pos(const gz_source *g)
{
    return g->raw_off - g->z.avail_in;
}

static ssize_t gz_fail(gz_source *g, int status, const char *what)
{
    g->base.err_off = gz_pos(g);
    snprintf(g->base.err, sizeof g->base.err, "%s", what);
    return status;
}

/* Makes sure zlib has input; 0 when the compressed data has ended. */
static ssize_t gz_fill(gz_source *g)
{
    if (g->z.avail_in || g->raw_eof) return (ssize_t)g->z.avail_in;
    ssize_t n = op_source_read(g->raw, g->in, sizeof g->in);
    if (n < 0) {
        g->base.err_off = g->raw->err_off;
        snprintf(g->base.err, sizeof g->base.err, "%s", g->raw->err);
        return n;
    }
    if (n == 0) g->raw_eof = 1;
    g->z.next_in = g->in;
    g->z.avail_in = (uInt)n;
    g->raw_off += (uint64_t)n;
    return n;
}

/* Inflates into the output already set up until some output is made, the
 * data ends (0) or a failure (negative status). */
static ssize_t gz_inflate(gz_source *g, size_t cap)
{
    while (g->z.avail_out == cap) {
        ssize_t n = gz_fill(g);
        if (n < 0) return n;
        if (g->member_done) {
            if (n == 0) return 0; /* clean end after a whole member */
            /* Zero bytes after the last member (a tape or block device's
             * padding) are ignored, as gzip(1) ignores them; once they start,
             * nothing but zeros may follow. */
            if (g->zero_pad || g->z.next_in[0] == 0) {
                g->zero_pad = 1;
                while (g->z.avail_in && g->z.next_in[0] == 0) {
                    g->z.next_in++;
                    g->z.avail_in--;
                }
                if (!g->z.avail_in) continue;
                return gz_fail(g, OPPROF_E_PARSE, "data after the zero padding that follows the gzip stream");
            }
            if (g->z.next_in[0] != 0x1f) return gz_fail(g, OPPROF_E_PARSE, "data after the end of the gzip stream");
            if (inflateReset(&g->z) != Z_OK) return gz_fail(g, OPPROF_E_NOMEM, "zlib could not restart");
            g->member_done = 0;
        }
        /* Called even when the compressed data has ended: zlib may still
         * hold output (a match half copied into a small buffer), and the
         * data is truncated only once it makes none. */
        int rc = inflate(&g->z, Z_NO_FLUSH);
        if (rc == Z_STREAM_END) {
            g->member_done = 1;
        } else if (rc == Z_MEM_ERROR) {
            return gz_fail(g, OPPROF_E_NOMEM, "out of memory in zlib");
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            char what[128];
            snprintf(what, sizeof what, "corrupt gzip stream (%s)", g->z.msg ? g->z.msg : "invalid data");
            return gz_fail(g, OPPROF_E_PARSE, what);
        } else if (n == 0 && g->z.avail_out == cap) {
            return gz_fail(g, OPPROF_E_PARSE, "truncated gzip stream");
        }
    }
    return 0;
}

/* The data decoded before a failure is handed out first, so the JSON text
 * a reader sees, and so the first error it reports, is the same however the
 * compressed bytes arrive. */
static ssize_t gz_read(op_source *s, unsigned char *buf, size_t cap)
{
    gz_source *g = (gz_source *)s;
    if (g->pending) return g->pending;
    if (cap > (1u << 30)) cap = 1u << 30;
    g->z.next_out = buf;
    g->z.avail_out = (uInt)cap;
    ssize_t rc = gz_inflate(g, cap);
    size_t got = cap - g->z.avail_out;
    g->out_off += got;
    if (rc >= 0 && op_inflate_over(g->out_off, gz_pos(g))) {
        char what[160];
        snprintf(what, sizeof what, "the gzip stream inflates to more than %d times the bytes read so far (a decompression bomb?)",
                 OP_INFLATE_RATIO);
        rc = gz_fail(g, OPPROF_E_RANGE, what);
    }
    if (rc < 0) g->pending = (int)rc;
    return got ? (ssize_t)got : rc;
}

static void gz_close(op_source *s)
{
    gz_source *g = (gz_source *)s;
    if (g->z_ready) inflateEnd(&g->z);
    op_source_close(g->raw);
    free(g);
}

int op_source_gzip(op_source *raw, op_source **out)
{
    *out = NULL;
    gz_source *g = calloc(1, sizeof *g);
    if (!g) {
        op_source_close(raw);
        return op_fail(OPPROF_E_NOMEM, "out of memory");
    }
    g->raw = raw;
    g->base.read = gz_read;
    g->base.close = gz_close;
    /* 16 + MAX_WBITS: gzip framing only, with its CRC and length checked. */
    if (inflateInit2(&g->z, 16 + MAX_WBITS) != Z_OK) {
        gz_close(&g->base);
        return op_fail(OPPROF_E_NOMEM, "zlib could not start");
    }
    g->z_ready = 1;
    *out = &g->base;
    return OPPROF_OK;
}

/* The magic bytes are read, then given back to raw for whichever reads
 * it. */
int op_source_auto_gzip(op_source *raw, op_source **out)
{
    unsigned char magic[2];
    size_t have = 0;
    while (have < 2) {
        ssize_t n = op_source_read(raw, magic + have, 2 - have);
        if (n < 0) {
            int rc = op_fail((int)n, "%s", raw->err);
            op_source_close(raw);
            *out = NULL;
            return rc;
        }
        if (n == 0) break;
        have += (size_t)n;
    }
    memcpy(raw->back, magic, have);
    raw->nback = have;
    if (have == 2 && magic[0] == 0x1f && magic[1] == 0x8b) return op_source_gzip(raw, out);
    *out = raw;
    return OPPROF_OK;
}

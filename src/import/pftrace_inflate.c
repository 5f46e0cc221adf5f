/* compressed_packets (see pftrace.h): the field's bytes are a zlib stream
 * (gzip is accepted too) of Trace.packet fields, zstd_compressed_packets'
 * one or more zstd frames of them, which are read as if they stood in the
 * file in place of the packet that holds them. Inflated
 * bytes are bounded (PF_MAX_INFLATED), a batch inside a batch is refused,
 * and so is what all of a file's batches inflate to (op_inflate_over),
 * and every failure names the file's byte where the compressed bytes
 * start and, for what is wrong inside, the inflated byte. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <libdeflate.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "common/error.h"
#include "common/pfschema.h"
#include "import/pftrace.h"
#include "import/pftrace_ahead.h"

/* r->zbuf grown: 1 MiB first, then twice its size, at most
 * PF_MAX_INFLATED. 0, or -1 when it is that already (the batch inflates to
 * more) or memory ran out. */
static int zbuf_double(pf_reader *r, op_pbr z)
{
    if (r->zcap >= PF_MAX_INFLATED)
        return op_pf_fail(r, OPPROF_E_RANGE, z.p, "compressed packets inflate to more than %zu bytes",
                          PF_MAX_INFLATED);
    size_t c = r->zcap ? r->zcap * 2 : (size_t)1 << 20;
    if (c > PF_MAX_INFLATED) c = PF_MAX_INFLATED;
    unsigned char *b = realloc(r->zbuf, c);
    if (!b) return op_pf_fail(r, OPPROF_E_NOMEM, z.p, "out of memory");
    r->zbuf = b;
    r->zcap = c;
    return 0;
}

/* Inflated bytes past what the file read so far justifies. */
static int bomb(pf_reader *r, op_pbr z)
{
    return op_pf_fail(r, OPPROF_E_RANGE, z.p, "compressed packets inflate to more than %d times the bytes "
                      "read so far (a decompression bomb?)", OP_INFLATE_RATIO);
}

/* The whole batch into r->zbuf[0..*n), by zlib: the stream's own error
 * messages, and the bounds checked as the bytes come. */
static int inflate_zlib(pf_reader *r, op_pbr z, size_t *n)
{
    z_stream *s = r->z;
    if (!s) {
        if (!(s = calloc(1, sizeof *s))) return op_pf_fail(r, OPPROF_E_NOMEM, z.p, "out of memory");
        if (inflateInit2(s, 15 + 32) != Z_OK) { /* +32: a zlib or a gzip header */
            free(s);
            return op_pf_fail(r, OPPROF_E_NOMEM, z.p, "out of memory");
        }
        r->z = s;
    } else if (inflateReset(s) != Z_OK) {
        return op_pf_fail(r, OPPROF_E_NOMEM, z.p, "out of memory");
    }
    size_t in_len = (size_t)(z.end - z.p), got = 0;
    uint64_t file_bytes = r->pkt_off + (uint64_t)(z.end - r->pkt); /* the file read so far, this batch included */
    s->next_in = (Bytef *)z.p;
    s->avail_in = (uInt)in_len; /* a packet is at most PF_MAX_PACKET bytes */
    for (;;) {
        if (got == r->zcap && zbuf_double(r, z) != 0) return -1;
        s->next_out = r->zbuf + got;
        s->avail_out = (uInt)(r->zcap - got);
        int rc = inflate(s, Z_NO_FLUSH);
        got = r->zcap - s->avail_out;
        if (op_inflate_over(r->z_out + got, file_bytes)) return bomb(r, z);
        if (rc == Z_STREAM_END) break;
        if (rc == Z_OK) continue;
        if (rc == Z_MEM_ERROR) return op_pf_fail(r, OPPROF_E_NOMEM, z.p, "out of memory");
        if (rc == Z_BUF_ERROR && s->avail_in == 0) /* no progress and nothing left to read */
            return op_pf_fail(r, OPPROF_E_PARSE, z.p, "compressed packets end inside their zlib stream");
        if (rc == Z_BUF_ERROR) continue; /* only the output was full */
        return op_pf_fail(r, OPPROF_E_PARSE, z.p, "compressed packets are not a valid zlib stream (%s)",
                          s->msg ? s->msg : "zlib error");
    }
    *n = got;
    r->z_out += got;
    return 0;
}

int op_pf_unpack(pf_unpackers *u, int zstd, const unsigned char *z, size_t n, unsigned char *out, size_t cap,
                 size_t *got, const char **why)
{
    if (why) *why = NULL;
    if (zstd) {
        if (!u->zd && !(u->zd = ZSTD_createDCtx())) return PF_UNPACK_NOMEM;
        size_t r = ZSTD_decompressDCtx(u->zd, out, cap, z, n);
        if (!ZSTD_isError(r)) {
            *got = r;
            return PF_UNPACK_OK;
        }
        if (ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall) return PF_UNPACK_SHORT;
        if (ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation) return PF_UNPACK_NOMEM;
        if (why) *why = ZSTD_getErrorName(r);
        return PF_UNPACK_BAD;
    }
    if (!u->ld && !(u->ld = libdeflate_alloc_decompressor())) return PF_UNPACK_NOMEM;
    size_t in_used = 0;
    int gzip = n >= 2 && z[0] == 0x1f && z[1] == 0x8b; /* as zlib's 15 + 32 takes either */
    int res = gzip ? libdeflate_gzip_decompress_ex(u->ld, z, n, out, cap, &in_used, got)
                   : libdeflate_zlib_decompress_ex(u->ld, z, n, out, cap, &in_used, got);
    return res == LIBDEFLATE_SUCCESS ? PF_UNPACK_OK : res == LIBDEFLATE_INSUFFICIENT_SPACE ? PF_UNPACK_SHORT : PF_UNPACK_BAD;
}

void op_pf_unpackers_free(pf_unpackers *u)
{
    if (u->ld) libdeflate_free_decompressor(u->ld);
    if (u->zd) ZSTD_freeDCtx(u->zd);
    u->ld = NULL;
    u->zd = NULL;
}

/* The whole batch into r->zbuf[0..*n): libdeflate inflates a whole buffer
 * at about twice zlib's speed, its checksum included (zlib's inflate and
 * adler32 were 12% of opprof summary of a 30M-slice trace); zstd's frames
 * by zstd. A buffer too small is doubled and the batch decompressed again,
 * within the same bounds as zlib's way; a zlib stream libdeflate refuses
 * goes to zlib, which says what is wrong with it as before. */
static int inflate_all(pf_reader *r, op_pbr z, int zstd, size_t *n)
{
    size_t in_len = (size_t)(z.end - z.p), got = 0;
    uint64_t file_bytes = r->pkt_off + (uint64_t)(z.end - r->pkt);
    if (!r->zcap && zbuf_double(r, z) != 0) return -1;
    for (;;) {
        const char *why;
        int res = op_pf_unpack(&r->un, zstd, z.p, in_len, r->zbuf, r->zcap, &got, &why);
        if (res == PF_UNPACK_OK) break;
        if (res == PF_UNPACK_NOMEM) return op_pf_fail(r, OPPROF_E_NOMEM, z.p, "out of memory");
        if (res == PF_UNPACK_BAD && !zstd) return inflate_zlib(r, z, n);
        if (res == PF_UNPACK_BAD)
            return op_pf_fail(r, OPPROF_E_PARSE, z.p, "zstd_compressed_packets are not valid zstd frames (%s)",
                              why ? why : "zstd error");
        if (op_inflate_over(r->z_out + r->zcap, file_bytes)) return bomb(r, z);
        if (zbuf_double(r, z) != 0) return -1;
    }
    if (op_inflate_over(r->z_out + got, file_bytes)) return bomb(r, z);
    *n = got;
    r->z_out += got;
    return 0;
}

int op_pf_compressed(pf_reader *r, op_pbr z, int zstd)
{
    if (r->in_batch)
        return op_pf_fail(r, OPPROF_E_PARSE, z.p, "compressed packets inside compressed packets");
    size_t n = 0;
    const unsigned char *bytes = NULL;
    uint64_t key = r->pkt_off + (uint64_t)(z.p - r->pkt), file_bytes = r->pkt_off + (uint64_t)(z.end - r->pkt);
    int ahead = r->ahead && op_pf_ahead_take(r->ahead, key, (size_t)(z.end - z.p), &bytes, &n);
    if (ahead && op_inflate_over(r->z_out + n, file_bytes)) { /* the bomb's failure, as the reader names it */
        op_pf_ahead_release(r->ahead);
        ahead = 0;
    }
    if (ahead) {
        r->z_out += n;
    } else {
        if (inflate_all(r, z, zstd, &n) != 0) return -1;
        bytes = r->zbuf;
        if (!r->ahead && !r->ahead_off && !(r->ahead = op_pf_ahead_new())) r->ahead_off = 1;
    }
    const unsigned char *outer = r->pkt;
    uint64_t outer_off = r->pkt_off;
    r->in_batch = 1;
    r->z_off = key;
    op_pbr all = {bytes, bytes + n};
    op_pbf f;
    const char *why = "a malformed packet";
    int rc;
    for (;;) {
        if (r->fold) { /* the plain slices' short path, up to a packet it leaves to op_pf_packet */
            if (op_pf_fold_run(r, all.p, all.end, bytes, &all.p) != 0) {
                rc = -1;
                break;
            }
        }
        r->pkt = bytes;
        r->pkt_off = 0;
        const unsigned char *at = all.p;
        if ((rc = op_pbr_next(&all, &f, &why)) <= 0) break;
        if (f.field != PF_TRACE_PACKET || f.wire != OP_PB_LEN) {
            rc = op_pf_fail(r, OPPROF_E_PARSE, at, "not a Trace.packet (field %" PRIu32 ", wire type %d)", f.field,
                            f.wire);
            break;
        }
        r->pkt = at;
        r->pkt_off = (uint64_t)(at - bytes);
        if ((rc = op_pf_packet(r, f.sub)) != 0) break;
    }
    if (rc < 0 && !r->status) op_pf_fail(r, OPPROF_E_PARSE, all.p, "%s", why);
    r->in_batch = 0;
    if (ahead) op_pf_ahead_release(r->ahead);
    r->pkt = outer;
    r->pkt_off = outer_off;
    return rc < 0 ? -1 : 0;
}

void op_pf_inflate_free(pf_reader *r)
{
    if (r->z) {
        inflateEnd(r->z);
        free(r->z);
        r->z = NULL;
    }
    op_pf_unpackers_free(&r->un);
    op_pf_ahead_free(r->ahead);
    r->ahead = NULL;
    free(r->zbuf);
    r->zbuf = NULL;
    r->zcap = 0;
}

/* How the .pftrace writer's packets reach the file (pftrace_pack.h): each
 * one framed as a Trace.packet, either straight to the output or into a
 * batch that becomes one packet holding the batch compressed.
 *
 * Why batches: a slice is two packets of about 11 bytes each, already as
 * small as the schema allows; what repeats from one to the next (the tags,
 * the sequence id, the names' ids) is what the compressor removes. A batch
 * is one zstd frame in zstd_compressed_packets (the default) or one zlib
 * stream in compressed_packets, as Perfetto's own service writes them
 * (TraceConfig's compression), so its trace processor and UI read the file
 * as they read their own. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "export/pftrace_pack.h"
#include "export/pftrace_zq.h"

enum { CODEC_UNSET = -1, CODEC_ZSTD, CODEC_ZLIB, CODEC_PLAIN };

/* OPPROF_PFTRACE_COMPRESS's value: "0" plain packets, "zlib" zlib
 * streams, anything else zstd. */
static int codec_of(const char *v)
{
    return !v ? CODEC_UNSET : strcmp(v, "0") == 0 ? CODEC_PLAIN : strcmp(v, "zlib") == 0 ? CODEC_ZLIB : CODEC_ZSTD;
}

/* OPPROF_PFTRACE_COMPRESS as the process started: opprof exec's preload
 * library removes the OPPROF_* variables from the environment before the
 * program runs (they are for this process, not its children), so the
 * trace written at exit would not see it otherwise. libopprof's
 * constructors run before those of the libraries that depend on it. */
static int codec_at_load = CODEC_UNSET;

__attribute__((constructor)) static void pf_env_at_load(void)
{
    codec_at_load = codec_of(getenv("OPPROF_PFTRACE_COMPRESS"));
}

static int codec(void)
{
    int c = codec_of(getenv("OPPROF_PFTRACE_COMPRESS"));
    return c != CODEC_UNSET ? c : codec_at_load;
}

int op_pf_zlevel(const opprof_export_options *o)
{
    if (codec() == CODEC_PLAIN) return 0;
    return o->gzip_level < 1 ? 1 : o->gzip_level > 9 ? 9 : o->gzip_level;
}

int op_pf_zstd(void)
{
    return codec() != CODEC_ZLIB;
}

/* A length-delimited field's tag and length into d; returns its size. */
static size_t len_head(unsigned char *d, uint32_t field, uint64_t n)
{
    size_t k = op_pb_put_varint(d, ((uint64_t)field << 3) | OP_PB_LEN);
    return k + op_pb_put_varint(d + k, n);
}

/* A compressed batch as one packet: Trace.packet { zstd_compressed_packets
 * (or compressed_packets): z }. */
static int put_compressed(void *ctx, const unsigned char *z, size_t zn)
{
    pf_writer *pw = ctx;
    unsigned char field[16], packet[16];
    size_t nf = len_head(field, op_pf_packer_field(&pw->pk), zn);
    size_t np = len_head(packet, PF_TRACE_PACKET, nf + zn);
    op_jw_put(pw->w, (const char *)packet, np);
    op_jw_put(pw->w, (const char *)field, nf);
    op_jw_put(pw->w, (const char *)z, zn);
    return pw->w->status ? -1 : 0;
}

/* Everything batched so far into the file, in order: the batch the
 * compressing thread holds, then the one being filled, compressed here. */
static int flush_batch(pf_writer *pw)
{
    op_pbw *b = &pw->batch;
    if (pw->zq && op_pf_zq_drain(pw->zq, put_compressed, pw) != 0) return -1;
    if (b->out.failed) return -1;
    if (!b->out.n) return 0;
    if (!pw->zlevel) { /* plain packets: the batch is only a buffer, its packets the file's bytes */
        op_jw_put(pw->w, b->out.p, b->out.n);
        op_pbw_reset(b);
        return pw->w->status ? -1 : 0;
    }
    /* A batch is one whole buffer: zstd's one-shot call, or libdeflate's,
     * which writes the same zlib stream as zlib at two to three times its speed. */
    size_t zn = op_pf_pack(&pw->pk, b->out.p, b->out.n, &pw->zout, &pw->zout_cap);
    if (!zn) return -1;
    op_pbw_reset(b);
    return put_compressed(pw, pw->zout, zn);
}

/* A full batch while more follow: to the compressing thread, started at
 * the first full batch (a trace of one batch starts none), while this
 * thread encodes the next; compressed here when no thread can start. */
static int hand_batch(pf_writer *pw)
{
    if (pw->batch.out.failed || pw->batch.depth) return -1;
    if (!pw->zlevel) return flush_batch(pw);
    if (!pw->zq && !pw->zq_tried) {
        pw->zq_tried = 1;
        pw->zq = op_pf_zq_new(&pw->pk);
    }
    if (!pw->zq) return flush_batch(pw);
    return op_pf_zq_hand(pw->zq, &pw->batch.out, put_compressed, pw);
}

int op_pf_emit(pf_writer *pw)
{
    op_pbw *p = &pw->pkt;
    if (p->out.failed || p->depth) return -1;
    unsigned char head[16];
    size_t k = len_head(head, PF_TRACE_PACKET, p->out.n);
    if (k + p->out.n <= PF_BATCH_MAX) {
        if (pw->batch.out.n + k + p->out.n > PF_BATCH_MAX && hand_batch(pw) != 0) return -1;
        op_pbw_raw(&pw->batch, head, k);
        op_pbw_raw(&pw->batch, p->out.p, p->out.n);
        op_pbw_reset(p);
        return pw->batch.out.failed ? -1 : 0;
    }
    if (flush_batch(pw) != 0) return -1; /* packets stay in order */
    op_jw_put(pw->w, (const char *)head, k);
    op_jw_put(pw->w, (const char *)p->out.p, p->out.n);
    op_pbw_reset(p);
    return pw->w->status ? -1 : 0;
}

unsigned char *op_pf_batch_room_slow(pf_writer *pw, size_t n)
{
    op_pbw *b = &pw->batch;
    if (n > PF_BATCH_MAX || pw->pkt.out.n || pw->pkt.depth) return NULL;
    if (b->out.n + n > PF_BATCH_MAX && hand_batch(pw) != 0) return NULL;
    if (b->out.failed || op_buf_reserve(&b->out, n) != 0) return NULL;
    unsigned char *d = (unsigned char *)b->out.p + b->out.n;
    b->out.n += n;
    return d;
}

int op_pf_flush(pf_writer *pw)
{
    return flush_batch(pw);
}

int64_t op_pf_boot_offset(void)
{
    int64_t best = 0, gap = INT64_MAX;
    for (int i = 0; i < 3; i++) {
        struct timespec r0, b, r1;
        if (clock_gettime(CLOCK_REALTIME, &r0) || clock_gettime(CLOCK_BOOTTIME, &b) ||
            clock_gettime(CLOCK_REALTIME, &r1))
            return 0;
        int64_t a = (int64_t)r0.tv_sec * 1000000000 + r0.tv_nsec, z = (int64_t)r1.tv_sec * 1000000000 + r1.tv_nsec;
        int64_t bt = (int64_t)b.tv_sec * 1000000000 + b.tv_nsec;
        if (z - a < gap) {
            gap = z - a;
            best = a + (z - a) / 2 - bt;
        }
    }
    return best;
}

void op_pf_writer_init(pf_writer *pw, op_jw *w, const opprof_export_options *o, int zlevel, int64_t base_ns)
{
    memset(pw, 0, sizeof *pw);
    pw->w = w;
    pw->o = o;
    pw->zlevel = zlevel;
    pw->pk = (pf_packer){op_pf_zstd(), zlevel, NULL};
    pw->base_ns = base_ns > 0 ? base_ns : 0;
    pw->boot_ns = op_pf_boot_offset();
}

void op_pf_writer_free(pf_writer *pw)
{
    op_pf_zq_free(pw->zq); /* a batch it still held was given up with the file */
    pw->zq = NULL;
    op_pf_packer_free(&pw->pk);
    op_pbw_free(&pw->batch);
    free(pw->zout);
    pw->zout = NULL;
    pw->zout_cap = 0;
    op_pbw_free(&pw->pkt);
    op_pbw_free(&pw->te);
    op_pbw_free(&pw->in);
    free(pw->counters);
    pw->counters = NULL;
    free(pw->proc_of);
    pw->proc_of = NULL;
}

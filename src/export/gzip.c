/* Parallel gzip in the way of pigz's independent mode: the text is cut into
 * blocks, each deflated on its own (raw deflate ended by a sync flush, the
 * last by a finish), and the outputs are concatenated in order into one
 * deflate stream inside one gzip member. The CRC of the whole is combined
 * from the blocks' CRCs.
 *
 * zlib at level 1 deflates about 3x slower than the JSON writer formats, so
 * the blocks go to worker threads while the caller formats the next ones.
 * libdeflate is faster still but only compresses whole buffers, which would
 * mean one gzip member per block; Perfetto's reader stops at the end of the
 * first member, so that is not an option. */
#include "common/worker.h"
#include "export/gzip.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "capture/thread.h"
#include "common/error.h"
#include "opprof.h"
#include "common/vec.h"

#define BLOCK OP_JW_MIN_BUF
#define MAX_WORKERS OP_WORKERS_MAX

enum { SLOT_FREE, SLOT_FILLED, SLOT_BUSY, SLOT_DONE };

typedef struct gz_slot {
    char *in;
    size_t in_len;
    unsigned char *out;
    size_t out_len, out_cap;
    uint32_t crc;
    int final;
    int state;
    int status;
} gz_slot;

struct op_gz {
    op_worker w; /* the workers (w.n of them), once ready */
    int ready;
    gz_slot *slots;
    unsigned nslots, nalloc;
    uint64_t filled;  /* blocks handed over; block s lives in slot s % nslots */
    uint64_t taken;   /* next block a worker takes */
    uint64_t written; /* next block to write out */
    z_stream z; /* the caller's stream */
    int z_ready;
    int level;
    op_bytes_fn sink;
    void *sink_ctx;
    uint32_t crc;
    uint64_t isize;
    int header_done;
    int status;
};

/* Deflates slot s as raw deflate; returns 0 or a status (no detail: this
 * may run on a worker thread, whose error detail nobody reads). */
static int compress_block(z_stream *z, gz_slot *s)
{
    if (deflateReset(z) != Z_OK) return OPPROF_E_NOMEM;
    size_t need = deflateBound(z, (uLong)s->in_len) + 64;
    if (s->out_cap < need) {
        unsigned char *o = realloc(s->out, need);
        if (!o) return OPPROF_E_NOMEM;
        s->out = o;
        s->out_cap = need;
    }
    z->next_in = (Bytef *)s->in;
    z->avail_in = (uInt)s->in_len;
    z->next_out = s->out;
    z->avail_out = (uInt)s->out_cap;
    for (;;) {
        int r = deflate(z, s->final ? Z_FINISH : Z_SYNC_FLUSH);
        if (r == Z_STREAM_ERROR) return OPPROF_E_NOMEM;
        int complete = s->final ? r == Z_STREAM_END : (z->avail_in == 0 && z->avail_out > 0);
        if (complete) break;
        size_t used = s->out_cap - z->avail_out;
        if (op_grow(&s->out, &s->out_cap, s->out_cap + 1, 1)) return OPPROF_E_NOMEM;
        z->next_out = s->out + used;
        z->avail_out = (uInt)(s->out_cap - used);
    }
    s->out_len = s->out_cap - z->avail_out;
    s->crc = (uint32_t)crc32(0, (const Bytef *)s->in, (uInt)s->in_len);
    return OPPROF_OK;
}

static void *worker(void *arg)
{
    op_gz *g = arg;
    op_thread_never_record(); /* it may run during a session (a streamed trace) */
    z_stream z;
    memset(&z, 0, sizeof z);
    int zok = deflateInit2(&z, g->level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK;
    pthread_mutex_lock(&g->w.mu);
    for (;;) {
        while (!g->w.stop && g->taken >= g->filled) pthread_cond_wait(&g->w.work, &g->w.mu);
        if (g->w.stop) break;
        gz_slot *s = &g->slots[g->taken++ % g->nslots];
        s->state = SLOT_BUSY;
        pthread_mutex_unlock(&g->w.mu);
        int rc = zok ? compress_block(&z, s) : OPPROF_E_NOMEM;
        pthread_mutex_lock(&g->w.mu);
        s->status = rc;
        s->state = SLOT_DONE;
        pthread_cond_broadcast(&g->w.done);
    }
    pthread_mutex_unlock(&g->w.mu);
    if (zok) deflateEnd(&z);
    return NULL;
}

static void put_le32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

/* Writes a deflated block (in order), the gzip header before the first. */
static int write_out(op_gz *g, const gz_slot *s)
{
    if (g->status) return g->status;
    if (s->status) return g->status = op_fail(s->status, "zlib could not compress the trace (out of memory)");
    if (!g->header_done) {
        unsigned char h[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
        h[8] = g->level <= 1 ? 4 : g->level >= 9 ? 2 : 0; /* XFL: fastest / best */
        if ((g->status = g->sink(g->sink_ctx, h, sizeof h)) != 0) return g->status;
        g->header_done = 1;
    }
    if ((g->status = g->sink(g->sink_ctx, s->out, s->out_len)) != 0) return g->status;
    g->crc = (uint32_t)crc32_combine(g->crc, s->crc, (z_off_t)s->in_len);
    g->isize += s->in_len;
    return OPPROF_OK;
}

/* Writes out block `written` once done; the lock is held on entry and exit.
 * While it waits, the caller compresses blocks no worker has taken yet: on
 * a busy machine that is one more thread at work. */
static void write_next(op_gz *g)
{
    gz_slot *o = &g->slots[g->written % g->nslots];
    while (o->state != SLOT_DONE) {
        if (g->taken < g->filled) {
            gz_slot *s = &g->slots[g->taken++ % g->nslots];
            s->state = SLOT_BUSY;
            pthread_mutex_unlock(&g->w.mu);
            int rc = compress_block(&g->z, s);
            pthread_mutex_lock(&g->w.mu);
            s->status = rc;
            s->state = SLOT_DONE;
            continue;
        }
        pthread_cond_wait(&g->w.done, &g->w.mu);
    }
    pthread_mutex_unlock(&g->w.mu);
    write_out(g, o);
    pthread_mutex_lock(&g->w.mu);
    o->state = SLOT_FREE;
    g->written++;
}

/* Hands the writer's buffer over as the next block and gives the writer a
 * free one, writing out finished blocks (in order) on the way. */
static int hand_over(op_gz *g, op_jw *w, int final)
{
    size_t len = (size_t)(w->p - w->buf);
    if (!g->w.n) {
        gz_slot *s = &g->slots[0];
        s->in_len = len;
        s->final = final;
        s->status = compress_block(&g->z, s);
        write_out(g, s);
        w->p = w->buf;
        return g->status;
    }
    pthread_mutex_lock(&g->w.mu);
    gz_slot *s = &g->slots[g->filled % g->nslots];
    s->in_len = len;
    s->final = final;
    s->state = SLOT_FILLED;
    g->filled++;
    pthread_cond_signal(&g->w.work);
    /* The next slot was used by block filled - nslots: wait for it if it is
     * not written yet; write any other finished block without waiting. */
    while (g->written < g->filled &&
           (g->written + g->nslots <= g->filled || g->slots[g->written % g->nslots].state == SLOT_DONE))
        write_next(g);
    pthread_mutex_unlock(&g->w.mu);
    w->buf = g->slots[g->filled % g->nslots].in;
    w->p = w->buf;
    w->end = w->buf + BLOCK;
    return g->status;
}

static int gz_flush(void *ctx, op_jw *w)
{
    return hand_over(ctx, w, 0);
}

int op_gz_finish(op_gz *g, op_jw *w)
{
    if (w->status) return w->status;
    w->bytes += (uint64_t)(w->p - w->buf);
    hand_over(g, w, 1);
    if (g->w.n) {
        pthread_mutex_lock(&g->w.mu);
        while (g->written < g->filled) write_next(g);
        pthread_mutex_unlock(&g->w.mu);
    }
    if (!g->status) {
        unsigned char t[8];
        put_le32(t, g->crc);
        put_le32(t + 4, (uint32_t)g->isize); /* ISIZE is the length mod 2^32 */
        g->status = g->sink(g->sink_ctx, t, sizeof t);
    }
    return g->status;
}

static unsigned default_workers(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 2) return 0;
    return n > MAX_WORKERS ? MAX_WORKERS : (unsigned)n;
}

int op_gz_open(op_gz **out, int level, int workers, op_bytes_fn sink, void *sink_ctx, op_jw *w)
{
    *out = NULL;
    op_gz *g = calloc(1, sizeof *g);
    if (!g) return op_fail(OPPROF_E_NOMEM, "out of memory");
    g->level = level < 1 ? 1 : level > 9 ? 9 : level;
    g->sink = sink;
    g->sink_ctx = sink_ctx;
    g->crc = (uint32_t)crc32(0, NULL, 0);
    unsigned nw = workers < 0 ? default_workers() : (unsigned)(workers > MAX_WORKERS ? MAX_WORKERS : workers);
    g->nslots = g->nalloc = nw ? nw + 2 : 1;
    g->slots = calloc(g->nalloc, sizeof *g->slots);
    if (!g->slots) {
        op_gz_free(g);
        return op_fail(OPPROF_E_NOMEM, "out of memory");
    }
    for (unsigned i = 0; i < g->nalloc; i++) {
        if (!(g->slots[i].in = malloc(BLOCK))) {
            op_gz_free(g);
            return op_fail(OPPROF_E_NOMEM, "out of memory for gzip buffers");
        }
    }
    /* Workers take no signals: SIGINT and friends stay with the caller. */
    (void)op_worker_start(&g->w, nw, worker, g);
    g->ready = 1;
    if (!g->w.n) g->nslots = 1; /* no threads (none asked, or none could start): compress inline */
    /* The caller's own stream: inline mode, and helping the workers. */
    if (deflateInit2(&g->z, g->level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        op_gz_free(g);
        return op_fail(OPPROF_E_NOMEM, "zlib could not start");
    }
    g->z_ready = 1;
    w->buf = w->p = g->slots[0].in;
    w->end = w->buf + BLOCK;
    w->flush = gz_flush;
    w->ctx = g;
    *out = g;
    return OPPROF_OK;
}

void op_gz_free(op_gz *g)
{
    if (!g) return;
    if (g->ready) op_worker_stop(&g->w);
    if (g->z_ready) deflateEnd(&g->z);
    for (unsigned i = 0; g->slots && i < g->nalloc; i++) {
        free(g->slots[i].in);
        free(g->slots[i].out);
    }
    free(g->slots);
    free(g);
}

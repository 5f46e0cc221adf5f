/* A .pftrace's batches compressed beside the writer (pftrace_zq.h).
 *
 * Compressing a full batch (480 KiB of packets, deflate at level 1) took a third of a
 * streamed trace's end on bench_trace_cost's programs, on one core while
 * the other, the program done, sat idle. One thread, with two batches in
 * flight: the writer encodes the next batch in about the time the thread
 * compresses one, and with a second slot neither waits for the other's
 * every turn when they share two cores with the reader (bench_wholeprog's
 * end: 3.51 s against 3.75 s, means of ten runs alternating builds). The
 * writer writes each batch's compressed bytes itself, oldest first, so the
 * file's order is the writer's and nothing else touches its output. The
 * thread takes no signals and never records. */
#include "common/worker.h"
#include "export/pftrace_zq.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <libdeflate.h>
#include <zstd.h>

#include "capture/thread.h"

enum { ZQ_IDLE, ZQ_PENDING, ZQ_DONE };
enum { ZQ_SLOTS = 2 };

typedef struct zslot {
    int state, failed;
    op_buf in;          /* the batch handed over (the thread's while pending) */
    unsigned char *out; /* its compressed bytes */
    size_t out_n, out_cap;
} zslot;

struct pf_zq {
    op_worker w;
    unsigned head, tail; /* the oldest slot handed over; the next to hand */
    zslot slot[ZQ_SLOTS];
    pf_packer z;
};

/* zstd at level 1 compresses opprof's packets at about twice libdeflate's
 * level-1 speed into half the bytes (bench_trace_cost's 807 MB of plain
 * packets: 729 against 376 MB/s, 27.5x against 15.6x). */
size_t op_pf_pack(pf_packer *p, const void *in, size_t n, unsigned char **out, size_t *cap)
{
    if (!p->cx) {
        if (p->zstd) {
            ZSTD_CCtx *c = ZSTD_createCCtx();
            if (c && ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, p->level))) {
                ZSTD_freeCCtx(c);
                c = NULL;
            }
            p->cx = c;
        } else {
            p->cx = libdeflate_alloc_compressor(p->level);
        }
        if (!p->cx) return 0;
    }
    size_t need = p->zstd ? ZSTD_compressBound(n) : libdeflate_zlib_compress_bound(p->cx, n);
    if (*cap < need) {
        unsigned char *o = realloc(*out, need);
        if (!o) return 0;
        *out = o;
        *cap = need;
    }
    if (!p->zstd) return libdeflate_zlib_compress(p->cx, in, n, *out, *cap); /* the bound is room enough */
    size_t r = ZSTD_compress2(p->cx, *out, *cap, in, n);
    return ZSTD_isError(r) ? 0 : r;
}

void op_pf_packer_free(pf_packer *p)
{
    if (p->cx && p->zstd) ZSTD_freeCCtx(p->cx);
    else if (p->cx) libdeflate_free_compressor(p->cx);
    p->cx = NULL;
}

static _Atomic uint64_t g_cpu_ns; /* what every compressing thread spent deflating */

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double op_pf_zq_cpu_s(void)
{
    return (double)atomic_load_explicit(&g_cpu_ns, memory_order_relaxed) * 1e-9;
}

/* The batch in slot z into its out: 0 or -1 (out of memory). */
static int compress(pf_zq *q, zslot *z)
{
    uint64_t c0 = thread_cpu_ns();
    z->out_n = op_pf_pack(&q->z, z->in.p, z->in.n, &z->out, &z->out_cap);
    atomic_fetch_add_explicit(&g_cpu_ns, thread_cpu_ns() - c0, memory_order_relaxed);
    return z->out_n ? 0 : -1;
}

/* The pending slot handed over first, or NULL. Lock held. */
static zslot *next_pending(pf_zq *q)
{
    for (unsigned i = q->head; i != q->tail; i++)
        if (q->slot[i % ZQ_SLOTS].state == ZQ_PENDING) return &q->slot[i % ZQ_SLOTS];
    return NULL;
}

static void *worker(void *arg)
{
    pf_zq *q = arg;
    op_thread_never_record(); /* it runs while a streamed session may still be recording */
    pthread_mutex_lock(&q->w.mu);
    for (;;) {
        zslot *z;
        while (!q->w.stop && !(z = next_pending(q))) pthread_cond_wait(&q->w.work, &q->w.mu);
        if (q->w.stop) break;
        pthread_mutex_unlock(&q->w.mu);
        int rc = compress(q, z);
        pthread_mutex_lock(&q->w.mu);
        z->failed = rc != 0;
        z->state = ZQ_DONE;
        pthread_cond_signal(&q->w.done);
    }
    pthread_mutex_unlock(&q->w.mu);
    return NULL;
}

pf_zq *op_pf_zq_new(const pf_packer *p)
{
    pf_zq *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->z = (pf_packer){p->zstd, p->level < 1 ? 1 : p->level > 9 ? 9 : p->level, NULL};
    if (!op_worker_start(&q->w, 1, worker, q)) {
        op_worker_stop(&q->w);
        free(q);
        return NULL;
    }
    return q;
}

/* Waits for the oldest batch handed over and puts it; 0 or -1. */
static int put_oldest(pf_zq *q, pf_zq_put put, void *ctx)
{
    zslot *z = &q->slot[q->head % ZQ_SLOTS];
    pthread_mutex_lock(&q->w.mu);
    while (z->state != ZQ_DONE) pthread_cond_wait(&q->w.done, &q->w.mu);
    int failed = z->failed;
    z->state = ZQ_IDLE;
    q->head++;
    pthread_mutex_unlock(&q->w.mu);
    z->in.n = 0;
    if (failed) return -1;
    return put(ctx, z->out, z->out_n);
}

int op_pf_zq_drain(pf_zq *q, pf_zq_put put, void *ctx)
{
    while (q->head != q->tail)
        if (put_oldest(q, put, ctx) != 0) return -1;
    return 0;
}

int op_pf_zq_hand(pf_zq *q, op_buf *batch, pf_zq_put put, void *ctx)
{
    /* Full: the oldest first (the file's order is the hand-over order). */
    if (q->tail - q->head == ZQ_SLOTS && put_oldest(q, put, ctx) != 0) return -1;
    zslot *z = &q->slot[q->tail % ZQ_SLOTS];
    /* Copied, not swapped: the writer's buffer stays in its own core's
     * cache. Writing into a buffer the other core has just read costs a
     * coherence miss per line, and made the writer slower by more than the
     * compression it gave away (bench_trace_cost). */
    if (op_buf_put(&z->in, batch->p, batch->n) != 0) return -1;
    batch->n = 0;
    pthread_mutex_lock(&q->w.mu);
    z->state = ZQ_PENDING;
    q->tail++;
    pthread_cond_signal(&q->w.work);
    pthread_mutex_unlock(&q->w.mu);
    return 0;
}

void op_pf_zq_free(pf_zq *q)
{
    if (!q) return;
    pthread_mutex_lock(&q->w.mu);
    for (unsigned i = 0; i < ZQ_SLOTS; i++) /* the thread owns a pending slot's bytes */
        while (q->slot[i].state == ZQ_PENDING) pthread_cond_wait(&q->w.done, &q->w.mu);
    pthread_mutex_unlock(&q->w.mu);
    op_worker_stop(&q->w);
    op_pf_packer_free(&q->z);
    for (unsigned i = 0; i < ZQ_SLOTS; i++) {
        op_buf_free(&q->slot[i].in);
        free(q->slot[i].out);
    }
    free(q);
}

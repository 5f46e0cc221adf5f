/* A .pftrace's batches compressed beside the writer (pftrace_zq.h).
 *
 * Deflating a full batch (480 KiB of packets at level 1) took a third of a
 * streamed trace's end on bench_trace_cost's programs, on one core while
 * the other, the program done, sat idle. One thread and one batch in
 * flight are enough: the writer encodes the next batch in about the time
 * the thread compresses this one, and writes each batch's compressed bytes
 * itself, so the file's order is the writer's and nothing else touches
 * its output. The thread takes no signals and never records. */
#include "export/pftrace_zq.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <libdeflate.h>

#include "capture/thread.h"

enum { ZQ_IDLE, ZQ_PENDING, ZQ_DONE };

struct pf_zq {
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    pthread_t th;
    int state, stop, failed;
    op_buf in;          /* the batch handed over (the thread's while pending) */
    unsigned char *out; /* its compressed bytes */
    size_t out_n, out_cap;
    struct libdeflate_compressor *z;
};

size_t op_pf_deflate(struct libdeflate_compressor *z, const void *in, size_t n, unsigned char **out, size_t *cap)
{
    size_t need = libdeflate_zlib_compress_bound(z, n);
    if (*cap < need) {
        unsigned char *o = realloc(*out, need);
        if (!o) return 0;
        *out = o;
        *cap = need;
    }
    return libdeflate_zlib_compress(z, in, n, *out, *cap); /* the bound is room enough */
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

/* The batch in q->in into q->out: 0 or -1 (out of memory). */
static int compress(pf_zq *q)
{
    uint64_t c0 = thread_cpu_ns();
    q->out_n = op_pf_deflate(q->z, q->in.p, q->in.n, &q->out, &q->out_cap);
    atomic_fetch_add_explicit(&g_cpu_ns, thread_cpu_ns() - c0, memory_order_relaxed);
    return q->out_n ? 0 : -1;
}

static void *worker(void *arg)
{
    pf_zq *q = arg;
    op_thread_never_record(); /* it runs while a streamed session may still be recording */
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->stop && q->state != ZQ_PENDING) pthread_cond_wait(&q->work, &q->mu);
        if (q->stop) break;
        pthread_mutex_unlock(&q->mu);
        int rc = compress(q);
        pthread_mutex_lock(&q->mu);
        q->failed = rc != 0;
        q->state = ZQ_DONE;
        pthread_cond_signal(&q->done);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

pf_zq *op_pf_zq_new(int level)
{
    pf_zq *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    if (!(q->z = libdeflate_alloc_compressor(level < 1 ? 1 : level > 9 ? 9 : level))) {
        free(q);
        return NULL;
    }
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->work, NULL);
    pthread_cond_init(&q->done, NULL);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* signals stay with the program's threads */
    int e = pthread_create(&q->th, NULL, worker, q);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e != 0) {
        pthread_mutex_destroy(&q->mu);
        pthread_cond_destroy(&q->work);
        pthread_cond_destroy(&q->done);
        libdeflate_free_compressor(q->z);
        free(q);
        return NULL;
    }
    return q;
}

int op_pf_zq_drain(pf_zq *q, pf_zq_put put, void *ctx)
{
    pthread_mutex_lock(&q->mu);
    if (q->state == ZQ_IDLE) {
        pthread_mutex_unlock(&q->mu);
        return 0;
    }
    while (q->state != ZQ_DONE) pthread_cond_wait(&q->done, &q->mu);
    int failed = q->failed;
    q->state = ZQ_IDLE;
    pthread_mutex_unlock(&q->mu);
    q->in.n = 0;
    if (failed) return -1;
    return put(ctx, q->out, q->out_n);
}

int op_pf_zq_hand(pf_zq *q, op_buf *batch, pf_zq_put put, void *ctx)
{
    int rc = op_pf_zq_drain(q, put, ctx);
    if (rc != 0) return rc;
    /* Copied, not swapped: the writer's buffer stays in its own core's
     * cache. Writing into a buffer the other core has just read costs a
     * coherence miss per line, and made the writer slower by more than the
     * compression it gave away (bench_trace_cost). */
    if (op_buf_put(&q->in, batch->p, batch->n) != 0) return -1;
    batch->n = 0;
    pthread_mutex_lock(&q->mu);
    q->state = ZQ_PENDING;
    pthread_cond_signal(&q->work);
    pthread_mutex_unlock(&q->mu);
    return 0;
}

void op_pf_zq_free(pf_zq *q)
{
    if (!q) return;
    pthread_mutex_lock(&q->mu);
    while (q->state == ZQ_PENDING) pthread_cond_wait(&q->done, &q->mu); /* the thread owns q->in */
    q->stop = 1;
    pthread_cond_signal(&q->work);
    pthread_mutex_unlock(&q->mu);
    pthread_join(q->th, NULL);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->work);
    pthread_cond_destroy(&q->done);
    libdeflate_free_compressor(q->z);
    op_buf_free(&q->in);
    free(q->out);
    free(q);
}

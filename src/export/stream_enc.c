/* The writing half of a streamed trace's end (stream_enc.h).
 *
 * One batch in flight, as the compressing thread of a .pftrace has
 * (pftrace_zq.c): the reader fills its trace while this thread writes the
 * one before from a trace of its own that mirrors the reader's tables, so
 * neither touches what the other is using. The arrays change hands at each
 * hand, under the lock, and nothing is copied but the strings, threads and
 * stacks new since the last hand (a few per program). */
#include "common/worker.h"
#include "export/stream_enc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "capture/thread.h"
#include "common/error.h"

struct op_senc {
    op_worker w;
    int pending;
    int status;        /* the first failure, OPPROF_OK none */
    char detail[512];  /* its detail, from the thread that failed */
    op_senc_fn fn;
    void *ctx;
    op_sdec_batch b;   /* the thread's while pending */
};

static void *worker(void *arg)
{
    op_senc *e = arg;
    op_thread_never_record(); /* a streamed session's end: the program may still run */
    pthread_mutex_lock(&e->w.mu);
    for (;;) {
        while (!e->w.stop && !e->pending) pthread_cond_wait(&e->w.work, &e->w.mu);
        if (!e->pending) break;
        int skip = e->status != OPPROF_OK;
        pthread_mutex_unlock(&e->w.mu);
        int rc = skip ? OPPROF_OK : e->fn(e->ctx, e->b.tr, e->b.order, e->b.n);
        pthread_mutex_lock(&e->w.mu);
        if (rc != OPPROF_OK && e->status == OPPROF_OK) {
            e->status = rc;
            snprintf(e->detail, sizeof e->detail, "%s", opprof_last_error());
        }
        e->pending = 0;
        pthread_cond_signal(&e->w.done);
    }
    pthread_mutex_unlock(&e->w.mu);
    return NULL;
}

op_senc *op_senc_new(op_senc_fn fn, void *ctx)
{
    op_senc *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    if (op_sdec_batch_init(&e->b) != 0) {
        free(e);
        return NULL;
    }
    e->fn = fn;
    e->ctx = ctx;
    if (!op_worker_start(&e->w, 1, worker, e)) {
        op_worker_stop(&e->w);
        op_sdec_batch_free(&e->b);
        free(e);
        return NULL;
    }
    return e;
}

/* Waits for the batch in flight; the first failure. Lock held. */
static int wait_idle(op_senc *e)
{
    while (e->pending) pthread_cond_wait(&e->w.done, &e->w.mu);
    return e->status;
}

int op_senc_hand(op_senc *e, op_sdec *d)
{
    pthread_mutex_lock(&e->w.mu);
    int rc = wait_idle(e);
    if (op_sdec_hand(d, &e->b) != 0) {
        pthread_mutex_unlock(&e->w.mu);
        return op_fail(OPPROF_E_NOMEM, "out of memory handing a batch to the trace's writer");
    }
    e->pending = 1;
    pthread_cond_signal(&e->w.work);
    if (rc != OPPROF_OK) (void)op_fail(rc, "%s", e->detail); /* on this thread, for its caller */
    pthread_mutex_unlock(&e->w.mu);
    return rc;
}

int op_senc_drain(op_senc *e)
{
    pthread_mutex_lock(&e->w.mu);
    int rc = wait_idle(e);
    if (rc != OPPROF_OK) (void)op_fail(rc, "%s", e->detail);
    pthread_mutex_unlock(&e->w.mu);
    return rc;
}

double op_senc_cpu_s(op_senc *e)
{
    clockid_t id;
    struct timespec ts;
    if (pthread_getcpuclockid(e->w.th[0], &id) != 0 || clock_gettime(id, &ts) != 0) return 0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void op_senc_free(op_senc *e)
{
    if (!e) return;
    pthread_mutex_lock(&e->w.mu);
    (void)wait_idle(e);
    pthread_mutex_unlock(&e->w.mu);
    op_worker_stop(&e->w);
    op_sdec_batch_free(&e->b);
    free(e);
}

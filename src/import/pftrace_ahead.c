/* Compressed batches inflated ahead of the reader (pftrace_ahead.h): a
 * ring of AHEAD_SLOTS batches, given by the reader in file order, inflated
 * by one thread in that order, taken back by the reader in that order. */
#include "import/pftrace_ahead.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/worker.h"
#include "import/pftrace.h"

/* Four batches ahead: a batch (at most 480 KiB inflated as opprof writes
 * them, Perfetto's about as much) decodes in about 0.5 ms and inflates in
 * about 0.1 ms, so the inflater is never the one waited for. */
enum { AHEAD_SLOTS = 4 };
/* What one slot may hold. Bigger batches (none that opprof or Perfetto
 * writes) are inflated by the reader itself; so the inflater holds at most
 * AHEAD_SLOTS x (4 + 4) MiB, whatever the file. */
#define AHEAD_MAX_IN ((size_t)4 << 20)
#define AHEAD_MAX_OUT ((size_t)4 << 20)

static _Atomic uint64_t g_taken;

uint64_t op_pf_ahead_taken(void)
{
    return atomic_load_explicit(&g_taken, memory_order_relaxed);
}

typedef struct ahead_slot {
    uint64_t key;
    int zstd; /* zstd frames, else a zlib stream */
    unsigned char *in, *out;
    size_t in_n, in_cap, out_n, out_cap;
    int ok; /* inflated whole; read once work has passed the slot */
} ahead_slot;

struct pf_ahead {
    op_worker w; /* its work signal: a batch given, or quit */
    /* Counters, each slot at its counter mod AHEAD_SLOTS: head the next to
     * take, work the next to inflate, tail the next to give; head <= work
     * <= tail <= head + AHEAD_SLOTS. */
    unsigned head, work, tail;
    int held;
    pf_unpackers un;
    ahead_slot slot[AHEAD_SLOTS];
};

/* s->in inflated into s->out, its buffer doubled (from 1 MiB) as far as
 * AHEAD_MAX_OUT: 1 done, 0 not. Run without the lock: the slot
 * is the inflater's from the moment it is given until it is marked. */
static int inflate_slot(pf_unpackers *u, ahead_slot *s)
{
    for (;;) {
        if (!s->out_cap) {
            if (!(s->out = malloc((size_t)1 << 20))) return 0;
            s->out_cap = (size_t)1 << 20;
        }
        int res = op_pf_unpack(u, s->zstd, s->in, s->in_n, s->out, s->out_cap, &s->out_n, NULL);
        if (res == PF_UNPACK_OK) return 1;
        if (res != PF_UNPACK_SHORT || s->out_cap >= AHEAD_MAX_OUT) return 0;
        unsigned char *b = realloc(s->out, s->out_cap * 2);
        if (!b) return 0;
        s->out = b;
        s->out_cap *= 2;
    }
}

static void *inflater(void *arg)
{
    pf_ahead *a = arg;
    pthread_mutex_lock(&a->w.mu);
    for (;;) {
        while (!a->w.stop && a->work == a->tail) pthread_cond_wait(&a->w.work, &a->w.mu);
        if (a->w.stop) break;
        ahead_slot *s = &a->slot[a->work % AHEAD_SLOTS];
        pthread_mutex_unlock(&a->w.mu);
        int ok = inflate_slot(&a->un, s);
        pthread_mutex_lock(&a->w.mu);
        s->ok = ok;
        a->work++;
        pthread_cond_signal(&a->w.done);
    }
    pthread_mutex_unlock(&a->w.mu);
    return NULL;
}

pf_ahead *op_pf_ahead_new(void)
{
    pf_ahead *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    if (!op_worker_start(&a->w, 1, inflater, a)) {
        op_worker_stop(&a->w);
        free(a);
        return NULL;
    }
    return a;
}

int op_pf_ahead_give(pf_ahead *a, uint64_t key, int zstd, const unsigned char *z, size_t n)
{
    if (n > AHEAD_MAX_IN) return -1;
    /* Only the reader moves tail, and the inflater never touches a slot
     * past work, so the slot at tail is the reader's to fill unlocked. */
    pthread_mutex_lock(&a->w.mu);
    int full = a->tail - a->head == AHEAD_SLOTS;
    pthread_mutex_unlock(&a->w.mu);
    if (full) return 1;
    ahead_slot *s = &a->slot[a->tail % AHEAD_SLOTS];
    if (s->in_cap < n) {
        unsigned char *b = realloc(s->in, n);
        if (!b) return -1;
        s->in = b;
        s->in_cap = n;
    }
    memcpy(s->in, z, n);
    s->in_n = n;
    s->key = key;
    s->zstd = zstd;
    pthread_mutex_lock(&a->w.mu);
    a->tail++;
    pthread_cond_signal(&a->w.work);
    pthread_mutex_unlock(&a->w.mu);
    return 0;
}

int op_pf_ahead_take(pf_ahead *a, uint64_t key, size_t n, const unsigned char **out, size_t *out_n)
{
    pthread_mutex_lock(&a->w.mu);
    ahead_slot *s = &a->slot[a->head % AHEAD_SLOTS];
    if (a->head == a->tail || s->key != key || s->in_n != n) { /* not given: too big, or the queue was full */
        pthread_mutex_unlock(&a->w.mu);
        return 0;
    }
    while (a->work == a->head) pthread_cond_wait(&a->w.done, &a->w.mu);
    int ok = s->ok;
    if (ok) {
        *out = s->out;
        *out_n = s->out_n;
        a->held = 1;
        atomic_fetch_add_explicit(&g_taken, 1, memory_order_relaxed);
    } else {
        a->head++;
    }
    pthread_mutex_unlock(&a->w.mu);
    return ok;
}

void op_pf_ahead_release(pf_ahead *a)
{
    pthread_mutex_lock(&a->w.mu);
    if (a->held) {
        a->held = 0;
        a->head++;
    }
    pthread_mutex_unlock(&a->w.mu);
}

void op_pf_ahead_free(pf_ahead *a)
{
    if (!a) return;
    op_worker_stop(&a->w);
    for (int i = 0; i < AHEAD_SLOTS; i++) {
        free(a->slot[i].in);
        free(a->slot[i].out);
    }
    op_pf_unpackers_free(&a->un);
    free(a);
}

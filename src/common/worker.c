/* Helper threads and their lock (worker.h). */
#include "common/worker.h"

#include <string.h>

#include "common/quietthread.h"

unsigned op_worker_start(op_worker *w, unsigned n, void *(*fn)(void *), void *arg)
{
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->work, NULL);
    pthread_cond_init(&w->done, NULL);
    if (n > OP_WORKERS_MAX) n = OP_WORKERS_MAX;
    while (w->n < n && op_thread_start_quiet(&w->th[w->n], NULL, fn, arg) == 0) w->n++;
    return w->n;
}

void op_worker_stop(op_worker *w)
{
    if (w->n) {
        pthread_mutex_lock(&w->mu);
        w->stop = 1;
        pthread_cond_broadcast(&w->work);
        pthread_mutex_unlock(&w->mu);
        for (unsigned i = 0; i < w->n; i++) pthread_join(w->th[i], NULL);
        w->n = 0;
    }
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->done);
}

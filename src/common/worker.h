/* The helper threads a writer or reader starts inside the program, and
 * what they share with their owner (worker.c): one lock, a signal for the
 * threads (work to take, or stop) and one for the owner (a piece done), a
 * stop flag set under the lock. The parallel gzip writer, a .pftrace's
 * compressing thread, a streamed trace's writing thread and the .pftrace
 * reader's inflater are each one of these, their queues their own. Each
 * thread starts with every signal blocked (quietthread.h); its function
 * marks itself never to record (capture/thread.h), which common/ cannot
 * call. */
#ifndef OPPROF_COMMON_WORKER_H
#define OPPROF_COMMON_WORKER_H

#include <pthread.h>

#define OP_WORKERS_MAX 4

typedef struct op_worker {
    pthread_mutex_t mu;
    pthread_cond_t work; /* to the threads: something to take, or stop */
    pthread_cond_t done; /* to the owner: a piece is done */
    int stop;            /* the threads leave their loop once it is set (under mu) */
    unsigned n;          /* threads running */
    pthread_t th[OP_WORKERS_MAX];
} op_worker;

/* Sets up w's lock and signals and starts up to n (at most
 * OP_WORKERS_MAX) threads running fn(arg). Returns how many started: 0
 * when none could (the caller then does the work itself); the lock and
 * signals are set up either way, for op_worker_stop. */
unsigned op_worker_start(op_worker *w, unsigned n, void *(*fn)(void *), void *arg);

/* Sets stop, wakes the threads, joins them, and tears the lock and signals
 * down. A thread's loop must leave when it sees stop, whatever it still
 * holds (the owner frees that). */
void op_worker_stop(op_worker *w);

#endif

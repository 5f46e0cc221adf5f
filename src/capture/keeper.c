/* The pool keeper: a background thread that maps chunks into the pool
 * ahead of the recording threads.
 *
 * A fresh chunk costs its pages' zeroing in the kernel, about 0.5 ms per
 * MiB on this project's VMs: 12 ns per 24-byte event, more than half of
 * what recording one costs. Chunks reused from the pool cost nothing, but
 * a process's first long session has none to reuse. So when a thread takes
 * a full-size chunk and leaves fewer than OP_KEEP_AHEAD_CHUNKS in the
 * pool, it wakes this thread, which maps (and faults in) chunks until the
 * pool holds that many again, on another core, while the recording goes
 * on. Recording threads never wait for it: when the pool is empty they map
 * a chunk themselves, as before.
 *
 * The thread runs while a session that keeps events runs: started at its
 * start (never from a recording thread, which may be inside a malloc
 * interposer), joined at its stop, so that a program is no more threaded
 * between sessions than it was without opprof. It takes no signal and
 * sleeps on a condition variable between requests. A child forked while a
 * keeper ran never starts one: after a multi-threaded fork POSIX allows a
 * child only async-signal-safe calls, ThreadSanitizer refuses new threads,
 * and the child's threads map their own chunks instead. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#include "capture/state.h"

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int want, quit;       /* a request not yet served; asked to exit (under lock) */
    _Atomic int running;  /* the thread exists */
    int no_thread;        /* forked while a keeper ran: never start one here */
    pthread_t thread;
} K = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void *keeper_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&K.lock);
    for (;;) {
        while (!K.want && !K.quit) pthread_cond_wait(&K.wake, &K.lock);
        if (K.quit) break;
        K.want = 0;
        pthread_mutex_unlock(&K.lock);
        op_capture_prefill(OP_KEEP_AHEAD_CHUNKS);
        pthread_mutex_lock(&K.lock);
    }
    pthread_mutex_unlock(&K.lock);
    return NULL;
}

/* Only the forking thread goes on in the child, and the lock may have been
 * held by another. */
static void fork_child(void)
{
    pthread_mutex_init(&K.lock, NULL);
    pthread_cond_init(&K.wake, NULL);
    K.want = K.quit = 0;
    if (atomic_load_explicit(&K.running, memory_order_relaxed)) K.no_thread = 1;
    atomic_store_explicit(&K.running, 0, memory_order_relaxed);
}

static void install(void)
{
    pthread_atfork(NULL, NULL, fork_child);
}

void op_keeper_start(void)
{
    pthread_once(&g_once, install);
    if (atomic_load_explicit(&K.running, memory_order_acquire) || K.no_thread) return;
    K.want = K.quit = 0;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return;
    pthread_attr_setstacksize(&attr, (size_t)64 << 10); /* it calls mmap and pthread functions only */
    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved); /* the program's signals go to its own threads */
    int rc = pthread_create(&K.thread, &attr, keeper_main, NULL);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0) return; /* without a keeper, threads map their own chunks */
    pthread_setname_np(K.thread, "opprof-pool");
    atomic_store_explicit(&K.running, 1, memory_order_release);
}

void op_keeper_stop(void)
{
    if (!atomic_load_explicit(&K.running, memory_order_acquire)) return;
    pthread_mutex_lock(&K.lock);
    K.quit = 1;
    pthread_cond_signal(&K.wake);
    pthread_mutex_unlock(&K.lock);
    pthread_join(K.thread, NULL);
    atomic_store_explicit(&K.running, 0, memory_order_release);
}

void op_keeper_wake(void)
{
    if (!atomic_load_explicit(&K.running, memory_order_acquire)) return;
    pthread_mutex_lock(&K.lock);
    K.want = 1;
    pthread_cond_signal(&K.wake);
    pthread_mutex_unlock(&K.lock);
}

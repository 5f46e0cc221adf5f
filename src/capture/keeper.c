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
 * The thread starts with the first session that keeps events (never from
 * a recording thread, which may be inside a malloc interposer) and then
 * sleeps on a condition variable between requests, taking no signal; a
 * session's start and stop cost nothing more. Around fork() it is joined
 * and, in the parent, started again: a fork is then no more multi-threaded
 * than the program made it (after a multi-threaded fork POSIX allows a
 * child only async-signal-safe calls, and ThreadSanitizer refuses the
 * child's new threads), and the child starts its own keeper with its first
 * session. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>

#include "capture/evstore.h"
#include "capture/keeper.h"
#include "capture/pool.h"
#include "common/quietthread.h"

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int want, quit;      /* a request not yet served; asked to exit (under lock) */
    _Atomic int running; /* the thread exists */
    int restart;         /* joined for a fork: the parent starts it again */
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
        op_evstore_keep_up();
        pthread_mutex_lock(&K.lock);
    }
    pthread_mutex_unlock(&K.lock);
    return NULL;
}

static void keeper_run(void)
{
    K.want = K.quit = 0;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return;
    pthread_attr_setstacksize(&attr, (size_t)64 << 10); /* it calls mmap and pthread functions only */
    int rc = op_thread_start_quiet(&K.thread, &attr, keeper_main, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0) return; /* without a keeper, threads map their own chunks */
    pthread_setname_np(K.thread, "opprof-pool");
    atomic_store_explicit(&K.running, 1, memory_order_release);
}

static void keeper_join(void)
{
    pthread_mutex_lock(&K.lock);
    K.quit = 1;
    pthread_cond_signal(&K.wake);
    pthread_mutex_unlock(&K.lock);
    pthread_join(K.thread, NULL);
    atomic_store_explicit(&K.running, 0, memory_order_release);
}

static void fork_prepare(void)
{
    K.restart = atomic_load_explicit(&K.running, memory_order_acquire);
    if (K.restart) keeper_join();
}

static void fork_parent(void)
{
    if (K.restart) keeper_run();
}

static void fork_child(void)
{
    K.restart = 0;
}

/* The pool's low-water hook: a thread took a full-size chunk and left
 * fewer than OP_KEEP_AHEAD_CHUNKS. */
static void keeper_wake(void)
{
    if (!atomic_load_explicit(&K.running, memory_order_acquire)) return;
    pthread_mutex_lock(&K.lock);
    K.want = 1;
    pthread_cond_signal(&K.wake);
    pthread_mutex_unlock(&K.lock);
}

static void install(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    op_pool_on_low(keeper_wake);
}

void op_keeper_start(void)
{
    pthread_once(&g_once, install);
    if (!atomic_load_explicit(&K.running, memory_order_acquire)) keeper_run();
}

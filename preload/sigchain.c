/* SIGINT and SIGTERM during the environment's session.
 *
 * Writing a trace takes locks and memory (the session lock, malloc, stdio),
 * none of which a signal handler may touch: the handler might have
 * interrupted the very thread that holds them. So the handler only notes the
 * signal and the thread it arrived on and posts a semaphore (sem_post is
 * async-signal-safe). A helper thread, started with the session and blocking
 * every signal, wakes on it, stops the session (the trace is marked incomplete) and
 * writes it through the usual atomic writers, while the interrupted thread
 * carries on undisturbed, so no lock it holds can stall the writing. Then the
 * helper gives the program its own dispositions back and sends the signal
 * again to the thread it first arrived on: the program's handler runs in a
 * real signal context with its own flags, or, with none, the default action
 * ends the process and its exit status is the signal's. A second signal
 * while the first is being written is not delayed: it goes straight to the
 * program's disposition (a second Ctrl-C kills at once).
 *
 * The program's handlers run whenever they were installed: those present
 * when the session starts are kept as "previous"; sigaction() and signal()
 * are interposed (this library is preloaded or linked ahead of libc) so that
 * a handler installed later is recorded as the program's and our handler
 * stays in front of it. A signal the program ignores stays ignored, and a
 * forked child gets the program's dispositions back (it has no session).
 * Not interposed: sigset, sysv_signal, bsd_signal and the raw system call.
 * The handler the program's gets is re-sent by tgkill, so its siginfo names
 * this process as the sender.
 *
 * No descriptor: a program may close every descriptor above 2 at start
 * (closefrom) and open its own files under the same numbers, so a wake-up
 * pipe would end up writing a byte into one of the program's files. */
#define _GNU_SOURCE
#include "sigchain.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default"), no_instrument_function))
#define NOINSTR __attribute__((no_instrument_function))

enum { OFF, CATCHING, RELEASED };

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef sighandler_t (*signal_fn)(int, sighandler_t);

static const int k_sigs[2] = {SIGINT, SIGTERM};

static struct {
    pthread_mutex_t lock;     /* prev, ours, state changes; held with every signal blocked */
    _Atomic int state;
    pid_t pid;                /* the process whose session it is */
    struct sigaction prev[2]; /* the program's dispositions, as it believes them to be */
    int ours[2];              /* our handler is the real disposition */
    sem_t wake;               /* posted: a signal was caught, or the session ended */
    int have_wake;
    pthread_t helper;
    int joined;
    _Atomic int caught;       /* the signal being written for, 0 none */
    _Atomic pid_t caught_tid;
    op_sigchain_fn fn;
    sigset_t fork_mask;
} G = {.lock = PTHREAD_MUTEX_INITIALIZER};

static sigaction_fn g_real_sigaction;
static signal_fn g_real_signal;

static NOINSTR void resolve(void)
{
    if (!__atomic_load_n(&g_real_sigaction, __ATOMIC_ACQUIRE)) {
        sigaction_fn f;
        *(void **)&f = dlsym(RTLD_NEXT, "sigaction");
        __atomic_store_n(&g_real_sigaction, f, __ATOMIC_RELEASE);
    }
    if (!__atomic_load_n(&g_real_signal, __ATOMIC_ACQUIRE)) {
        signal_fn f;
        *(void **)&f = dlsym(RTLD_NEXT, "signal");
        __atomic_store_n(&g_real_signal, f, __ATOMIC_RELEASE);
    }
}

/* At load, so that no later call, even from a signal handler, has to look
 * the functions up (dlsym is not async-signal-safe). */
__attribute__((constructor, no_instrument_function)) static void resolve_at_load(void)
{
    resolve();
}

static NOINSTR int real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    sigaction_fn f = __atomic_load_n(&g_real_sigaction, __ATOMIC_ACQUIRE);
    if (!f) {
        resolve(); /* only when called before this library's constructor ran */
        f = __atomic_load_n(&g_real_sigaction, __ATOMIC_ACQUIRE);
    }
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    return f(sig, act, old);
}

static NOINSTR int slot(int sig)
{
    return sig == SIGINT ? 0 : sig == SIGTERM ? 1 : -1;
}

/* The lock is taken with every signal blocked, so that no handler of this
 * thread can run while it holds it (a handler may call sigaction). */
static NOINSTR void lock(sigset_t *saved)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, saved);
    pthread_mutex_lock(&G.lock);
}

static NOINSTR void unlock(const sigset_t *saved)
{
    pthread_mutex_unlock(&G.lock);
    pthread_sigmask(SIG_SETMASK, saved, NULL);
}

/* The program's disposition for slot k, now: ignore, default, or its handler. */
static NOINSTR void pass_on(int k, int sig, siginfo_t *si, void *uc)
{
    struct sigaction a = G.prev[k];
    if (a.sa_handler == SIG_IGN) return;
    if (a.sa_handler == SIG_DFL) {
        struct sigaction d;
        memset(&d, 0, sizeof d);
        d.sa_handler = SIG_DFL;
        real_sigaction(sig, &d, NULL);
        raise(sig); /* blocked while this handler runs: delivered, by default, when it returns */
        return;
    }
    if (a.sa_flags & SA_RESETHAND) {
        G.prev[k].sa_handler = SIG_DFL;
        G.prev[k].sa_flags &= ~SA_SIGINFO;
    }
    if (a.sa_flags & SA_SIGINFO)
        a.sa_sigaction(sig, si, uc);
    else
        a.sa_handler(sig);
}

static NOINSTR void on_signal(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    int k = slot(sig), expect = 0;
    if (k < 0) {
        errno = saved;
        return;
    }
    if (getpid() == G.pid && atomic_load(&G.state) == CATCHING &&
        atomic_compare_exchange_strong(&G.caught, &expect, sig)) {
        atomic_store(&G.caught_tid, (pid_t)syscall(SYS_gettid));
        if (sem_post(&G.wake) != 0) { /* the helper cannot be woken: the program gets the signal now */
            atomic_store(&G.caught, 0);
            pass_on(k, sig, si, uc);
        }
    } else {
        pass_on(k, sig, si, uc); /* a second signal, or another process: no delay */
    }
    errno = saved;
}

/* Makes the real disposition of slot k follow what the program asked for:
 * ignored stays ignored, anything else goes through on_signal first. */
static NOINSTR void apply_locked(int k)
{
    struct sigaction a;
    memset(&a, 0, sizeof a);
    if (G.prev[k].sa_handler == SIG_IGN) {
        a.sa_handler = SIG_IGN;
        real_sigaction(k_sigs[k], &a, NULL);
        G.ours[k] = 0;
    } else if (!G.ours[k]) {
        a.sa_sigaction = on_signal;
        a.sa_flags = SA_SIGINFO | SA_RESTART; /* the program sees its own EINTR later, from its own handler */
        sigemptyset(&a.sa_mask);
        sigaddset(&a.sa_mask, SIGINT);
        sigaddset(&a.sa_mask, SIGTERM);
        if (real_sigaction(k_sigs[k], &a, NULL) == 0) G.ours[k] = 1;
    }
}

static NOINSTR void release_locked(void)
{
    if (atomic_load(&G.state) != CATCHING) return;
    for (int k = 0; k < 2; k++) {
        real_sigaction(k_sigs[k], &G.prev[k], NULL);
        G.ours[k] = 0;
    }
    atomic_store(&G.state, RELEASED);
}

static NOINSTR void *helper_main(void *arg)
{
    (void)arg;
    while (sem_wait(&G.wake) != 0)
        if (errno != EINTR) return NULL;
    int sig = atomic_load(&G.caught);
    if (!sig) return NULL; /* the session ended at exit without a signal */
    G.fn(sig);
    sigset_t saved;
    lock(&saved);
    release_locked();
    unlock(&saved);
    /* To the thread it came to, which may be gone by now. */
    if (syscall(SYS_tgkill, G.pid, atomic_load(&G.caught_tid), sig) != 0) kill(G.pid, sig);
    return NULL;
}

static NOINSTR void fork_prepare(void)
{
    sigset_t saved;
    lock(&saved);
    G.fork_mask = saved;
}

static NOINSTR void fork_parent(void)
{
    unlock(&G.fork_mask);
}

/* The child has no session (opprof's own fork handler ends it there): it
 * gets the program's dispositions back and the interposers pass through. */
static NOINSTR void fork_child(void)
{
    if (atomic_load(&G.state) == CATCHING)
        for (int k = 0; k < 2; k++) real_sigaction(k_sigs[k], &G.prev[k], NULL);
    if (atomic_load(&G.state) != OFF) atomic_store(&G.state, RELEASED);
    if (G.have_wake) sem_init(&G.wake, 0, 0); /* the parent's helper is not here to wait on it */
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    memcpy(&G.lock, &fresh, sizeof fresh);
    pthread_sigmask(SIG_SETMASK, &G.fork_mask, NULL);
}

int op_sigchain_install(op_sigchain_fn fn)
{
    resolve();
    if (!g_real_sigaction) {
        errno = ENOSYS;
        return -1;
    }
    if (sem_init(&G.wake, 0, 0) != 0) return -1;
    G.have_wake = 1;
    G.fn = fn;
    G.pid = getpid();
    /* The helper blocks every signal, so that none is ever handled on it. */
    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved);
    int rc = pthread_create(&G.helper, NULL, helper_main, NULL);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    if (rc != 0) {
        sem_destroy(&G.wake);
        G.have_wake = 0;
        errno = rc;
        return -1;
    }
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    lock(&saved);
    for (int k = 0; k < 2; k++) {
        real_sigaction(k_sigs[k], NULL, &G.prev[k]);
        apply_locked(k);
    }
    atomic_store(&G.state, CATCHING);
    unlock(&saved);
    return 0;
}

void op_sigchain_end(void)
{
    if (atomic_load(&G.state) == OFF || getpid() != G.pid || G.joined) return;
    sigset_t saved;
    lock(&saved);
    int caught = atomic_load(&G.caught);
    if (!caught) release_locked();
    unlock(&saved);
    if (!caught) (void)sem_post(&G.wake); /* wakes the helper to leave (caught is 0: it finds no signal) */
    G.joined = 1;
    pthread_join(G.helper, NULL);
}

/* ---- the interposers: the program's view of SIGINT and SIGTERM ---- */

static NOINSTR int chain_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    int k = slot(sig);
    if (k < 0 || atomic_load(&G.state) != CATCHING) return real_sigaction(sig, act, old);
    sigset_t saved;
    lock(&saved);
    if (atomic_load(&G.state) != CATCHING || getpid() != G.pid) {
        unlock(&saved);
        return real_sigaction(sig, act, old);
    }
    if (old) *old = G.prev[k];
    if (act) {
        G.prev[k] = *act;
        apply_locked(k);
    }
    unlock(&saved);
    return 0;
}

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    return chain_sigaction(sig, act, old);
}

/* glibc's signal(): BSD semantics, the handler stays and calls restart. */
EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
    if (slot(sig) < 0 || atomic_load(&G.state) != CATCHING) {
        resolve();
        if (!g_real_signal) {
            errno = ENOSYS;
            return SIG_ERR;
        }
        return g_real_signal(sig, handler);
    }
    struct sigaction a, old;
    memset(&a, 0, sizeof a);
    a.sa_handler = handler;
    sigemptyset(&a.sa_mask);
    a.sa_flags = SA_RESTART;
    if (chain_sigaction(sig, &a, &old) != 0) return SIG_ERR;
    return old.sa_handler;
}

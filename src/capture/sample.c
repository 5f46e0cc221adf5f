/* The sampler (see sample.h).
 *
 * Each joined thread owns a slot of a static table, so the signal handler
 * can tell its own signals (si_code SI_TIMER, si_value pointing into the
 * table) from anyone else's without following a foreign pointer. A slot's
 * buffers are mapped when its thread joins, lazily (MAP_NORESERVE): the
 * samples (ticks and stack entry), the stack arena and its index. The
 * handler is the only writer of a slot's buffers; readers (op_sample_take)
 * read the published count with acquire and entries through their
 * addresses, as the collector reads the stack table. Buffers full: the
 * sample is counted as dropped, never blocked on.
 *
 * What the handler does: reads the clock, walks the stack (libunwind from
 * the signal frame, or frame pointers bounded by the thread's stack), finds
 * or adds the stack in the thread's index, appends the sample. No lock, no
 * malloc, errno kept. */
#define _GNU_SOURCE
#include "capture/sample.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "capture/clock.h"
#include "capture/stacktab.h"
#include "capture/state.h"
#include "common/error.h"

#define MAX_THREADS 4096
#define SAMPLES_CAP ((size_t)1 << 19)  /* per thread and session: ~9 min of CPU at 1 kHz */
#define ARENA_WORDS ((size_t)1 << 19)  /* 4 MiB of distinct stacks */
#define SLOTS ((size_t)1 << 15)        /* distinct stacks per thread (half full at most) */

enum { FREE, ARMED, STOPPED };

typedef struct sthread {
    _Atomic int state;
    _Atomic int busy;      /* in the handler */
    uint32_t serial;       /* the sampling session it joined */
    int64_t pid, tid;
    char name[16];
    timer_t timer;
    uintptr_t stack_lo, stack_hi; /* for the frame-pointer walk; 0: unknown */
    int64_t cpu_prev;      /* the thread's CPU clock at its last sample (or join); -1: unreadable */
    op_sample_rec *samples;
    _Atomic size_t n;
    size_t read;
    uint64_t *arena;
    size_t arena_used;
    uint64_t **slots;
    size_t nstacks;
    _Atomic uint64_t dropped;
    uint64_t dropped_read;
} sthread;

static sthread g_th[MAX_THREADS];
static _Atomic unsigned g_nth;
static _Atomic int g_on;
static _Atomic uint32_t g_serial;
static _Atomic int g_lost;
static _Atomic int g_session; /* a session samples (g_on may have gone for a lost signal) */
static int g_sig;
static int g_installed;
static unsigned g_depth;
static int g_unwind; /* OP_UNWIND_FP or OP_UNWIND_LIBUNWIND */
static int64_t g_period_ns;
static _Atomic uint64_t g_threads_dropped;
static pthread_mutex_t g_join_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t g_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
static __thread uint32_t t_serial;

static inline uint64_t hash_frames(const uint64_t *f, uint32_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    for (uint32_t i = 0; i < n; i++) {
        h = (h ^ f[i]) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h | 1;
}

/* The entry of frames f in st's arena, added when new; NULL when full. */
static const uint64_t *intern(sthread *st, const uint64_t *f, uint32_t n)
{
    uint64_t h = hash_frames(f, n);
    size_t mask = SLOTS - 1, i = h & mask;
    for (uint64_t *e; (e = st->slots[i]) != NULL; i = (i + 1) & mask)
        if (e[0] == h && e[1] == n && memcmp(e + 2, f, n * sizeof *f) == 0) return e;
    if ((st->nstacks + 1) * 2 > SLOTS || st->arena_used + 2 + n > ARENA_WORDS) return NULL;
    uint64_t *e = st->arena + st->arena_used;
    e[0] = h;
    e[1] = n;
    memcpy(e + 2, f, n * sizeof *f);
    st->arena_used += 2 + n;
    st->slots[i] = e;
    st->nstacks++;
    return e;
}

static int regs_of(const ucontext_t *uc, uintptr_t *pc, uintptr_t *sp, uintptr_t *fp)
{
#if defined(__x86_64__)
    *pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    *sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
    *fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
    return 0;
#elif defined(__aarch64__)
    *pc = (uintptr_t)uc->uc_mcontext.pc;
    *sp = (uintptr_t)uc->uc_mcontext.sp;
    *fp = (uintptr_t)uc->uc_mcontext.regs[29];
    return 0;
#else
    (void)uc, (void)pc, (void)sp, (void)fp;
    return -1;
#endif
}

/* Frame pointers: each frame's saved pointer must lie above the last, on
 * the thread's stack (between the interrupted sp and the stack's top), so a
 * frame of code built without them ends the walk instead of a bad read. */
static int walk_fp(const sthread *st, uintptr_t sp, uintptr_t fp, uint64_t *out, int max)
{
    int n = 0;
    uintptr_t hi = st->stack_hi;
    while (n < max && hi && fp >= sp && fp + 2 * sizeof(uintptr_t) <= hi && (fp & (sizeof(uintptr_t) - 1)) == 0) {
        const uintptr_t *frame = (const uintptr_t *)fp;
        uintptr_t next = frame[0], ret = frame[1];
        if (ret < 4096) break;
        out[n++] = ret;
        if (next <= fp) break;
        fp = next;
    }
    return n;
}

/* The calling thread's CPU time in ns, -1 when it cannot be read
 * (clock_gettime is async-signal-safe). */
static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return -1;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void take(sthread *st, void *ucv, int overrun)
{
    uint64_t ticks = op_g.clock ? (uint64_t)op_g.clock(op_g.clock_ctx) : op_cycles();
    size_t n = atomic_load_explicit(&st->n, memory_order_relaxed);
    if (n >= SAMPLES_CAP) {
        atomic_fetch_add_explicit(&st->dropped, 1, memory_order_relaxed);
        return;
    }
    uint64_t f[OP_STACK_MAX_DEPTH];
    uintptr_t pc, sp, fp;
    if (regs_of(ucv, &pc, &sp, &fp) != 0) return;
    f[0] = (uint64_t)pc + 1; /* symbolized as a return address is, at the byte before */
    int nf = 1;
    int k = -1;
    if (g_unwind == OP_UNWIND_LIBUNWIND) k = op_stack_walk_signal(ucv, f + 1, (int)g_depth - 1);
    if (k < 0) k = walk_fp(st, sp, fp, f + 1, (int)g_depth - 1);
    nf += k;
    const uint64_t *e = intern(st, f, (uint32_t)nf);
    if (!e) {
        atomic_fetch_add_explicit(&st->dropped, 1, memory_order_relaxed);
        return;
    }
    st->samples[n].ticks = ticks;
    st->samples[n].stack = e;
    st->samples[n].weight = 1 + (uint64_t)(overrun > 0 ? overrun : 0);
    /* The time it stands for, from the thread's own clock: summed, the
     * overruns fall short of it on a busy machine. */
    int64_t now = thread_cpu_ns();
    st->samples[n].cpu_ns = now >= 0 && st->cpu_prev >= 0 && now > st->cpu_prev ? now - st->cpu_prev : 0;
    st->cpu_prev = now;
    atomic_store_explicit(&st->n, n + 1, memory_order_release);
}

static void on_signal(int sig, siginfo_t *si, void *ucv)
{
    (void)sig;
    /* Only our timers' signals are ours; any other (a kill from outside)
     * is let go: the disposition was the default when we took the signal,
     * which would have ended the process. */
    if (!si || si->si_code != SI_TIMER) return;
    uintptr_t p = (uintptr_t)si->si_value.sival_ptr, base = (uintptr_t)g_th;
    if (p < base || p >= base + sizeof g_th || (p - base) % sizeof *g_th) return;
    sthread *st = (sthread *)p;
    int saved = errno;
    atomic_store(&st->busy, 1);
    if (atomic_load(&st->state) == ARMED && st->serial == atomic_load_explicit(&g_serial, memory_order_relaxed))
        take(st, ucv, si->si_overrun);
    atomic_store(&st->busy, 0);
    errno = saved;
}

static int handler_is_ours(void)
{
    struct sigaction cur;
    if (sigaction(g_sig, NULL, &cur) != 0) return 0;
    return (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_signal;
}

static void disarm(sthread *st)
{
    int armed = ARMED;
    if (atomic_compare_exchange_strong(&st->state, &armed, STOPPED)) timer_delete(st->timer);
}

static void disarm_all(void)
{
    unsigned n = atomic_load(&g_nth);
    for (unsigned i = 0; i < n; i++) disarm(&g_th[i]);
    for (unsigned i = 0; i < n; i++)
        while (atomic_load(&g_th[i].busy)) sched_yield();
}

/* The program put its own handler on our signal: sampling ends there,
 * and the trace says so (op_sample_lost). */
static int check_signal(void)
{
    if (!g_installed || atomic_load(&g_lost) || handler_is_ours()) return 0;
    atomic_store(&g_lost, 1);
    atomic_store(&g_on, 0);
    disarm_all();
    return -1;
}

static void on_thread_exit(void *arg)
{
    sthread *st = arg;
    if (st && st->serial == t_serial) disarm(st);
}

static void make_key(void)
{
    (void)pthread_key_create(&g_key, on_thread_exit);
}

static void *map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void unmap_slot(sthread *st)
{
    if (st->samples) munmap(st->samples, SAMPLES_CAP * sizeof *st->samples);
    if (st->arena) munmap(st->arena, ARENA_WORDS * sizeof *st->arena);
    if (st->slots) munmap(st->slots, SLOTS * sizeof *st->slots);
    memset(st, 0, sizeof *st);
}

/* The calling thread's stack, for the frame-pointer walk. */
static void stack_bounds(sthread *st)
{
    pthread_attr_t a;
    void *addr = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &a) != 0) return;
    if (pthread_attr_getstack(&a, &addr, &size) == 0 && addr) {
        st->stack_lo = (uintptr_t)addr;
        st->stack_hi = (uintptr_t)addr + size;
    }
    pthread_attr_destroy(&a);
}

int op_sample_join(void)
{
    uint32_t serial = atomic_load(&g_serial);
    if (!atomic_load(&g_on) || t_serial == serial) return 0;
    pthread_mutex_lock(&g_join_lock);
    if (!atomic_load(&g_on) || check_signal() != 0) {
        pthread_mutex_unlock(&g_join_lock);
        return -1;
    }
    unsigned i = atomic_load(&g_nth);
    if (i >= MAX_THREADS) {
        pthread_mutex_unlock(&g_join_lock);
        atomic_fetch_add(&g_threads_dropped, 1);
        return -1;
    }
    sthread *st = &g_th[i];
    st->serial = serial;
    st->pid = getpid();
    st->tid = (int64_t)syscall(SYS_gettid);
    pthread_getname_np(pthread_self(), st->name, sizeof st->name);
    st->samples = map(SAMPLES_CAP * sizeof *st->samples);
    st->arena = map(ARENA_WORDS * sizeof *st->arena);
    st->slots = map(SLOTS * sizeof *st->slots);
    if (g_unwind == OP_UNWIND_FP) stack_bounds(st);
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = g_sig;
    sev.sigev_value.sival_ptr = st;
    sev._sigev_un._tid = (pid_t)st->tid;
    int ok = st->samples && st->arena && st->slots && timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &st->timer) == 0;
    if (!ok) {
        unmap_slot(st);
        pthread_mutex_unlock(&g_join_lock);
        return -1;
    }
    atomic_store(&st->state, ARMED);
    atomic_store(&g_nth, i + 1); /* readers see the slot once it is whole */
    pthread_mutex_unlock(&g_join_lock);
    t_serial = serial;
    pthread_once(&g_key_once, make_key);
    pthread_setspecific(g_key, st);
    struct itimerspec its;
    its.it_interval.tv_sec = g_period_ns / 1000000000;
    its.it_interval.tv_nsec = g_period_ns % 1000000000;
    its.it_value = its.it_interval;
    st->cpu_prev = thread_cpu_ns();
    if (timer_settime(st->timer, 0, &its, NULL) != 0) disarm(st);
    return 0;
}

/* The signal: OPPROF_SAMPLE_SIGNAL, else the highest real-time signal
 * whose disposition is the default (no handler of the program's, not
 * ignored); ours again when an earlier session installed it. */
static int pick_signal(void)
{
    if (g_installed && handler_is_ours()) return g_sig;
    const char *env = getenv("OPPROF_SAMPLE_SIGNAL");
    if (env && *env) {
        char *end;
        long s = strtol(env, &end, 10);
        if (*end || s < SIGRTMIN || s > SIGRTMAX)
            return op_fail(OPPROF_E_INVAL, "OPPROF_SAMPLE_SIGNAL=%s: not a real-time signal (%d to %d)", env,
                           SIGRTMIN, SIGRTMAX);
        struct sigaction cur;
        if (sigaction((int)s, NULL, &cur) != 0 || cur.sa_handler != SIG_DFL)
            return op_fail(OPPROF_E_INVAL, "OPPROF_SAMPLE_SIGNAL=%s: the program handles or ignores that signal",
                           env);
        return (int)s;
    }
    for (int s = SIGRTMAX; s >= SIGRTMIN; s--) {
        struct sigaction cur;
        if (sigaction(s, NULL, &cur) == 0 && cur.sa_handler == SIG_DFL && !(cur.sa_flags & SA_SIGINFO)) return s;
    }
    return op_fail(OPPROF_E_UNSUPPORTED, "sampling: every real-time signal has a handler already");
}

int op_sample_start(unsigned hz, unsigned depth, unsigned unwind)
{
    if (hz < 1 || hz > 100000) return op_fail(OPPROF_E_INVAL, "opprof_start: sample_hz %u is not in 1..100000", hz);
    if (unwind > OP_UNWIND_LIBUNWIND) return op_fail(OPPROF_E_INVAL, "opprof_start: sample_unwind %u is unknown", unwind);
    if (atomic_load(&g_on)) op_sample_stop();
    int lib = op_stack_load_for_signals() == 0;
    if (unwind == OP_UNWIND_LIBUNWIND && !lib)
        return op_fail(OPPROF_E_UNSUPPORTED, "opprof_start: sample_unwind libunwind: %s",
                       op_stack_load_error()[0] ? op_stack_load_error() : "libunwind cannot walk from a signal");
    int sig = pick_signal();
    if (sig < 0) return sig;
    /* The earlier session's buffers go (their samples were taken). */
    unsigned n = atomic_load(&g_nth);
    for (unsigned i = 0; i < n; i++) unmap_slot(&g_th[i]);
    atomic_store(&g_nth, 0);
    g_unwind = unwind == OP_UNWIND_FP || !lib ? OP_UNWIND_FP : OP_UNWIND_LIBUNWIND;
    g_depth = depth < 2 ? 2 : depth > OP_STACK_MAX_DEPTH ? OP_STACK_MAX_DEPTH : depth;
    g_period_ns = 1000000000 / (int64_t)hz;
    atomic_store(&g_lost, 0);
    atomic_store(&g_threads_dropped, 0);
    if (!g_installed || sig != g_sig) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (sigaction(sig, &sa, NULL) != 0)
            return op_fail(OPPROF_E_UNSUPPORTED, "sampling: cannot handle signal %d: %s", sig, strerror(errno));
        g_installed = 1; /* stays: a late timer signal must find a handler, not the default action */
    }
    g_sig = sig;
    atomic_fetch_add(&g_serial, 1);
    atomic_store(&g_session, 1);
    atomic_store(&g_on, 1);
    if (op_sample_join() != 0) {
        atomic_store(&g_on, 0);
        atomic_store(&g_session, 0);
        return op_fail(OPPROF_E_UNSUPPORTED, "sampling: cannot arm a CPU-time timer: %s", strerror(errno));
    }
    return 0;
}

void op_sample_stop(void)
{
    pthread_mutex_lock(&g_join_lock);
    (void)check_signal();
    atomic_store(&g_on, 0);
    atomic_store(&g_session, 0);
    disarm_all();
    pthread_mutex_unlock(&g_join_lock);
}

int op_sample_on(void)
{
    return atomic_load_explicit(&g_on, memory_order_relaxed);
}

/* The thread's name now (it may have been set after it joined), or the
 * one it had then. */
static void name_of(const sthread *st, char *out, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%lld/comm", (long long)st->tid);
    FILE *f = st->pid == getpid() ? fopen(path, "r") : NULL;
    if (f && fgets(out, (int)cap, f)) {
        out[strcspn(out, "\n")] = '\0';
        fclose(f);
        return;
    }
    if (f) fclose(f);
    snprintf(out, cap, "%s", st->name);
}

uint64_t op_sample_take(uint64_t from, uint64_t to, op_sample_fn fn, void *ctx)
{
    pthread_mutex_lock(&g_join_lock);
    (void)check_signal();
    unsigned nth = atomic_load(&g_nth);
    uint64_t dropped = atomic_exchange(&g_threads_dropped, 0);
    for (unsigned i = 0; i < nth; i++) {
        sthread *st = &g_th[i];
        size_t n = atomic_load_explicit(&st->n, memory_order_acquire);
        size_t a = st->read;
        while (a < n && st->samples[a].ticks < from) a++;
        size_t b = a;
        while (b < n && st->samples[b].ticks <= to) b++;
        st->read = b;
        uint64_t d = atomic_load(&st->dropped);
        dropped += d - st->dropped_read;
        st->dropped_read = d;
        if (b > a) {
            char name[64];
            name_of(st, name, sizeof name);
            fn(ctx, st->pid, st->tid, name, st->samples + a, b - a);
        }
    }
    pthread_mutex_unlock(&g_join_lock);
    return dropped;
}

int64_t op_sample_period_ns(void)
{
    return atomic_load(&g_session) ? g_period_ns : 0;
}

int op_sample_signal(void)
{
    return g_sig;
}

int op_sample_lost(void)
{
    return atomic_load(&g_lost);
}

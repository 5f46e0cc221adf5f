/* The flight recorder: a ring session (session.c, capture/ring.c) that
 * records all the time, and a writer thread that dumps what the rings hold
 * when asked: by opprof_flight_dump (which waits for the file), by a signal
 * or opprof_flight_dump_async (which do not), by a trigger, or by a step
 * slower than the threshold. The program's threads never write a dump:
 * a slow step only wakes the writer, so the step after it runs at once. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/clock.h"
#include "common/error.h"
#include "common/quietthread.h"
#include "live/flight.h"
#include "live/flight_policy.h"
#include "live/listener.h"
#include "live/odsock.h"
#include "opprof_trace.h"
#include "session/session.h"

#define CHUNK_BYTES ((size_t)1 << 20)
#define DEFAULT_RING ((size_t)64 << 20)

/* A dump someone waits for. */
typedef struct sync_req {
    const char *path;
    const char *reason;
    char *written;
    size_t cap;
    int rc, done;
    struct sync_req *next;
} sync_req;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* W, but the atomics */
static pthread_cond_t g_done = PTHREAD_COND_INITIALIZER;

static struct {
    _Atomic int running;
    _Atomic int async_pending; /* a signal or opprof_flight_dump_async */
    _Atomic unsigned long long dumps;
    sem_t wake;                /* posted: work for the writer (async-signal-safe, and no descriptor) */
    pthread_t writer;
    int quit;
    opprof_flight_config cfg;
    char *path, *dir, *range;  /* the config's strings, copied */
    unsigned long range_count; /* slow_range: its ends seen */
    uint64_t tick0;            /* slow_range: the clock at the start, to turn ticks into ns */
    int64_t mono0;
    int ticks_are_ns;
    unsigned long seq;         /* dump numbers given */
    sync_req *queue;
    char slow_reason[400];
    int slow_pending;
    unsigned slow_slot;        /* the policy's place the waiting slow-step dump goes to */
    _Atomic unsigned long signals; /* signals caught, and of those told of so far */
    unsigned long signals_told;
    struct sigaction prev;     /* the program's handler for cfg.signal */
    int sig;                   /* installed on, 0 none */
    int64_t last_ns;           /* the last step's end */
    op_flight_policy pol;
} W;

/* A semaphore rather than a pipe: a program may close every descriptor
 * above 2 and open its own files under the same numbers, and a pipe's
 * number would then be one of the program's files. */
static void wake_writer(void)
{
    (void)sem_post(&W.wake); /* EOVERFLOW: wake-ups pending already; the writer will look */
}

/* ---- the file name ---- */

static void put(char *out, size_t cap, size_t *k, const char *s, size_t n)
{
    for (size_t i = 0; i < n && *k + 1 < cap; i++) out[(*k)++] = s[i];
    out[*k] = '\0';
}

/* The template with {n} and {pid} replaced, under output_dir when relative. */
static void dump_path(const char *tmpl, unsigned long n, char *out, size_t cap)
{
    size_t k = 0;
    out[0] = '\0';
    if (tmpl[0] != '/' && W.dir && W.dir[0]) {
        put(out, cap, &k, W.dir, strlen(W.dir));
        put(out, cap, &k, "/", 1);
    }
    /* Absolute, so that every message names the file wherever it is read
     * from (the program's folder is not the reader's). */
    char cwd[4096];
    if (out[0] != '/' && tmpl[0] != '/' && getcwd(cwd, sizeof cwd)) {
        char rel[4096];
        snprintf(rel, sizeof rel, "%s", out);
        k = 0;
        put(out, cap, &k, cwd, strlen(cwd));
        put(out, cap, &k, "/", 1);
        put(out, cap, &k, rel, strlen(rel));
    }
    char num[32];
    for (const char *p = tmpl; *p;) {
        if (!strncmp(p, "{n}", 3)) {
            put(out, cap, &k, num, (size_t)snprintf(num, sizeof num, "%lu", n));
            p += 3;
        } else if (!strncmp(p, "{pid}", 5)) {
            put(out, cap, &k, num, (size_t)snprintf(num, sizeof num, "%lld", (long long)getpid()));
            p += 5;
        } else {
            put(out, cap, &k, p++, 1);
        }
    }
}

/* ---- the writer ---- */

/* mkdir -p of the dumps' folder (output_dir), as the trace handler makes
 * its own: made when a dump is written, not before. */
static void make_dir(const char *dir)
{
    char buf[4096];
    size_t n = strlen(dir);
    if (n >= sizeof buf) return; /* the write says what is wrong */
    memcpy(buf, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char c = buf[i];
        buf[i] = '\0';
        (void)mkdir(buf, 0777);
        buf[i] = c;
    }
}

static int dump_now(const char *path, const char *reason, char *written, size_t cap)
{
    pthread_mutex_lock(&g_lock);
    unsigned long n = ++W.seq;
    pthread_mutex_unlock(&g_lock);
    char file[4096];
    const char *tmpl = path ? path : W.path ? W.path : "opprof_flight_{pid}_{n}.json";
    dump_path(tmpl, n, file, sizeof file);
    if (written) snprintf(written, cap, "%s", file);
    if (W.dir && W.dir[0] && tmpl[0] != '/') make_dir(W.dir);
    int64_t t0 = op_mono_ns();
    opprof_trace *t = NULL;
    int rc = op_flight_read(&t);
    int64_t t1 = op_mono_ns();
    if (rc == OPPROF_OK) rc = opprof_export_chrome_trace(t, file);
    int64_t t2 = op_mono_ns();
    if (rc != OPPROF_OK) {
        fprintf(stderr, "opprof: flight recorder: %s: cannot write %s: %s\n", reason, file, opprof_last_error());
        opprof_trace_free(t);
        return rc;
    }
    atomic_fetch_add(&W.dumps, 1);
    if (W.cfg.on_dump) {
        W.cfg.on_dump(file, reason, W.cfg.user);
    } else {
        fprintf(stderr, "opprof: flight recorder: %s: wrote %s (%zu events; read in %.1f ms, written in %.1f ms)\n",
                reason, file, opprof_trace_event_count(t), (double)(t1 - t0) / 1e6, (double)(t2 - t1) / 1e6);
    }
    opprof_trace_free(t);
    return OPPROF_OK;
}

enum { JOB_NONE, JOB_SYNC, JOB_SLOW, JOB_SIGNAL };

/* Says why something is not dumped, on stderr: a line a second at most
 * (a noisy threshold must not flood the program's stderr), with how many
 * more were not shown. */
static void tell(const char *what, const char *note)
{
    static int64_t last;
    static unsigned long hidden;
    int64_t now = op_mono_ns();
    pthread_mutex_lock(&g_lock);
    int show = !last || now - last >= 1000000000LL;
    unsigned long h = hidden;
    if (show) {
        last = now;
        hidden = 0;
    } else {
        hidden++;
    }
    pthread_mutex_unlock(&g_lock);
    if (!show) return;
    if (h)
        fprintf(stderr, "opprof: flight recorder: %s: %s (and %lu more not dumped in the second before)\n", what,
                note, h);
    else
        fprintf(stderr, "opprof: flight recorder: %s: %s\n", what, note);
}

/* A slow step's dump to write, in the policy's place slot; the lock is held. */
static void slow_ask(int verdict, const char *why, unsigned slot)
{
    snprintf(W.slow_reason, sizeof W.slow_reason, "%s", why);
    if (verdict == OP_STEP_REPLACE)
        snprintf(W.slow_reason + strlen(W.slow_reason), sizeof W.slow_reason - strlen(W.slow_reason),
                 "; in place of the least slow of the %u kept, %s (%s, %.3f ms)", W.pol.budget, W.pol.kept[slot].file,
                 W.pol.kept[slot].what, (double)W.pol.kept[slot].dur / 1e6);
    W.slow_pending = 1;
    W.slow_slot = slot;
}

/* Takes the next job: a waiting caller first, then a slow step, then a
 * signal, spaced and counted by the policy (a signal's dump that must wait
 * leaves *wait_until set). The recorder is busy from here until the
 * writer has done every job. */
static int next_job(sync_req **req, char *reason, size_t cap, unsigned *slot, int64_t *wait_until)
{
    *req = NULL;
    *wait_until = 0;
    char note[200] = "";
    unsigned long sigs = 0;
    pthread_mutex_lock(&g_lock);
    int job = JOB_NONE;
    if (W.queue) {
        *req = W.queue;
        W.queue = W.queue->next;
        job = JOB_SYNC;
    } else if (W.slow_pending) {
        snprintf(reason, cap, "%s", W.slow_reason);
        *slot = W.slow_slot;
        W.slow_pending = 0;
        job = JOB_SLOW;
    } else if (atomic_load(&W.async_pending)) {
        int64_t at = op_policy_signal(&W.pol, op_mono_ns(), note, sizeof note);
        if (at > 0) {
            *wait_until = at; /* all the signals until then share one dump */
        } else {
            atomic_store(&W.async_pending, 0);
            unsigned long all = atomic_load(&W.signals);
            sigs = all - W.signals_told;
            W.signals_told = all;
            if (W.sig) snprintf(reason, cap, "signal %d", W.sig);
            else snprintf(reason, cap, "opprof_flight_dump_async");
            if (sigs > 1)
                snprintf(reason + strlen(reason), cap - strlen(reason), " (%lu since the last dump)", sigs);
            if (at == 0) job = JOB_SIGNAL;
        }
    }
    if (job != JOB_NONE) op_policy_busy(&W.pol);
    pthread_mutex_unlock(&g_lock);
    if (note[0]) tell(reason, note);
    return job;
}

/* A slow step's dump is written (file) or failed (NULL): the one it
 * replaces goes. */
static void slow_written(unsigned slot, const char *file)
{
    char *old = NULL, old_what[64];
    int64_t old_dur = 0;
    pthread_mutex_lock(&g_lock);
    op_policy_written(&W.pol, slot, file, &old, &old_dur, old_what, sizeof old_what);
    pthread_mutex_unlock(&g_lock);
    if (!old) return;
    if (strcmp(old, file) != 0 && unlink(old) != 0 && errno != ENOENT)
        fprintf(stderr, "opprof: flight recorder: cannot remove %s: %s\n", old, strerror(errno));
    free(old);
}

static void *writer_main(void *arg)
{
    (void)arg;
    int64_t wait_until = 0;
    int again = 0; /* a dump to write already: no waiting */
    for (;;) {
        if (!again && wait_until) { /* until then (op_mono_ns's clock), or a wake-up */
            struct timespec at = {(time_t)(wait_until / 1000000000), (long)(wait_until % 1000000000)};
            (void)sem_clockwait(&W.wake, CLOCK_MONOTONIC, &at);
        } else if (!again && sem_wait(&W.wake) != 0 && errno != EINTR) {
            break;
        }
        again = 0;
        while (sem_trywait(&W.wake) == 0) { /* one look serves every wake-up so far */
        }
        pthread_mutex_lock(&g_lock);
        int quit = W.quit;
        pthread_mutex_unlock(&g_lock);
        sync_req *req;
        char reason[400], file[4096];
        unsigned slot = 0;
        int job, worked = 0;
        int64_t t0 = op_mono_ns();
        while ((job = next_job(&req, reason, sizeof reason, &slot, &wait_until)) != JOB_NONE) {
            worked = 1;
            if (job == JOB_SYNC) {
                int rc = dump_now(req->path, req->reason, req->written, req->cap);
                pthread_mutex_lock(&g_lock);
                req->rc = rc;
                req->done = 1;
                pthread_cond_broadcast(&g_done);
                pthread_mutex_unlock(&g_lock);
            } else {
                int rc = dump_now(NULL, reason, file, sizeof file); /* it says on stderr what failed */
                if (job == JOB_SLOW) slow_written(slot, rc == OPPROF_OK ? file : NULL);
            }
        }
        if (worked) { /* the slowest step beside the dumps is judged now */
            int64_t now = op_mono_ns();
            char why[300], note[300];
            pthread_mutex_lock(&g_lock);
            int v = op_policy_idle(&W.pol, now, now - t0, why, sizeof why, note, sizeof note, &slot);
            if (v == OP_STEP_DUMP || v == OP_STEP_REPLACE) slow_ask(v, why, slot);
            pthread_mutex_unlock(&g_lock);
            if (v == OP_STEP_DUMP || v == OP_STEP_REPLACE) {
                again = 1;
                continue;
            }
            if (note[0]) tell(why, note);
        }
        if (quit) break; /* after what was asked before the stop */
    }
    /* Whoever still waits learns that no dump comes. */
    pthread_mutex_lock(&g_lock);
    for (sync_req *r = W.queue; r; r = r->next) {
        r->rc = op_fail(OPPROF_E_NO_SESSION, "the flight recorder stopped");
        r->done = 1;
    }
    W.queue = NULL;
    pthread_cond_broadcast(&g_done);
    pthread_mutex_unlock(&g_lock);
    return NULL;
}

/* ---- slow steps ---- */

/* One step of duration dur ended at end (what: "step 512", "range
 * train_step #3"): asks for a dump when the policy says so, and says why
 * when a slow step is not dumped. */
static void observe(int64_t end, int64_t dur, const char *what)
{
    char why[300], note[300];
    unsigned slot = 0;
    pthread_mutex_lock(&g_lock);
    int v = op_policy_step(&W.pol, end, dur, what, why, sizeof why, note, sizeof note, &slot);
    if (v == OP_STEP_DUMP || v == OP_STEP_REPLACE) slow_ask(v, why, slot);
    pthread_mutex_unlock(&g_lock);
    if (v == OP_STEP_DUMP || v == OP_STEP_REPLACE) wake_writer();
    else if (note[0]) tell(why, note);
}

/* opprof_step in the ring session, outside the session lock: the step that
 * just ended (lent to the session by op_session_start_ring). */
static void flight_on_step(int64_t step)
{
    if (!atomic_load_explicit(&W.running, memory_order_acquire) || W.range) return;
    int64_t now = op_mono_ns();
    pthread_mutex_lock(&g_lock);
    int64_t dur = now - W.last_ns;
    W.last_ns = now;
    pthread_mutex_unlock(&g_lock);
    char what[48];
    snprintf(what, sizeof what, "step %lld", (long long)step);
    observe(now, dur, what);
}

/* The end of a range named slow_range (capture/record.c), in the
 * recording clock's ticks: converted with the ratio of ticks to
 * nanoseconds since the recorder started. */
static void on_range_end(uint64_t t0, uint64_t t1)
{
    if (!atomic_load_explicit(&W.running, memory_order_acquire)) return;
    double ns_per_tick = 1.0;
    if (!W.ticks_are_ns) {
        uint64_t now = op_cycles();
        int64_t mono = op_mono_ns();
        if (now <= W.tick0 || mono <= W.mono0) return;
        ns_per_tick = (double)(mono - W.mono0) / (double)(now - W.tick0);
    }
    char what[200];
    pthread_mutex_lock(&g_lock);
    unsigned long n = W.range_count++;
    pthread_mutex_unlock(&g_lock);
    snprintf(what, sizeof what, "range %.140s #%lu", W.range, n);
    observe(op_mono_ns(), (int64_t)((double)(t1 - t0) * ns_per_tick), what);
}

/* ---- the signal ---- */

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    atomic_fetch_add(&W.signals, 1);
    (void)opprof_flight_dump_async();
    /* Then the program's own handler, as if we were not there; its default
     * (for SIGUSR2: the end of the process) gives way to the dump. */
    if (W.prev.sa_flags & SA_SIGINFO) W.prev.sa_sigaction(sig, si, uc);
    else if (W.prev.sa_handler != SIG_DFL && W.prev.sa_handler != SIG_IGN) W.prev.sa_handler(sig);
    errno = saved;
}

static int install_signal(int sig)
{
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_sigaction = on_signal;
    a.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&a.sa_mask);
    if (sigaction(sig, NULL, &W.prev) != 0 || sigaction(sig, &a, NULL) != 0)
        return op_fail(OPPROF_E_INVAL, "cannot catch signal %d: %s", sig, strerror(errno));
    W.sig = sig;
    return OPPROF_OK;
}

static void restore_signal(void)
{
    if (!W.sig) return;
    struct sigaction now;
    if (sigaction(W.sig, NULL, &now) == 0 && (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_signal)
        sigaction(W.sig, &W.prev, NULL);
    W.sig = 0;
}

static int flight_running(void)
{
    return atomic_load_explicit(&W.running, memory_order_acquire);
}

static int flight_dump_sync(const char *path, const char *reason, char *written, size_t cap)
{
    if (!flight_running()) return op_fail(OPPROF_E_NO_SESSION, "the flight recorder is not running");
    sync_req r = {path, reason, written, cap, 0, 0, NULL};
    pthread_mutex_lock(&g_lock);
    if (W.quit) { /* the writer has left, or is leaving: no one would answer */
        pthread_mutex_unlock(&g_lock);
        return op_fail(OPPROF_E_NO_SESSION, "the flight recorder is stopping");
    }
    sync_req **tail = &W.queue;
    while (*tail) tail = &(*tail)->next;
    *tail = &r;
    pthread_mutex_unlock(&g_lock);
    wake_writer();
    pthread_mutex_lock(&g_lock);
    while (!r.done) pthread_cond_wait(&g_done, &g_lock);
    pthread_mutex_unlock(&g_lock);
    if (r.rc != OPPROF_OK && !*opprof_last_error()) op_fail(r.rc, "the dump failed (see stderr)");
    return r.rc;
}

/* ---- the trigger ---- */

/* opprof trigger PID --dump: the listener's request (listener.c). */
static void serve_dump(int c, const char *req, unsigned long n)
{
    char v[4096], path[4096] = "", written[4096];
    if (op_od_get(req, "trace", v, sizeof v)) op_od_expand(v, n, path, sizeof path);
    if (!flight_running()) {
        op_listen_reply_error(c, OPPROF_E_NO_SESSION, "process %lld: the flight recorder is stopping",
                              (long long)getpid());
        return;
    }
    int rc = flight_dump_sync(path[0] ? path : NULL, "trigger", written, sizeof written);
    if (rc != OPPROF_OK) {
        op_listen_reply_error(c, rc, "the dump failed: %s", opprof_last_error());
        return;
    }
    char out[4200];
    snprintf(out, sizeof out, "ok\nwrote %s\n", written);
    op_listen_reply(c, out);
}

/* A recording asked of a process that runs the flight recorder only. */
static void refuse_record(int c, const char *req, unsigned long n)
{
    (void)req;
    (void)n;
    op_listen_reply_error(c, OPPROF_E_UNSUPPORTED,
                          "process %lld runs the flight recorder, not on demand: dump it (opprof trigger %lld --dump)",
                          (long long)getpid(), (long long)getpid());
}

static const char *flight_state(void)
{
    return flight_running() ? "flight" : NULL;
}

static const op_listen_op k_ops[] = {{"dump", serve_dump, 0}, {"record", refuse_record, 1}, {NULL, NULL, 0}};
static const op_listen_service k_service = {OP_LISTEN_FLIGHT, "flight", flight_state, NULL, k_ops};

/* ---- the API ---- */

int opprof_flight_config_init_size(opprof_flight_config *c, size_t struct_size)
{
    if (!c) return op_fail(OPPROF_E_INVAL, "opprof_flight_config_init: config is NULL");
    /* The session is last: what the program's struct has beyond the fields
     * before it is the program's opprof_config. */
    size_t head = offsetof(opprof_flight_config, session);
    if (struct_size < head + sizeof(size_t))
        return op_fail(OPPROF_E_INVAL, "opprof_flight_config_init: size %zu is no opprof_flight_config's", struct_size);
    opprof_flight_config def;
    memset(&def, 0, sizeof def);
    def.ring_bytes = DEFAULT_RING;
    def.max_slow_dumps = 10;
    int rc = opprof_config_init_size(&c->session, struct_size - head);
    if (rc == OPPROF_OK) memcpy(c, &def, head);
    return rc;
}

static void forget_config(void)
{
    free(W.path);
    free(W.dir);
    free(W.range);
    W.path = W.dir = W.range = NULL;
    op_policy_free(&W.pol);
}

static void drop_wake(void)
{
    sem_destroy(&W.wake);
}

int opprof_flight_start(const opprof_flight_config *c)
{
    if (!c) return op_fail(OPPROF_E_INVAL, "opprof_flight_start: config is NULL (use opprof_flight_config_init)");
    if (c->slow_step_ns < 0 || c->slow_step_ratio < 0 || (c->slow_step_ratio > 0 && c->slow_step_ratio <= 1.0))
        return op_fail(OPPROF_E_INVAL, "opprof_flight_start: slow_step_ns >= 0, slow_step_ratio 0 or above 1");
    if (c->signal < -1 || c->signal >= NSIG || c->signal == SIGKILL || c->signal == SIGSTOP)
        return op_fail(OPPROF_E_INVAL, "opprof_flight_start: signal %d cannot be caught", c->signal);
    if (atomic_load(&W.running)) return op_fail(OPPROF_E_ACTIVE, "opprof_flight_start: the recorder runs already");
    size_t bytes = c->ring_bytes ? c->ring_bytes : DEFAULT_RING;
    size_t chunks = (bytes + CHUNK_BYTES - 1) / CHUNK_BYTES;
    if (chunks > 1u << 20) return op_fail(OPPROF_E_RANGE, "opprof_flight_start: ring_bytes above 1 TiB");
    /* The fields before the session at their places in every version, the
     * session by its own struct_size. */
    int rc = op_config_in(&W.cfg.session, &c->session, "opprof_flight_start");
    if (rc != OPPROF_OK) return rc;
    memcpy(&W.cfg, c, offsetof(opprof_flight_config, session));
    if (!W.cfg.max_slow_dumps) W.cfg.max_slow_dumps = 10;
    W.path = c->path ? strdup(c->path) : NULL;
    W.dir = W.cfg.session.output_dir ? strdup(W.cfg.session.output_dir) : NULL;
    W.range = c->slow_range && *c->slow_range ? strdup(c->slow_range) : NULL;
    if ((c->path && !W.path) || (W.cfg.session.output_dir && !W.dir) || (c->slow_range && *c->slow_range && !W.range) ||
        op_policy_init(&W.pol, W.cfg.slow_step_ns, W.cfg.slow_step_ratio, W.cfg.max_slow_dumps) != 0) {
        forget_config();
        return op_fail(OPPROF_E_NOMEM, "out of memory");
    }
    W.cfg.path = W.path;
    W.cfg.session.output_dir = W.dir;
    W.cfg.slow_range = W.range;
    W.range_count = 0;
    W.seq = 0;
    W.quit = 0;
    W.slow_pending = 0;
    W.signals_told = 0;
    atomic_store(&W.signals, 0);
    atomic_store(&W.dumps, 0);
    atomic_store(&W.async_pending, 0);
    if (sem_init(&W.wake, 0, 0) != 0) {
        forget_config();
        return op_fail(OPPROF_E_IO, "sem_init: %s", strerror(errno));
    }
    opprof_config s = W.cfg.session;
    s.on_trace_ready = NULL;
    s.user = NULL;
    W.ticks_are_ns = s.clock != NULL || !op_clock_cycles_usable();
    W.tick0 = op_cycles();
    W.mono0 = op_mono_ns();
    if (W.range) { /* before the session: each thread reads it when it attaches */
        op_session_watch(W.range, on_range_end);
    }
    rc = op_session_start_ring(&s, (uint32_t)chunks, flight_on_step);
    if (rc != OPPROF_OK) {
        op_session_watch(NULL, NULL);
        drop_wake();
        forget_config();
        return rc;
    }
    W.last_ns = op_mono_ns();
    int e = op_thread_start_quiet(&W.writer, NULL, writer_main, NULL);
    if (e != 0) {
        (void)opprof_stop(NULL);
        drop_wake();
        forget_config();
        return op_fail(OPPROF_E_IO, "cannot start the flight recorder's writer: %s", strerror(e));
    }
    atomic_store_explicit(&W.running, 1, memory_order_release);
    int sig = c->signal == 0 ? SIGUSR2 : c->signal;
    if (sig > 0 && (rc = install_signal(sig)) != OPPROF_OK) {
        (void)opprof_flight_stop();
        return rc;
    }
    if (op_listener_acquire(&k_service) != OPPROF_OK) /* dumps still come from the other routes */
        fprintf(stderr, "opprof: flight recorder: no trigger socket: %s\n", opprof_last_error());
    op_clear_error();
    return OPPROF_OK;
}

int opprof_flight_dump(const char *path)
{
    char written[4096];
    return flight_dump_sync(path, "opprof_flight_dump", written, sizeof written);
}

int opprof_flight_dump_async(void)
{
    if (!atomic_load_explicit(&W.running, memory_order_acquire)) return OPPROF_E_NO_SESSION;
    atomic_store(&W.async_pending, 1);
    wake_writer();
    return OPPROF_OK;
}

uint64_t opprof_flight_dumps(void)
{
    return atomic_load(&W.dumps);
}

/* The signal's handler stays until the writer has finished the last dump:
 * a signal then must not find the program's default (for SIGUSR2, the end
 * of the process, its stdout unflushed and the dump cut off). At exit it
 * stays for good, inert (the recorder is not running): a dump asked for
 * while the process ends is no reason to kill it. */
static int stop(int exiting)
{
    int was = 1;
    if (!atomic_compare_exchange_strong(&W.running, &was, 0))
        return op_fail(OPPROF_E_NO_SESSION, "opprof_flight_stop: the flight recorder is not running");
    op_listener_release(OP_LISTEN_FLIGHT);
    pthread_mutex_lock(&g_lock);
    W.quit = 1;
    pthread_mutex_unlock(&g_lock);
    wake_writer();
    pthread_join(W.writer, NULL);
    if (!exiting) restore_signal();
    drop_wake();
    int rc = opprof_stop(NULL); /* what the rings hold goes: a dump was the time to keep it */
    op_session_watch(NULL, NULL);
    forget_config();
    return rc;
}

int opprof_flight_stop(void)
{
    return stop(0);
}

int op_flight_stop_at_exit(void)
{
    return stop(1);
}

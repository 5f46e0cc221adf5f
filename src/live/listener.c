/* The listener: a thread on a Unix socket of this process, serving triggers
 * (trigger.c) from the same user, for the services that registered their
 * requests (listener.h): on demand records for a while, the flight recorder
 * dumps its rings, while the program runs on.
 *
 * One request is served at a time. While one is served, the listener still
 * answers pings (opprof trigger --list) and turns other requests away with
 * "busy" (op_listener_wait), so that a second trigger never waits unseen.
 * The thread blocks every signal: the program's signals go to the
 * program's threads.
 *
 * Programs close every descriptor above 2 at start (daemons, servers) and
 * open their own files under the same numbers. So the listening socket is
 * kept with its identity (common/ownfd.h) and checked before each use and
 * at least every RECHECK_MS; when the program has taken its number, the
 * number is left alone and a new socket listens at the same path. The
 * thread is told to stop by a flag and a shutdown of the socket (when it is
 * still ours), not by a pipe the program could have closed. A trigger that
 * connected to the old socket in that window gets no reply, or is refused,
 * and connects again (trigger.c). */
#define _GNU_SOURCE
#include "common/quietthread.h"
#include "live/listener.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/error.h"
#include "common/ownfd.h"
#include "live/odsock.h"
#include "opprof.h"

#define REQUEST_MAX (64 * 1024)
#define NSERVICES 2 /* one per OP_LISTEN_* bit */
#define RECHECK_MS 250 /* how often the listener checks that its socket is still its own */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* everything in L */
static pthread_once_t g_fork_once = PTHREAD_ONCE_INIT;

static struct {
    int reasons;       /* OP_LISTEN_* */
    op_ownfd sock;     /* the listening socket */
    _Atomic int stop;  /* the thread is to leave */
    pthread_t thread;
    pid_t pid;
    char path[256];
    unsigned long seq; /* triggers served */
    const op_listen_service *svc[NSERVICES]; /* by bit; kept after release for fork */
} L = {.sock = OP_OWNFD_NONE};

static int bit_index(int reason)
{
    return reason == OP_LISTEN_FLIGHT ? 1 : 0;
}

/* ---- replies ---- */

void op_listen_reply(int c, const char *text)
{
    (void)op_od_write_all(c, text, strlen(text));
}

void op_listen_reply_error(int c, int status, const char *fmt, ...)
{
    char msg[1200], line[1300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(line, sizeof line, "error %d %s\n", status, msg);
    op_listen_reply(c, line);
}

/* The running services' modes, in bit order, joined by commas. */
static void mode_names(char *out, size_t cap)
{
    size_t k = 0;
    out[0] = '\0';
    for (int i = 0; i < NSERVICES; i++) {
        const op_listen_service *s = L.svc[i];
        if (!s || !(L.reasons & s->reason)) continue;
        int n = snprintf(out + k, cap - k, "%s%s", k ? "," : "", s->mode);
        if (n < 0 || (size_t)n >= cap - k) break;
        k += (size_t)n;
    }
}

static void reply_ping(int c)
{
    char comm[64] = "?", line[256], mode[64];
    FILE *f = fopen("/proc/self/comm", "r");
    if (f) {
        if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = '\0';
        fclose(f);
    }
    const char *state = NULL;
    pthread_mutex_lock(&g_lock);
    mode_names(mode, sizeof mode);
    for (int i = 0; i < NSERVICES && !state; i++) {
        const op_listen_service *s = L.svc[i];
        if (s && (L.reasons & s->reason) && s->state) state = s->state();
    }
    pthread_mutex_unlock(&g_lock);
    snprintf(line, sizeof line, "ok\npid=%lld\nmode=%s\nstate=%s\ncomm=%s\n", (long long)getpid(), mode,
             state ? state : "idle", comm);
    op_listen_reply(c, line);
}

/* ---- one connection ---- */

/* Accepts one connection from the same user (or root); -1 for none. */
static int accept_peer(void)
{
    if (!op_ownfd_ours(&L.sock)) return -1;
    int c = accept4(L.sock.fd, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0) return -1;
    struct ucred cr;
    socklen_t len = sizeof cr;
    if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 || (cr.uid != geteuid() && cr.uid != 0)) {
        op_listen_reply_error(c, OPPROF_E_PERM, "process %lld serves only its own user (uid %u)", (long long)getpid(),
                              (unsigned)geteuid());
        close(c);
        return -1;
    }
    return c;
}

static char *read_request(int c)
{
    char *req = NULL;
    if (op_od_read_all(c, REQUEST_MAX, 2000, &req, NULL) != 0) return NULL;
    return req;
}

/* While a request is served: answer pings, turn the rest away. */
static void serve_busy(void)
{
    op_ownfd c;
    if (op_ownfd_set(&c, accept_peer()) != 0) return;
    char *req = read_request(c.fd);
    char op[16] = "";
    if (req) op_od_get(req, "op", op, sizeof op);
    int ours = op_ownfd_ours(&c); /* else the program closed it meanwhile */
    if (ours && !strcmp(op, "ping"))
        reply_ping(c.fd);
    else if (ours && req)
        op_listen_reply_error(c.fd, OPPROF_E_ACTIVE,
                              "process %lld is busy with another trigger; try again when it is done",
                              (long long)getpid());
    free(req);
    op_ownfd_close(&c);
}

static int relisten(void);

int op_listener_wait(int timeout_ms, int c, int event)
{
    /* The client has sent its request and shut its side: only a hangup
     * (POLLHUP, reported whatever the events asked) says it is gone. */
    if (atomic_load(&L.stop)) return OP_WAIT_STOP;
    /* The socket is watched only while it is ours (relisten checked; -1: poll skips it). */
    int sock = relisten() == OPPROF_OK ? L.sock.fd : -1;
    struct pollfd p[3] = {{sock, POLLIN, 0}, {c, 0, 0}, {event, POLLIN, 0}};
    int pr = poll(p, event >= 0 ? 3 : 2, timeout_ms > RECHECK_MS ? RECHECK_MS : timeout_ms);
    if (atomic_load(&L.stop)) return OP_WAIT_STOP;
    if (pr < 0 && errno != EINTR) return OP_WAIT_STOP;
    if (pr <= 0) return OP_WAIT_TIME;
    if (p[1].revents & (POLLHUP | POLLERR)) return OP_WAIT_HANGUP;
    if (event >= 0 && (p[2].revents & POLLIN)) {
        char buf[64];
        while (read(event, buf, sizeof buf) > 0) {
        }
        return OP_WAIT_EVENT;
    }
    if (p[0].revents & POLLIN) serve_busy();
    return OP_WAIT_TIME;
}

/* The handler of op: a running service's own first, else a refusal. */
static const op_listen_op *find_op(const char *op)
{
    const op_listen_op *refusal = NULL;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < NSERVICES; i++) {
        const op_listen_service *s = L.svc[i];
        if (!s || !(L.reasons & s->reason)) continue;
        for (const op_listen_op *o = s->ops; o->op; o++) {
            if (strcmp(o->op, op) != 0) continue;
            if (!o->refusal) {
                pthread_mutex_unlock(&g_lock);
                return o;
            }
            if (!refusal) refusal = o;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return refusal;
}

static void dispatch(int c, const char *req)
{
    char op[16] = "";
    op_od_get(req, "op", op, sizeof op);
    if (!strcmp(op, "ping")) {
        reply_ping(c);
        return;
    }
    const op_listen_op *o = find_op(op);
    if (!o) {
        op_listen_reply_error(c, OPPROF_E_PARSE, "unknown request '%s' (ping, record, dump)", op);
        return;
    }
    pthread_mutex_lock(&g_lock);
    unsigned long n = ++L.seq;
    pthread_mutex_unlock(&g_lock);
    /* At once: the client knows the process answers (trigger.c gives up
     * on one that does not, a stopped one), however long the request. */
    op_listen_reply(c, "accepted\n");
    o->serve(c, req, n);
}

/* One connection: the request read and dispatched, the connection closed
 * (only while it is still ours). */
static void serve(int fd)
{
    op_ownfd c;
    if (op_ownfd_set(&c, fd) != 0) return;
    char *req = read_request(c.fd);
    int ours = op_ownfd_ours(&c); /* else the program closed it meanwhile: no reply, the trigger asks again */
    if (ours && !req) op_listen_reply_error(c.fd, OPPROF_E_PARSE, "no request within 2 s");
    else if (ours) dispatch(c.fd, req);
    free(req);
    op_ownfd_close(&c);
}

static void *listener_main(void *arg)
{
    (void)arg;
    while (!atomic_load(&L.stop)) {
        if (relisten() != OPPROF_OK) { /* said once on stderr; tried again */
            poll(NULL, 0, RECHECK_MS);
            continue;
        }
        struct pollfd p = {L.sock.fd, POLLIN, 0};
        int pr = poll(&p, 1, RECHECK_MS);
        if (atomic_load(&L.stop)) break;
        if (pr <= 0 || !(p.revents & POLLIN)) continue; /* EINTR, the recheck, or POLLNVAL: the number was closed */
        int c = accept_peer();
        if (c >= 0) serve(c);
    }
    return NULL;
}

/* ---- start and stop ---- */

static void close_all(void)
{
    op_ownfd_close(&L.sock);
}

/* A forked child has no listener thread: the socket stays the parent's. */
static void fork_child(void)
{
    if (L.reasons) close_all();
    L.reasons = 0;
    for (int i = 0; i < NSERVICES; i++)
        if (L.svc[i] && L.svc[i]->forked) L.svc[i]->forked();
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    memcpy(&g_lock, &fresh, sizeof fresh);
}

static void install_fork(void)
{
    pthread_atfork(NULL, NULL, fork_child);
}

/* A socket listening at L.path, kept with its identity in L.sock. It is
 * made listening under a name of its own beside L.path (PID.soc~, the same
 * length, so it fits as L.path does) and renamed over L.path, which so
 * never goes missing: a client that finds no file gives up at once, and
 * one did, in the moment between an unlink and a bind, when the program
 * had closed our socket (test_fds under load). What L.path held (a process
 * of the same pid before us, gone; or our socket the program closed) is
 * replaced with it. */
static int listen_at_path(void)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    size_t n = strlen(L.path); /* op_od_sock_path checked that it fits, and that it ends in ".sock" */
    memcpy(a.sun_path, L.path, n + 1);
    a.sun_path[n - 1] = '~';
    unlink(a.sun_path); /* one left by a process of the same pid before us */
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || chmod(a.sun_path, 0600) != 0 ||
        listen(fd, 8) != 0 || rename(a.sun_path, L.path) != 0 || op_ownfd_set(&L.sock, fd) != 0) {
        int rc = op_fail(OPPROF_E_IO, "cannot listen on %s: %s", L.path, strerror(errno));
        if (fd >= 0) {
            unlink(a.sun_path);
            close(fd);
        }
        return rc;
    }
    return OPPROF_OK;
}

/* On the listener thread: when the program has closed the socket (and
 * maybe opened a file under its number), a new one listens in its place.
 * The first failure is said on stderr. */
static int relisten(void)
{
    static int said;
    if (op_ownfd_ours(&L.sock)) return OPPROF_OK;
    pthread_mutex_lock(&g_lock);
    L.sock.fd = -1; /* the number is the program's now */
    int rc = atomic_load(&L.stop) ? OPPROF_OK : listen_at_path();
    pthread_mutex_unlock(&g_lock);
    if (rc != OPPROF_OK && !said++)
        fprintf(stderr, "opprof: the program closed the trigger socket, and a new one cannot be made: %s\n",
                opprof_last_error());
    return rc;
}

static int start_locked(void)
{
    char dir[200];
    int rc = op_od_dir_make(dir, sizeof dir);
    if (rc != 0) return rc;
    if (op_od_sock_path(dir, getpid(), L.path, sizeof L.path) != 0)
        return op_fail(OPPROF_E_IO, "socket path too long in %s", dir);
    atomic_store(&L.stop, 0);
    if ((rc = listen_at_path()) != OPPROF_OK) return rc;
    int e = op_thread_start_quiet(&L.thread, NULL, listener_main, NULL);
    if (e != 0) {
        unlink(L.path);
        close_all();
        return op_fail(OPPROF_E_IO, "cannot start the listener thread: %s", strerror(e));
    }
    L.pid = getpid();
    return OPPROF_OK;
}

int op_listener_acquire(const op_listen_service *s)
{
    pthread_once(&g_fork_once, install_fork);
    pthread_mutex_lock(&g_lock);
    int rc = OPPROF_OK;
    if (!L.reasons) rc = start_locked();
    if (rc == OPPROF_OK) {
        L.svc[bit_index(s->reason)] = s;
        L.reasons |= s->reason;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

void op_listener_release(int reason)
{
    pthread_mutex_lock(&g_lock);
    int had = L.reasons;
    L.reasons &= ~reason;
    int stop = had && !L.reasons && L.pid == getpid();
    pthread_mutex_unlock(&g_lock);
    if (!stop) return;
    /* The flag, then a shutdown that wakes the thread's poll at once; when
     * the socket is not ours any more, the thread sees the flag at its next
     * recheck. */
    atomic_store(&L.stop, 1);
    pthread_mutex_lock(&g_lock);
    if (op_ownfd_ours(&L.sock)) (void)shutdown(L.sock.fd, SHUT_RDWR);
    pthread_mutex_unlock(&g_lock);
    pthread_join(L.thread, NULL);
    pthread_mutex_lock(&g_lock);
    unlink(L.path);
    close_all();
    pthread_mutex_unlock(&g_lock);
}

int op_listener_has(int reason)
{
    pthread_mutex_lock(&g_lock);
    int has = (L.reasons & reason) != 0;
    pthread_mutex_unlock(&g_lock);
    return has;
}

/* At exit: the socket file goes with the process. */
__attribute__((destructor)) static void on_exit_listener(void)
{
    if (L.reasons && L.pid == getpid()) op_listener_release(OP_LISTEN_ON_DEMAND | OP_LISTEN_FLIGHT);
}

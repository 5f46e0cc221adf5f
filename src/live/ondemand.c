/* On demand: a listener thread on a Unix socket of this process, serving
 * triggers (trigger.c) from the same user: record for a while and write the
 * results, or dump the flight recorder, while the program runs on.
 *
 * One request is served at a time. While a recording runs, the listener
 * still answers pings (opprof trigger --list) and turns other requests away
 * with "busy", so that a second trigger never waits unseen. The thread
 * blocks every signal: the program's signals go to the program's threads. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "capture/clock.h"
#include "common/error.h"
#include "opprof_trace.h"
#include "live/odsock.h"
#include "live/ondemand.h"
#include "session/session.h"

#define REQUEST_MAX (64 * 1024)
#define DEFAULT_DURATION_NS 5000000000LL
#define DEFAULT_TIMEOUT_NS 600000000000LL

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* everything in L */
static pthread_once_t g_fork_once = PTHREAD_ONCE_INIT;

static struct {
    int reasons;       /* OP_LISTEN_* */
    int fd;            /* listening socket */
    int wake[2];       /* a byte here: stop */
    pthread_t thread;
    pid_t pid;
    char path[256];
    opprof_config cfg; /* on demand: the options of a triggered session */
    char *cfg_dir;     /* cfg.output_dir's copy */
    unsigned long seq; /* triggers served */
    int recording;     /* read by pings while a recording runs */
} L = {.fd = -1, .wake = {-1, -1}};

/* ---- replies ---- */

static void reply(int fd, const char *text)
{
    (void)op_od_write_all(fd, text, strlen(text));
}

static void reply_error(int fd, int status, const char *fmt, ...) OP_PRINTF(3, 4);

static void reply_error(int fd, int status, const char *fmt, ...)
{
    char msg[1200], line[1300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(line, sizeof line, "error %d %s\n", status, msg);
    reply(fd, line);
}

static const char *mode_name(int reasons)
{
    switch (reasons & (OP_LISTEN_ON_DEMAND | OP_LISTEN_FLIGHT)) {
    case OP_LISTEN_ON_DEMAND: return "on-demand";
    case OP_LISTEN_FLIGHT: return "flight";
    default: return "on-demand,flight";
    }
}

static void reply_ping(int fd)
{
    char comm[64] = "?", line[256];
    FILE *f = fopen("/proc/self/comm", "r");
    if (f) {
        if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = '\0';
        fclose(f);
    }
    pthread_mutex_lock(&g_lock);
    const char *mode = mode_name(L.reasons);
    const char *state = L.recording ? "recording" : op_flight_running() ? "flight" : "idle";
    pthread_mutex_unlock(&g_lock);
    snprintf(line, sizeof line, "ok\npid=%lld\nmode=%s\nstate=%s\ncomm=%s\n", (long long)getpid(), mode, state, comm);
    reply(fd, line);
}

/* ---- one connection ---- */

/* Accepts one connection from the same user (or root); -1 for none. */
static int accept_peer(void)
{
    int c = accept4(L.fd, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0) return -1;
    struct ucred cr;
    socklen_t len = sizeof cr;
    if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 || (cr.uid != geteuid() && cr.uid != 0)) {
        reply_error(c, OPPROF_E_PERM, "process %lld serves only its own user (uid %u)", (long long)getpid(),
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

/* While recording: answer pings, turn the rest away. */
static void serve_busy(void)
{
    int c = accept_peer();
    if (c < 0) return;
    char *req = read_request(c);
    char op[16] = "";
    if (req) op_od_get(req, "op", op, sizeof op);
    if (!strcmp(op, "ping")) reply_ping(c);
    else if (req) reply_error(c, OPPROF_E_ACTIVE, "process %lld is busy with another trigger; try again when it is done",
                              (long long)getpid());
    free(req);
    close(c);
}

/* Waits until the recording should end: the duration has passed, the
 * program has made `steps` steps, or the listener is told to stop. Returns 1
 * when cut short. */
static int wait_recording(int64_t duration_ns, int64_t steps, int64_t timeout_ns)
{
    int64_t t0 = op_mono_ns(), step0 = opprof_step_num();
    for (;;) {
        int64_t now = op_mono_ns(), left;
        if (steps > 0) {
            if (opprof_step_num() - step0 >= steps) return 0;
            if (now - t0 >= timeout_ns) return 1;
            left = 1000000; /* steps are polled each millisecond */
        } else {
            left = duration_ns - (now - t0);
            if (left <= 0) return 0;
        }
        struct pollfd p[2] = {{L.wake[0], POLLIN, 0}, {L.fd, POLLIN, 0}};
        int ms = (int)((left + 999999) / 1000000);
        /* The last millisecond by sleeping, so the end is not late by poll's rounding. */
        if (left < 2000000) {
            struct timespec ts = {0, (long)left};
            nanosleep(&ts, NULL);
            continue;
        }
        int pr = poll(p, 2, ms - 1);
        if (pr < 0 && errno != EINTR) return 1;
        if (pr > 0 && (p[0].revents & POLLIN)) return 1;
        if (pr > 0 && (p[1].revents & POLLIN)) serve_busy();
    }
}

static int table_to(FILE *f, void *ctx)
{
    void **a = ctx;
    return opprof_table_write(a[0], a[1], *(int *)a[2], f);
}

/* Writes the table of t to path ("-": appended to *text). */
static int write_table(const opprof_trace *t, const char *path, const char *sort, int rows, char **text, size_t *len)
{
    opprof_key_averages *ka = NULL;
    int rc = opprof_key_averages(t, NULL, &ka);
    if (rc != OPPROF_OK) return rc;
    void *ctx[3] = {ka, (void *)sort, &rows};
    if (strcmp(path, "-") != 0) {
        rc = opprof_write_file(path, table_to, ctx);
    } else {
        FILE *f = open_memstream(text, len);
        if (!f) rc = op_fail(OPPROF_E_NOMEM, "out of memory");
        else {
            rc = table_to(f, ctx);
            fclose(f);
        }
    }
    opprof_key_averages_free(ka);
    return rc;
}

/* Replaces "{n}" in a path with the trigger's number. */
static void expand(const char *in, unsigned long n, char *out, size_t cap)
{
    const char *at = strstr(in, "{n}");
    if (!at) snprintf(out, cap, "%s", in);
    else snprintf(out, cap, "%.*s%lu%s", (int)(at - in), in, n, at + 3);
}

static void serve_record(int c, const char *req)
{
    char v[4096], trace[4096] = "", table[4096] = "", sort[64] = "self_cpu_time_total", cwd[3800] = ".";
    int64_t duration = DEFAULT_DURATION_NS, steps = 0, timeout = DEFAULT_TIMEOUT_NS;
    int rows = 100, shapes = 0;
    if (op_od_get(req, "duration_ns", v, sizeof v)) duration = strtoll(v, NULL, 10);
    if (op_od_get(req, "steps", v, sizeof v)) steps = strtoll(v, NULL, 10);
    if (op_od_get(req, "timeout_ns", v, sizeof v)) timeout = strtoll(v, NULL, 10);
    if (op_od_get(req, "row_limit", v, sizeof v)) rows = (int)strtol(v, NULL, 10);
    if (op_od_get(req, "shapes", v, sizeof v)) shapes = atoi(v);
    op_od_get(req, "sort", sort, sizeof sort);
    op_od_get(req, "cwd", cwd, sizeof cwd);
    pthread_mutex_lock(&g_lock);
    unsigned long n = ++L.seq;
    int on_demand = (L.reasons & OP_LISTEN_ON_DEMAND) != 0;
    opprof_config cfg = L.cfg;
    pthread_mutex_unlock(&g_lock);
    if (op_od_get(req, "trace", v, sizeof v)) expand(v, n, trace, sizeof trace);
    if (op_od_get(req, "table", v, sizeof v)) expand(v, n, table, sizeof table);
    if (!trace[0] && !table[0])
        snprintf(trace, sizeof trace, "%s/opprof_trigger_%lld_%lu.json", cwd, (long long)getpid(), n);
    if (!on_demand) {
        reply_error(c, OPPROF_E_UNSUPPORTED,
                    "process %lld runs the flight recorder, not on demand: dump it (opprof trigger %lld --dump)",
                    (long long)getpid(), (long long)getpid());
        return;
    }
    if (duration <= 0 || steps < 0 || timeout <= 0) {
        reply_error(c, OPPROF_E_INVAL, "bad request: duration_ns, steps and timeout_ns must be positive");
        return;
    }
    cfg.schedule.enabled = 0;
    cfg.on_trace_ready = NULL;
    cfg.user = NULL;
    cfg.record_shapes |= shapes;
    int rc = opprof_start(&cfg);
    if (rc != OPPROF_OK) {
        reply_error(c, rc, "process %lld cannot record now: %s", (long long)getpid(),
                    rc == OPPROF_E_ACTIVE ? "a session is already running (its own, or the flight recorder)"
                                          : opprof_last_error());
        return;
    }
    pthread_mutex_lock(&g_lock);
    L.recording = 1;
    pthread_mutex_unlock(&g_lock);
    int64_t t0 = op_mono_ns();
    int cut = wait_recording(duration, steps, timeout);
    opprof_trace *t = NULL;
    rc = cut ? opprof_stop_incomplete(&t) : opprof_stop(&t);
    int64_t took = op_mono_ns() - t0;
    pthread_mutex_lock(&g_lock);
    L.recording = 0;
    pthread_mutex_unlock(&g_lock);
    if (rc != OPPROF_OK || !t) {
        reply_error(c, rc ? rc : OPPROF_E_NO_SESSION, "the recording failed: %s", opprof_last_error());
        opprof_trace_free(t);
        return;
    }
    char *text = NULL, head[9000];
    size_t tlen = 0;
    int k = snprintf(head, sizeof head, "ok\nrecorded %.3f s, %zu events%s\n", (double)took / 1e9,
                     opprof_trace_event_count(t), cut ? " (cut short)" : "");
    if (trace[0]) {
        rc = opprof_export_chrome_trace(t, trace);
        if (rc != OPPROF_OK) {
            reply_error(c, OPPROF_E_IO, "cannot write %s: %s", trace, opprof_last_error());
            opprof_trace_free(t);
            return;
        }
        k += snprintf(head + k, sizeof head - (size_t)k, "wrote %s\n", trace);
    }
    if (table[0]) {
        rc = write_table(t, table, sort, rows, &text, &tlen);
        if (rc != OPPROF_OK) {
            reply_error(c, rc == OPPROF_E_NOMEM ? rc : OPPROF_E_IO, "table %s: %s", table, opprof_last_error());
            free(text);
            opprof_trace_free(t);
            return;
        }
        if (strcmp(table, "-") != 0 && k < (int)sizeof head)
            snprintf(head + k, sizeof head - (size_t)k, "wrote %s\n", table);
    }
    reply(c, head);
    if (text) (void)op_od_write_all(c, text, tlen);
    free(text);
    opprof_trace_free(t);
}

static void serve_dump(int c, const char *req)
{
    char v[4096], path[4096] = "", written[4096];
    pthread_mutex_lock(&g_lock);
    unsigned long n = ++L.seq;
    pthread_mutex_unlock(&g_lock);
    if (op_od_get(req, "trace", v, sizeof v)) expand(v, n, path, sizeof path);
    if (!op_flight_running()) {
        reply_error(c, OPPROF_E_NO_SESSION,
                    "process %lld has no flight recorder running (start it with opprof exec --flight SIZE)",
                    (long long)getpid());
        return;
    }
    int rc = op_flight_dump_sync(path[0] ? path : NULL, "trigger", written, sizeof written);
    if (rc != OPPROF_OK) {
        reply_error(c, rc, "the dump failed: %s", opprof_last_error());
        return;
    }
    char out[4200];
    snprintf(out, sizeof out, "ok\nwrote %s\n", written);
    reply(c, out);
}

static void *listener_main(void *arg)
{
    (void)arg;
    for (;;) {
        struct pollfd p[2] = {{L.wake[0], POLLIN, 0}, {L.fd, POLLIN, 0}};
        int pr = poll(p, 2, -1);
        if (pr < 0 && errno == EINTR) continue;
        if (pr < 0 || (p[0].revents & POLLIN)) break;
        if (!(p[1].revents & POLLIN)) continue;
        int c = accept_peer();
        if (c < 0) continue;
        char *req = read_request(c);
        char op[16] = "";
        if (req) op_od_get(req, "op", op, sizeof op);
        if (!req) reply_error(c, OPPROF_E_PARSE, "no request within 2 s");
        else if (!strcmp(op, "ping")) reply_ping(c);
        else if (!strcmp(op, "record")) serve_record(c, req);
        else if (!strcmp(op, "dump")) serve_dump(c, req);
        else reply_error(c, OPPROF_E_PARSE, "unknown request '%s' (ping, record, dump)", op);
        free(req);
        close(c);
    }
    return NULL;
}

/* ---- start and stop ---- */

static void close_all(void)
{
    if (L.fd >= 0) close(L.fd);
    for (int i = 0; i < 2; i++)
        if (L.wake[i] >= 0) close(L.wake[i]);
    L.fd = L.wake[0] = L.wake[1] = -1;
}

/* A forked child has no listener thread: the socket stays the parent's. */
static void fork_child(void)
{
    if (L.reasons) close_all();
    L.reasons = 0;
    L.recording = 0;
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    memcpy(&g_lock, &fresh, sizeof fresh);
}

static void install_fork(void)
{
    pthread_atfork(NULL, NULL, fork_child);
}

static int start_locked(void)
{
    char dir[200];
    int rc = op_od_dir_make(dir, sizeof dir);
    if (rc != 0) return rc;
    if (op_od_sock_path(dir, getpid(), L.path, sizeof L.path) != 0)
        return op_fail(OPPROF_E_IO, "socket path too long in %s", dir);
    if (pipe2(L.wake, O_CLOEXEC) != 0) return op_fail(OPPROF_E_IO, "pipe: %s", strerror(errno));
    L.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    memcpy(a.sun_path, L.path, strlen(L.path) + 1); /* op_od_sock_path checked that it fits */
    unlink(L.path); /* a process of the same pid before us, gone */
    if (L.fd < 0 || bind(L.fd, (struct sockaddr *)&a, sizeof a) != 0 || chmod(L.path, 0600) != 0 ||
        listen(L.fd, 8) != 0) {
        rc = op_fail(OPPROF_E_IO, "cannot listen on %s: %s", L.path, strerror(errno));
        close_all();
        return rc;
    }
    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved);
    int e = pthread_create(&L.thread, NULL, listener_main, NULL);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    if (e != 0) {
        unlink(L.path);
        close_all();
        return op_fail(OPPROF_E_IO, "cannot start the listener thread: %s", strerror(e));
    }
    L.pid = getpid();
    return OPPROF_OK;
}

int op_listener_acquire(int reason)
{
    pthread_once(&g_fork_once, install_fork);
    pthread_mutex_lock(&g_lock);
    int rc = OPPROF_OK;
    if (!L.reasons) rc = start_locked();
    if (rc == OPPROF_OK) L.reasons |= reason;
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
    char b = 1;
    ssize_t w;
    do w = write(L.wake[1], &b, 1);
    while (w < 0 && errno == EINTR);
    pthread_join(L.thread, NULL);
    pthread_mutex_lock(&g_lock);
    unlink(L.path);
    close_all();
    pthread_mutex_unlock(&g_lock);
}

int opprof_on_demand_start(const opprof_config *cfg)
{
    opprof_config c;
    if (!cfg) opprof_config_init(&c);
    else if (op_config_in(&c, cfg, "opprof_on_demand_start") != OPPROF_OK) return OPPROF_E_INVAL; /* detail set */
    char *dir = c.output_dir ? strdup(c.output_dir) : NULL;
    if (c.output_dir && !dir) return op_fail(OPPROF_E_NOMEM, "out of memory");
    c.output_dir = dir;
    pthread_mutex_lock(&g_lock);
    int already = (L.reasons & OP_LISTEN_ON_DEMAND) != 0;
    if (!already) {
        free(L.cfg_dir);
        L.cfg = c;
        L.cfg_dir = dir;
    }
    pthread_mutex_unlock(&g_lock);
    if (already) {
        free(dir);
        return op_fail(OPPROF_E_ACTIVE, "opprof_on_demand_start: already listening");
    }
    return op_listener_acquire(OP_LISTEN_ON_DEMAND);
}

int opprof_on_demand_stop(void)
{
    op_listener_release(OP_LISTEN_ON_DEMAND);
    return OPPROF_OK;
}

/* At exit: the socket file goes with the process. */
__attribute__((destructor)) static void on_exit_listener(void)
{
    if (L.reasons && L.pid == getpid()) op_listener_release(OP_LISTEN_ON_DEMAND | OP_LISTEN_FLIGHT);
}

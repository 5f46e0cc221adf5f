/* On demand: a service of the listener (listener.c) that records for a
 * while when triggered (trigger.c) and writes the results, while the
 * program runs on. While it records, the listener answers pings and turns
 * other requests away (op_listener_wait). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture/clock.h"
#include "common/error.h"
#include "common/ownfd.h"
#include "opprof_trace.h"
#include "live/odsock.h"
#include "live/listener.h"
#include "session/session.h"

#define DEFAULT_DURATION_NS 5000000000LL
#define DEFAULT_TIMEOUT_NS 600000000000LL

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* cfg and cfg_dir */

static struct {
    opprof_config cfg; /* the options of a triggered session */
    char *cfg_dir;     /* cfg.output_dir's copy */
    _Atomic int recording; /* read by pings while a recording runs */
} D;

/* A --steps recording: the program's thread that makes the trace ready
 * at a step hands it here (op_session_start_taking), and a byte on the
 * pipe wakes the listener. */
static struct {
    int64_t steps;       /* the schedule's context: N */
    int want;            /* the listener still waits for the trace */
    opprof_trace *ready; /* handed over, not yet taken */
    op_ownfd ev[2];      /* a byte: ready is set (only while the pipe is still ours: common/ownfd.h) */
} T = {.ev = {OP_OWNFD_NONE, OP_OWNFD_NONE}}; /* under g_lock, but steps (read-only while a session runs) */

/* The schedule of a --steps recording: the step under way when the trigger
 * came (0) is not counted; steps 1..N are recorded as ProfilerStep#1..N and
 * handed out when step N ends. */
static opprof_action steps_schedule(int64_t step, void *ctx)
{
    int64_t n = *(const int64_t *)ctx;
    if (step < 1 || step > n) return OPPROF_ACTION_NONE;
    return step < n ? OPPROF_ACTION_RECORD : OPPROF_ACTION_RECORD_AND_SAVE;
}

/* On the stepping thread, outside the session lock. */
static void steps_take(opprof_trace *tr)
{
    pthread_mutex_lock(&g_lock);
    int keep = T.want && !T.ready;
    if (keep) {
        T.ready = tr;
        char b = 1;
        ssize_t w;
        if (op_ownfd_ours(&T.ev[1])) {
            do w = write(T.ev[1].fd, &b, 1);
            while (w < 0 && errno == EINTR);
        }
    }
    pthread_mutex_unlock(&g_lock);
    if (!keep) opprof_trace_free(tr); /* the trigger gave up on it */
}

/* How a recording ended. */
enum { END_DONE, END_TIMEOUT, END_EXIT, END_HANGUP };

/* Waits until the recording should end: the duration has passed, the
 * program's N steps are handed over, the timeout passed (steps), the
 * listener is told to stop (the program exits) or the client is gone. */
static int wait_recording(int c, int64_t duration_ns, int64_t steps, int64_t timeout_ns)
{
    int64_t t0 = op_mono_ns();
    for (;;) {
        int64_t now = op_mono_ns(), left;
        if (steps > 0) {
            pthread_mutex_lock(&g_lock);
            int done = T.ready != NULL;
            pthread_mutex_unlock(&g_lock);
            if (done) return END_DONE;
            left = timeout_ns - (now - t0);
            if (left <= 0) return END_TIMEOUT;
        } else {
            left = duration_ns - (now - t0);
            if (left <= 0) return END_DONE;
            /* The last millisecond by sleeping, so the end is not late by poll's rounding. */
            if (left < 2000000) {
                struct timespec ts = {0, (long)left};
                nanosleep(&ts, NULL);
                continue;
            }
            left -= 1000000;
        }
        int64_t ms = left / 1000000 + (left % 1000000 != 0); /* rounded up; a timeout of INT64_MAX fits */
        /* Without the pipe (the program closed it), T.ready is seen at the listener's next recheck. */
        int ev = steps > 0 && op_ownfd_ours(&T.ev[0]) ? T.ev[0].fd : -1;
        int w = op_listener_wait(ms > 1000 ? 1000 : (int)ms, c, ev);
        if (w == OP_WAIT_STOP) return END_EXIT;
        if (w == OP_WAIT_HANGUP) return END_HANGUP;
    }
}

/* What opprof_write_file hands to table_to. */
typedef struct table_job {
    const opprof_key_averages *ka;
    const char *sort;
    int rows;
} table_job;

static int table_to(FILE *f, void *ctx)
{
    const table_job *j = ctx;
    return opprof_table_write(j->ka, j->sort, j->rows, f);
}

/* Writes the table of t to path ("-": appended to *text). */
static int write_table(const opprof_trace *t, const char *path, const char *sort, int rows, char **text, size_t *len)
{
    opprof_key_averages *ka = NULL;
    int rc = opprof_key_averages(t, NULL, &ka);
    if (rc != OPPROF_OK) return rc;
    table_job job = {ka, sort, rows};
    if (strcmp(path, "-") != 0) {
        rc = opprof_write_file(path, table_to, &job);
    } else {
        FILE *f = open_memstream(text, len);
        if (!f) rc = op_fail(OPPROF_E_NOMEM, "out of memory");
        else {
            rc = table_to(f, &job);
            fclose(f);
        }
    }
    opprof_key_averages_free(ka);
    return rc;
}

static void serve_record(int c, const char *req, unsigned long n)
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
    opprof_config cfg = D.cfg;
    pthread_mutex_unlock(&g_lock);
    if (op_od_get(req, "trace", v, sizeof v)) op_od_expand(v, n, trace, sizeof trace);
    if (op_od_get(req, "table", v, sizeof v)) op_od_expand(v, n, table, sizeof table);
    if (!trace[0] && !table[0])
        snprintf(trace, sizeof trace, "%s/opprof_trigger_%lld_%lu.json", cwd, (long long)getpid(), n);
    if (duration <= 0 || steps < 0 || timeout <= 0) {
        op_listen_reply_error(c, OPPROF_E_INVAL, "bad request: duration_ns, steps and timeout_ns must be positive");
        return;
    }
    if (steps > 0 && op_session_steps_seen() == 0) {
        op_listen_reply_error(c, OPPROF_E_UNSUPPORTED,
                              "process %lld has not called opprof_step() since it started: there are no steps to "
                              "count; record a time instead (--duration)",
                              (long long)getpid());
        return;
    }
    cfg.on_trace_ready = NULL;
    cfg.user = NULL;
    cfg.record_shapes |= shapes;
    int rc;
    if (steps > 0) {
        memset(&cfg.schedule, 0, sizeof cfg.schedule);
        cfg.schedule.enabled = 1;
        cfg.schedule.fn = steps_schedule;
        cfg.schedule.fn_ctx = &T.steps;
        int ev[2];
        if (pipe2(ev, O_CLOEXEC | O_NONBLOCK) != 0) {
            op_listen_reply_error(c, OPPROF_E_IO, "process %lld: pipe: %s", (long long)getpid(), strerror(errno));
            return;
        }
        (void)op_ownfd_set(&T.ev[0], ev[0]);
        (void)op_ownfd_set(&T.ev[1], ev[1]);
        pthread_mutex_lock(&g_lock);
        T.steps = steps;
        T.want = 1;
        T.ready = NULL;
        pthread_mutex_unlock(&g_lock);
        rc = op_session_start_taking(&cfg, steps_take);
    } else {
        cfg.schedule.enabled = 0;
        rc = opprof_start(&cfg);
    }
    opprof_trace *t = NULL;
    int end = END_DONE, started = rc == OPPROF_OK;
    int64_t t0 = op_mono_ns(), took = 0, whole = 0;
    if (started) {
        atomic_store(&D.recording, 1);
        end = wait_recording(c, duration, steps, timeout);
        if (steps > 0) whole = opprof_step_num() - 1; /* steps ended since the first whole one began */
        if (end == END_DONE && steps == 0) rc = opprof_stop(&t);
        else rc = end == END_DONE ? opprof_stop(NULL) : opprof_stop_incomplete(&t);
        took = op_mono_ns() - t0;
    }
    if (steps > 0) { /* a trace handed over after all is the whole one */
        pthread_mutex_lock(&g_lock);
        if (T.ready && end == END_HANGUP) {
            opprof_trace_free(T.ready);
        } else if (T.ready) {
            opprof_trace_free(t);
            t = T.ready;
            end = END_DONE;
            whole = steps;
        }
        T.ready = NULL;
        T.want = 0;
        for (int i = 0; i < 2; i++) op_ownfd_close(&T.ev[i]);
        pthread_mutex_unlock(&g_lock);
    }
    atomic_store(&D.recording, 0);
    if (!started) {
        op_listen_reply_error(c, rc, "process %lld cannot record now: %s", (long long)getpid(),
                              rc == OPPROF_E_ACTIVE ? "a session is already running (its own, or the flight recorder)"
                                                    : opprof_last_error());
        return;
    }
    if (rc != OPPROF_OK && !t) {
        op_listen_reply_error(c, rc, "the recording failed: %s", opprof_last_error());
        return;
    }
    if (end == END_HANGUP) { /* no one to write for */
        opprof_trace_free(t);
        return;
    }
    char cut[200] = "";
    if (whole < 0) whole = 0;
    if (end == END_EXIT && steps > 0)
        snprintf(cut, sizeof cut, " (cut short: the program exited after %lld of %lld steps)", (long long)whole,
                 (long long)steps);
    else if (end == END_EXIT)
        snprintf(cut, sizeof cut, " (cut short: the program exited)");
    else if (end == END_TIMEOUT)
        snprintf(cut, sizeof cut, " (cut short: %lld of %lld steps within the timeout)", (long long)whole,
                 (long long)steps);
    if (!t) {
        op_listen_reply_error(c, OPPROF_E_NO_SESSION, "nothing recorded%s", cut[0] ? cut + 1 : "");
        return;
    }
    char *text = NULL, head[9000];
    size_t tlen = 0;
    char what[64] = "";
    if (steps > 0 && end == END_DONE) snprintf(what, sizeof what, ", steps 1-%lld", (long long)steps);
    int k = snprintf(head, sizeof head, "ok\nrecorded %.3f s, %zu events%s%s\n", (double)took / 1e9,
                     opprof_trace_event_count(t), what, cut);
    if (trace[0]) {
        rc = opprof_export_chrome_trace(t, trace);
        if (rc != OPPROF_OK) {
            op_listen_reply_error(c, OPPROF_E_IO, "cannot write %s: %s", trace, opprof_last_error());
            opprof_trace_free(t);
            return;
        }
        k += snprintf(head + k, sizeof head - (size_t)k, "wrote %s\n", trace);
    }
    if (table[0]) {
        rc = write_table(t, table, sort, rows, &text, &tlen);
        if (rc != OPPROF_OK) {
            op_listen_reply_error(c, rc == OPPROF_E_NOMEM ? rc : OPPROF_E_IO, "table %s: %s", table, opprof_last_error());
            free(text);
            opprof_trace_free(t);
            return;
        }
        if (strcmp(table, "-") != 0 && k < (int)sizeof head)
            snprintf(head + k, sizeof head - (size_t)k, "wrote %s\n", table);
    }
    op_listen_reply(c, head);
    if (text) (void)op_od_write_all(c, text, tlen);
    free(text);
    opprof_trace_free(t);
}

/* A dump asked of a process without the flight recorder. */
static void refuse_dump(int c, const char *req, unsigned long n)
{
    (void)req;
    (void)n;
    op_listen_reply_error(c, OPPROF_E_NO_SESSION,
                          "process %lld has no flight recorder running (start it with opprof exec --flight SIZE)",
                          (long long)getpid());
}

static const char *od_state(void)
{
    return atomic_load(&D.recording) ? "recording" : NULL;
}

static void od_forked(void)
{
    atomic_store(&D.recording, 0);
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    memcpy(&g_lock, &fresh, sizeof fresh);
}

static const op_listen_op k_ops[] = {{"record", serve_record, 0}, {"dump", refuse_dump, 1}, {NULL, NULL, 0}};
static const op_listen_service k_service = {OP_LISTEN_ON_DEMAND, "on-demand", od_state, od_forked, k_ops};

int opprof_on_demand_start(const opprof_config *cfg)
{
    opprof_config c;
    if (!cfg) opprof_config_init(&c);
    else if (op_config_in(&c, cfg, "opprof_on_demand_start") != OPPROF_OK) return OPPROF_E_INVAL; /* detail set */
    char *dir = c.output_dir ? strdup(c.output_dir) : NULL;
    if (c.output_dir && !dir) return op_fail(OPPROF_E_NOMEM, "out of memory");
    c.output_dir = dir;
    int already = op_listener_has(OP_LISTEN_ON_DEMAND);
    if (!already) {
        pthread_mutex_lock(&g_lock);
        free(D.cfg_dir);
        D.cfg = c;
        D.cfg_dir = dir;
        pthread_mutex_unlock(&g_lock);
    }
    if (already) {
        free(dir);
        return op_fail(OPPROF_E_ACTIVE, "opprof_on_demand_start: already listening");
    }
    return op_listener_acquire(&k_service);
}

int opprof_on_demand_stop(void)
{
    op_listener_release(OP_LISTEN_ON_DEMAND);
    return OPPROF_OK;
}

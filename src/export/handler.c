/* The built-in on_trace_ready handler: torch.profiler's
 * tensorboard_trace_handler, plus the table torch users print in theirs. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"
#include "common/structsize.h"
#include "export/options.h"
#include "model/model.h"
#include "opprof_trace.h"

static int copy_name(char *dst, size_t size, const char *src, const char *what)
{
    if (!src) src = "";
    size_t n = strlen(src);
    if (n >= size) return op_fail(OPPROF_E_INVAL, "trace handler: %s is too long (%zu bytes, at most %zu)", what, n, size - 1);
    memcpy(dst, src, n + 1);
    return OPPROF_OK;
}

/* What the handler keeps between traces, in the state_ words of the
 * program's struct: the struct holds only what the caller sets. */
typedef struct handler_state {
    char worker[256]; /* {hostname}_{pid}, fixed at the first trace that needs it */
    unsigned traces_written;
    int last_status;
    char last_path[1536];
    char last_error[512];
} handler_state;

_Static_assert(sizeof(handler_state) <= sizeof(((opprof_trace_handler *)0)->state_),
               "the handler's state outgrew the words the public struct keeps for it");

/* Every handler has its state: the smallest struct_size taken. */
#define HANDLER_MIN_SIZE offsetof(opprof_trace_handler, dir)

static void handler_defaults(opprof_trace_handler *h)
{
    memset(h, 0, sizeof *h);
    h->struct_size = sizeof *h;
    h->row_limit = 100;
}

int opprof_trace_handler_init_size(opprof_trace_handler *h, size_t struct_size, const char *dir, const char *worker,
                                   int use_gzip)
{
    if (!h) return op_fail(OPPROF_E_INVAL, "opprof_trace_handler_init: handler is NULL");
    int rc = op_struct_size_ok(struct_size, sizeof *h, HANDLER_MIN_SIZE, "opprof_trace_handler_init",
                               "opprof_trace_handler");
    if (rc != OPPROF_OK) return rc;
    opprof_trace_handler def;
    handler_defaults(&def);
    rc = copy_name(def.dir, sizeof def.dir, dir, "the directory");
    if (rc == OPPROF_OK) rc = copy_name(def.worker, sizeof def.worker, worker, "the worker name");
    def.use_gzip = use_gzip != 0;
    op_struct_out(h, struct_size, &def, sizeof def);
    return rc;
}

/* mkdir -p: torch's handler makes the directory, and so do we. */
static int make_dirs(const char *dir)
{
    char buf[1024];
    size_t n = strlen(dir);
    if (n >= sizeof buf) return op_fail(OPPROF_E_INVAL, "trace handler: directory name too long: %s", dir);
    memcpy(buf, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
            int e = errno;
            return op_fail(OPPROF_E_IO, "trace handler: cannot create directory %s: %s", buf, strerror(e));
        }
        buf[i] = c;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return op_fail(OPPROF_E_IO, "trace handler: %s is not a directory", dir);
    return OPPROF_OK;
}

/* file_name with {step} (the trace's step number) and {time} (now, ns
 * since the epoch) filled in, so that a schedule's cycles each get a file. */
static void expand_name(const char *in, const opprof_trace *t, int64_t now_ns, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = in; *p && n + 1 < cap;) {
        char num[32];
        const char *put = NULL;
        if (!strncmp(p, "{step}", 6)) {
            snprintf(num, sizeof num, "%" PRId64, t->step_num);
            put = num;
            p += 6;
        } else if (!strncmp(p, "{time}", 6)) {
            snprintf(num, sizeof num, "%" PRId64, now_ns);
            put = num;
            p += 6;
        }
        if (!put) {
            out[n++] = *p++;
            continue;
        }
        for (; *put && n + 1 < cap; put++) out[n++] = *put;
    }
    out[n] = '\0';
}

static int write_trace(const opprof_trace_handler *h, handler_state *st, const opprof_trace *t)
{
    char dir[1024];
    if (h->dir[0]) snprintf(dir, sizeof dir, "%s", h->dir);
    else if (t->output_dir) snprintf(dir, sizeof dir, "%s", op_strtab_get(&t->str, t->output_dir));
    else snprintf(dir, sizeof dir, ".");
    int rc = make_dirs(dir);
    if (rc != OPPROF_OK) return rc;
    char name[512];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec; /* the name torch gives: unique per trace */
    if (h->file_name[0]) {
        expand_name(h->file_name, t, ns, name, sizeof name);
    } else {
        if (!h->worker[0] && !st->worker[0]) {
            char host[128] = "localhost";
            if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "localhost");
            host[sizeof host - 1] = '\0';
            snprintf(st->worker, sizeof st->worker, "%s_%ld", host, (long)getpid());
        }
        snprintf(name, sizeof name, "%s.%" PRId64 ".pt.trace.json", h->worker[0] ? h->worker : st->worker, ns);
    }
    size_t nl = strlen(name);
    int gz_name = nl >= 3 && strcmp(name + nl - 3, ".gz") == 0;
    int n = snprintf(st->last_path, sizeof st->last_path, "%s/%s%s", dir, name, h->use_gzip && !gz_name ? ".gz" : "");
    if (n < 0 || (size_t)n >= sizeof st->last_path)
        return op_fail(OPPROF_E_INVAL, "trace handler: path too long in %s", dir);
    opprof_export_options o;
    rc = op_export_options_in(&o, h->export_options, "opprof_trace_handler_ready");
    if (rc != OPPROF_OK) return rc;
    o.gzip = -1; /* by the name, which says .gz exactly when compressing */
    return opprof_export_chrome_trace_ex(t, st->last_path, &o);
}

/* What the seed's trace_handler does: p.key_averages().table(sort_by=...,
 * row_limit=...) for the cycle just ended. */
static int print_table(const opprof_trace_handler *h, const opprof_trace *t)
{
    FILE *f = h->table_out ? h->table_out : stdout;
    opprof_key_averages *ka = NULL;
    int rc = opprof_key_averages(t, NULL, &ka);
    if (rc == OPPROF_OK) rc = opprof_table_write(ka, h->sort_by[0] ? h->sort_by : NULL, h->row_limit, f);
    opprof_key_averages_free(ka);
    fflush(f);
    return rc;
}

void opprof_trace_handler_ready(const opprof_trace *trace, void *handler)
{
    opprof_trace_handler *user = handler;
    if (!user || !trace || !op_trace_model(trace)) return;
    opprof_trace_handler h; /* the program's fields, defaults for those its struct does not have */
    handler_defaults(&h);
    if (op_struct_in(&h, sizeof h, HANDLER_MIN_SIZE, user, "opprof_trace_handler_ready", "opprof_trace_handler") !=
        OPPROF_OK) {
        fprintf(stderr, "opprof: trace handler: %s\n", opprof_last_error()); /* no state to keep it in */
        return;
    }
    handler_state st;
    memcpy(&st, user->state_, sizeof st);
    int rc = h.table_only ? OPPROF_OK : write_trace(&h, &st, trace);
    if (rc == OPPROF_OK && !h.table_only) st.traces_written++;
    if (rc == OPPROF_OK && h.print_table) rc = print_table(&h, trace);
    st.last_status = rc;
    if (rc != OPPROF_OK) {
        snprintf(st.last_error, sizeof st.last_error, "%s", opprof_last_error());
        fprintf(stderr, "opprof: trace handler: %s\n", st.last_error);
    } else {
        st.last_error[0] = '\0';
    }
    memcpy(user->state_, &st, sizeof st);
}

/* ---- the results: read from the state, which only the library writes ---- */

static int handler_ok(const opprof_trace_handler *h, const char *fn)
{
    if (!h) return op_fail(OPPROF_E_INVAL, "%s: handler is NULL", fn);
    return op_struct_size_ok(op_struct_size_of(h), sizeof *h, HANDLER_MIN_SIZE, fn, "opprof_trace_handler");
}

unsigned opprof_trace_handler_traces_written(const opprof_trace_handler *h)
{
    unsigned n = 0;
    if (handler_ok(h, "opprof_trace_handler_traces_written") == OPPROF_OK)
        memcpy(&n, (const char *)h->state_ + offsetof(handler_state, traces_written), sizeof n);
    return n;
}

int opprof_trace_handler_status(const opprof_trace_handler *h)
{
    int rc = handler_ok(h, "opprof_trace_handler_status");
    if (rc == OPPROF_OK) memcpy(&rc, (const char *)h->state_ + offsetof(handler_state, last_status), sizeof rc);
    return rc;
}

const char *opprof_trace_handler_last_path(const opprof_trace_handler *h)
{
    if (handler_ok(h, "opprof_trace_handler_last_path") != OPPROF_OK) return "";
    return (const char *)h->state_ + offsetof(handler_state, last_path);
}

const char *opprof_trace_handler_last_error(const opprof_trace_handler *h)
{
    if (handler_ok(h, "opprof_trace_handler_last_error") != OPPROF_OK) return "";
    return (const char *)h->state_ + offsetof(handler_state, last_error);
}

/* The built-in on_trace_ready handler: torch.profiler's
 * tensorboard_trace_handler, plus the table torch users print in theirs. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"
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

int opprof_trace_handler_init(opprof_trace_handler *h, const char *dir, const char *worker, int use_gzip)
{
    if (!h) return op_fail(OPPROF_E_INVAL, "opprof_trace_handler_init: handler is NULL");
    memset(h, 0, sizeof *h);
    int rc = copy_name(h->dir, sizeof h->dir, dir, "the directory");
    if (rc == OPPROF_OK) rc = copy_name(h->worker, sizeof h->worker, worker, "the worker name");
    h->use_gzip = use_gzip != 0;
    h->row_limit = 100;
    opprof_export_options_init(&h->export_options);
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

static int write_trace(opprof_trace_handler *h, const opprof_trace *t)
{
    char dir[1024];
    if (h->dir[0]) snprintf(dir, sizeof dir, "%s", h->dir);
    else if (t->output_dir) snprintf(dir, sizeof dir, "%s", op_strtab_get(&t->str, t->output_dir));
    else snprintf(dir, sizeof dir, ".");
    int rc = make_dirs(dir);
    if (rc != OPPROF_OK) return rc;
    char name[512];
    if (h->file_name[0]) {
        snprintf(name, sizeof name, "%s", h->file_name);
    } else {
        if (!h->worker[0]) {
            char host[128] = "localhost";
            if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "localhost");
            host[sizeof host - 1] = '\0';
            snprintf(h->worker, sizeof h->worker, "%s_%ld", host, (long)getpid());
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec; /* the name torch gives: unique per trace */
        snprintf(name, sizeof name, "%s.%" PRId64 ".pt.trace.json", h->worker, ns);
    }
    size_t nl = strlen(name);
    int gz_name = nl >= 3 && strcmp(name + nl - 3, ".gz") == 0;
    int n = snprintf(h->last_path, sizeof h->last_path, "%s/%s%s", dir, name, h->use_gzip && !gz_name ? ".gz" : "");
    if (n < 0 || (size_t)n >= sizeof h->last_path)
        return op_fail(OPPROF_E_INVAL, "trace handler: path too long in %s", dir);
    opprof_export_options o = h->export_options;
    o.gzip = -1; /* by the name, which says .gz exactly when compressing */
    return opprof_export_chrome_trace_ex(t, h->last_path, &o);
}

/* What the seed's trace_handler does: p.key_averages().table(sort_by=...,
 * row_limit=...) for the cycle just ended. */
static int print_table(opprof_trace_handler *h, const opprof_trace *t)
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
    opprof_trace_handler *h = handler;
    if (!h || !op_trace_model(trace)) return;
    int rc = h->table_only ? OPPROF_OK : write_trace(h, trace);
    if (rc == OPPROF_OK && !h->table_only) h->traces_written++;
    if (rc == OPPROF_OK && h->print_table) rc = print_table(h, trace);
    h->last_status = rc;
    if (rc != OPPROF_OK) {
        snprintf(h->last_error, sizeof h->last_error, "%s", opprof_last_error());
        fprintf(stderr, "opprof: trace handler: %s\n", h->last_error);
    } else {
        h->last_error[0] = '\0';
    }
}

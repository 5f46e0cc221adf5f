/* Output targets for the exporters. */
#include "export/out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "opprof.h"

int op_path_is_gz(const char *path)
{
    size_t n = path ? strlen(path) : 0;
    return n >= 3 && strcmp(path + n - 3, ".gz") == 0;
}

static int file_bytes(void *ctx, const void *p, size_t n)
{
    return op_afile_write(&((op_out *)ctx)->file, p, n);
}

static int stream_bytes(void *ctx, const void *p, size_t n)
{
    op_out *o = ctx;
    if (fwrite(p, 1, n, o->stream) != n)
        return op_fail(OPPROF_E_IO, "cannot write the trace to the stream: %s", strerror(errno ? errno : EIO));
    return OPPROF_OK;
}

static int plain_flush(void *ctx, op_jw *w)
{
    op_out *o = ctx;
    size_t n = (size_t)(w->p - w->buf);
    w->p = w->buf;
    return o->to_file ? file_bytes(o, w->buf, n) : stream_bytes(o, w->buf, n);
}

static int start(op_out *o, int gzip, int level)
{
    if (gzip) return op_gz_open(&o->gz, level, -1, o->to_file ? file_bytes : stream_bytes, o, &o->w);
    if (!(o->plain = malloc(OP_JW_MIN_BUF))) return op_fail(OPPROF_E_NOMEM, "out of memory");
    o->w.buf = o->w.p = o->plain;
    o->w.end = o->plain + OP_JW_MIN_BUF;
    o->w.flush = plain_flush;
    o->w.ctx = o;
    return OPPROF_OK;
}

static int open_path(op_out *o, const char *path, int gzip, int level, int do_fsync, int named)
{
    memset(o, 0, sizeof *o);
    o->to_file = 1;
    o->do_fsync = do_fsync;
    int rc = named ? op_afile_open_named(&o->file, path) : op_afile_open(&o->file, path);
    if (rc != OPPROF_OK) return rc;
    if ((rc = start(o, gzip, level)) != OPPROF_OK) op_out_discard(o);
    return rc;
}

int op_out_open_path(op_out *o, const char *path, int gzip, int level, int do_fsync)
{
    return open_path(o, path, gzip, level, do_fsync, 0);
}

int op_out_open_path_named(op_out *o, const char *path, int gzip, int level)
{
    return open_path(o, path, gzip, level, 1, 1);
}

int op_out_open_stream(op_out *o, FILE *f, int gzip, int level)
{
    memset(o, 0, sizeof *o);
    if (!f) return op_fail(OPPROF_E_INVAL, "no output stream given");
    o->stream = f;
    int rc = start(o, gzip, level);
    if (rc != OPPROF_OK) op_out_discard(o);
    return rc;
}

void op_out_discard(op_out *o)
{
    op_gz_free(o->gz);
    o->gz = NULL;
    free(o->plain);
    o->plain = NULL;
    if (o->to_file && o->file.path) op_afile_abort(&o->file);
}

int op_out_close(op_out *o)
{
    int rc = o->gz ? op_gz_finish(o->gz, &o->w) : op_jw_finish(&o->w);
    if (rc == OPPROF_OK && o->stream && fflush(o->stream) != 0)
        rc = op_fail(OPPROF_E_IO, "cannot write the trace to the stream: %s", strerror(errno));
    if (rc == OPPROF_OK && o->to_file) {
        op_gz_free(o->gz);
        o->gz = NULL;
        rc = op_afile_commit(&o->file, o->do_fsync);
    }
    op_out_discard(o);
    return rc;
}

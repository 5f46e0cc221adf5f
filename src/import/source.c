/* File, stdin and memory sources, and the gzip sniffing that picks a decoder
 * by the data's magic bytes rather than by the file's name. */
#include "import/source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"

ssize_t op_source_read(op_source *s, unsigned char *buf, size_t cap)
{
    if (!cap) return 0;
    if (s->nback) {
        size_t n = s->nback < cap ? s->nback : cap;
        memcpy(buf, s->back, n);
        memmove(s->back, s->back + n, s->nback - n);
        s->nback -= n;
        return (ssize_t)n;
    }
    return s->read(s, buf, cap);
}

void op_source_close(op_source *s)
{
    if (s) s->close(s);
}

typedef struct fd_source {
    op_source base;
    int fd;
    int owned;
    uint64_t off;
} fd_source;

static ssize_t fd_read(op_source *s, unsigned char *buf, size_t cap)
{
    fd_source *f = (fd_source *)s;
    for (;;) {
        ssize_t n = read(f->fd, buf, cap);
        if (n >= 0) {
            f->off += (uint64_t)n;
            return n;
        }
        if (errno == EINTR) continue;
        s->err_off = f->off;
        snprintf(s->err, sizeof s->err, "read failed: %s", strerror(errno));
        return OPPROF_E_IO;
    }
}

static void fd_close(op_source *s)
{
    fd_source *f = (fd_source *)s;
    if (f->owned) close(f->fd);
    free(f);
}

typedef struct mem_source {
    op_source base;
    const unsigned char *p;
    size_t len, pos, max_read;
} mem_source;

static ssize_t mem_read(op_source *s, unsigned char *buf, size_t cap)
{
    mem_source *m = (mem_source *)s;
    size_t n = m->len - m->pos;
    if (n > cap) n = cap;
    if (m->max_read && n > m->max_read) n = m->max_read;
    memcpy(buf, m->p + m->pos, n);
    m->pos += n;
    return (ssize_t)n;
}

static void mem_close(op_source *s)
{
    free(s);
}

int op_source_auto_gzip(op_source *raw, op_source **out)
{
    unsigned char magic[2];
    size_t have = 0;
    while (have < 2) {
        ssize_t n = op_source_read(raw, magic + have, 2 - have);
        if (n < 0) {
            int rc = op_fail((int)n, "%s", raw->err);
            op_source_close(raw);
            *out = NULL;
            return rc;
        }
        if (n == 0) break;
        have += (size_t)n;
    }
    memcpy(raw->back, magic, have);
    raw->nback = have;
    if (have == 2 && magic[0] == 0x1f && magic[1] == 0x8b) return op_source_gzip(raw, out);
    *out = raw;
    return OPPROF_OK;
}

int op_source_open_path(const char *path, op_source **out)
{
    *out = NULL;
    int is_stdin = strcmp(path, "-") == 0;
    int fd = is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return op_fail(errno == ENOENT ? OPPROF_E_NOT_FOUND : OPPROF_E_IO, "%s", strerror(errno));
#ifdef POSIX_FADV_SEQUENTIAL
    if (!is_stdin) (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    fd_source *f = calloc(1, sizeof *f);
    if (!f) {
        if (!is_stdin) close(fd);
        return op_fail(OPPROF_E_NOMEM, "out of memory");
    }
    f->base.read = fd_read;
    f->base.close = fd_close;
    f->fd = fd;
    f->owned = !is_stdin;
    return op_source_auto_gzip(&f->base, out);
}

int op_source_open_memory(const void *buf, size_t len, size_t max_read, op_source **out)
{
    *out = NULL;
    mem_source *m = calloc(1, sizeof *m);
    if (!m) return op_fail(OPPROF_E_NOMEM, "out of memory");
    m->base.read = mem_read;
    m->base.close = mem_close;
    m->p = buf;
    m->len = buf ? len : 0;
    m->max_read = max_read;
    return op_source_auto_gzip(&m->base, out);
}

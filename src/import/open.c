/* File, stdin and memory sources (source.h), each through the gzip
 * sniffing of gzip.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "import/source.h"

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

/* Descriptors that are still opprof's (ownfd.h). */
#define _GNU_SOURCE /* statx */
#include "common/ownfd.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* What identifies the open file fd names: 0, or -1 (errno). */
static int identity(int fd, op_ownfd *id)
{
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE | STATX_INO | STATX_NLINK | STATX_BTIME, &sx) !=
        0) {
        if (errno != ENOSYS) return -1;
        struct stat st; /* a kernel before 4.11 */
        if (fstat(fd, &st) != 0) return -1;
        id->dev = (uint64_t)st.st_dev;
        id->ino = (uint64_t)st.st_ino;
        id->kind = (uint32_t)(st.st_mode & S_IFMT) | (st.st_nlink == 0 ? OP_OWNFD_NAMELESS : 0);
        id->btime_ns = 0;
        return 0;
    }
    id->dev = ((uint64_t)sx.stx_dev_major << 32) | sx.stx_dev_minor;
    id->ino = (uint64_t)sx.stx_ino;
    id->kind = (uint32_t)(sx.stx_mode & S_IFMT) | (sx.stx_nlink == 0 ? OP_OWNFD_NAMELESS : 0);
    id->btime_ns =
        (sx.stx_mask & STATX_BTIME) ? (int64_t)sx.stx_btime.tv_sec * 1000000000 + sx.stx_btime.tv_nsec : 0;
    return 0;
}

int op_ownfd_set(op_ownfd *o, int fd)
{
    op_ownfd id = OP_OWNFD_NONE;
    *o = id;
    if (fd < 0) {
        errno = EBADF;
        return -1;
    }
    if (identity(fd, &id) != 0) return -1;
    id.fd = fd;
    *o = id;
    return 0;
}

int op_ownfd_same(const op_ownfd *a, const op_ownfd *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->kind == b->kind && a->btime_ns == b->btime_ns;
}

int op_ownfd_ours(const op_ownfd *o)
{
    op_ownfd now;
    return o->fd >= 0 && identity(o->fd, &now) == 0 && op_ownfd_same(&now, o);
}

void op_ownfd_close(op_ownfd *o)
{
    if (op_ownfd_ours(o)) close(o->fd);
    o->fd = -1;
}

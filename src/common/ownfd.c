/* Descriptors that are still opprof's (ownfd.h). */
#include "common/ownfd.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

int op_ownfd_set(op_ownfd *o, int fd)
{
    struct stat st;
    o->fd = -1;
    o->dev = o->ino = 0;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd < 0) errno = EBADF;
        return -1;
    }
    o->fd = fd;
    o->dev = (uint64_t)st.st_dev;
    o->ino = (uint64_t)st.st_ino;
    return 0;
}

int op_ownfd_ours(const op_ownfd *o)
{
    struct stat st;
    return o->fd >= 0 && fstat(o->fd, &st) == 0 && (uint64_t)st.st_dev == o->dev && (uint64_t)st.st_ino == o->ino;
}

void op_ownfd_close(op_ownfd *o)
{
    if (op_ownfd_ours(o)) close(o->fd);
    o->fd = -1;
    o->dev = o->ino = 0;
}

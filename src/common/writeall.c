#define _GNU_SOURCE
#include "common/writeall.h"

#include <errno.h>
#include <unistd.h>

/* n bytes at the descriptor's position (off < 0) or at off. */
static int write_all(int fd, const void *p, size_t n, int64_t off, size_t *done)
{
    const char *c = p;
    size_t total = 0;
    int rc = 0;
    while (total < n) {
        ssize_t k = off < 0 ? write(fd, c + total, n - total)
                            : pwrite(fd, c + total, n - total, (off_t)(off + (int64_t)total));
        if (k < 0) {
            if (errno == EINTR) continue;
            rc = -1;
            break;
        }
        if (k == 0) { /* no progress and no reason: not worth spinning on */
            errno = EIO;
            rc = -1;
            break;
        }
        total += (size_t)k;
    }
    if (done) *done = total;
    return rc;
}

int op_write_all_fd(int fd, const void *p, size_t n, size_t *done)
{
    return write_all(fd, p, n, -1, done);
}

int op_pwrite_all_fd(int fd, const void *p, size_t n, int64_t off)
{
    if (off < 0) {
        errno = EINVAL;
        return -1;
    }
    return write_all(fd, p, n, off, NULL);
}

int op_write_all_stream(FILE *f, const void *p, size_t n)
{
    int fd = fileno(f);
    if (fd < 0) return fwrite(p, 1, n, f) == n ? 0 : -1;
    while (fflush(f) != 0) {
        if (errno != EINTR) return -1;
        clearerr(f);
    }
    return op_write_all_fd(fd, p, n, NULL);
}

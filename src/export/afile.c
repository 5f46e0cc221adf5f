/* Atomic replacement of a file through a temporary file and rename(2). */
#define _GNU_SOURCE /* mkostemp, sync_file_range */
#include "export/afile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "opprof.h"

#define WRITEBACK_STEP (8u << 20)

/* The process umask without changing it (umask(2) would race with other
 * threads creating files): Linux shows it in /proc/self/status. */
static mode_t current_umask(void)
{
    mode_t m = 022;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return m;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "Umask:", 6) == 0) {
            m = (mode_t)strtoul(line + 6, NULL, 8);
            break;
        }
    }
    fclose(f);
    return m;
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    if (slash == path) return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* Opens a device or pipe named by the user for writing, in place. */
static int open_direct(op_afile *f, const char *path)
{
    f->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (f->fd < 0) {
        int e = errno;
        return op_fail(OPPROF_E_IO, "cannot write %s: %s", path, strerror(e));
    }
    if (!(f->path = strdup(path))) {
        close(f->fd);
        f->fd = -1;
        return op_fail(OPPROF_E_NOMEM, "out of memory");
    }
    f->direct = 1;
    return OPPROF_OK;
}

int op_afile_open(op_afile *f, const char *path)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    if (!path || !*path) return op_fail(OPPROF_E_INVAL, "no output path given");
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return open_direct(f, path);
    char *resolved = NULL;
    struct stat lst;
    if (exists && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && (resolved = realpath(path, NULL))) path = resolved;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    int rc = OPPROF_OK;
    char *dir = NULL;
    if (!*base) {
        rc = op_fail(OPPROF_E_INVAL, "cannot write %s: the path names a directory", path);
    } else if (!(dir = dir_of(path)) || !(f->path = strdup(path)) ||
               !(f->tmp = malloc(strlen(dir) + strlen(base) + 16))) {
        rc = op_fail(OPPROF_E_NOMEM, "out of memory");
    } else {
        /* Hidden, in the same directory, so that rename stays on one file system. */
        sprintf(f->tmp, "%s/.%s.XXXXXX", dir, base);
        f->fd = mkostemp(f->tmp, O_CLOEXEC);
        if (f->fd < 0) {
            int e = errno;
            rc = op_fail(OPPROF_E_IO, "cannot write %s: cannot create a file in %s: %s", f->path, dir, strerror(e));
        }
    }
    free(resolved);
    free(dir);
    if (rc != OPPROF_OK) {
        free(f->path);
        free(f->tmp);
        f->path = f->tmp = NULL;
        return rc;
    }
    /* mkostemp makes 0600: keep the mode of the file replaced, else give
     * the one open(2) would. */
    (void)fchmod(f->fd, exists ? (st.st_mode & 07777) : (0666 & ~current_umask()));
    return OPPROF_OK;
}

int op_afile_write(op_afile *f, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t k = write(f->fd, c, n);
        if (k < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            return op_fail(OPPROF_E_IO, "cannot write %s: %s (after %llu bytes; the previous file is kept)", f->path,
                           strerror(e), (unsigned long long)f->written);
        }
        if (k == 0) return op_fail(OPPROF_E_IO, "cannot write %s: the write made no progress", f->path);
        c += k;
        n -= (size_t)k;
        f->written += (uint64_t)k;
    }
    /* Start the disk write-back of what is written so far, so that the final
     * fsync finds little left to do: the disk works while we format. */
    if (!f->direct && f->written - f->synced >= WRITEBACK_STEP) {
        (void)sync_file_range(f->fd, (off_t)f->synced, (off_t)(f->written - f->synced), SYNC_FILE_RANGE_WRITE);
        f->synced = f->written;
    }
    return OPPROF_OK;
}

static void release(op_afile *f)
{
    free(f->path);
    free(f->tmp);
    f->path = f->tmp = NULL;
    f->fd = -1;
}

void op_afile_abort(op_afile *f)
{
    if (f->fd >= 0) close(f->fd);
    if (f->tmp) unlink(f->tmp);
    release(f);
}

int op_afile_commit(op_afile *f, int do_fsync)
{
    if (f->direct) {
        int rc = close(f->fd) == 0 ? OPPROF_OK : op_fail(OPPROF_E_IO, "cannot write %s: %s", f->path, strerror(errno));
        release(f);
        return rc;
    }
    int e = 0;
    const char *what = NULL;
    if (do_fsync && fsync(f->fd) != 0) {
        e = errno;
        what = "fsync";
    }
    if (close(f->fd) != 0 && !what) {
        e = errno;
        what = "close";
    }
    f->fd = -1;
    if (!what && rename(f->tmp, f->path) != 0) {
        e = errno;
        what = "rename";
    }
    if (what) {
        int rc = op_fail(OPPROF_E_IO, "cannot write %s: %s: %s (the previous file is kept)", f->path, what,
                         strerror(e));
        unlink(f->tmp);
        release(f);
        return rc;
    }
    if (do_fsync) {
        /* The rename itself is durable once the directory is synced. */
        char *dir = dir_of(f->path);
        int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        if (dfd >= 0) {
            (void)fsync(dfd);
            close(dfd);
        }
        free(dir);
    }
    release(f);
    return OPPROF_OK;
}

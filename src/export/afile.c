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
#include "common/writeall.h"
#include "opprof_trace.h"

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

/* A path as messages show it: a long one is cut in the middle, so that the
 * system's reason after it still fits in the detail. */
typedef struct shown_path {
    char s[208];
} shown_path;

static shown_path show(const char *path)
{
    shown_path p;
    size_t n = strlen(path);
    if (n < sizeof p.s) snprintf(p.s, sizeof p.s, "%s", path);
    else snprintf(p.s, sizeof p.s, "%.100s...%s", path, path + n - 100);
    return p;
}

/* strerror, with the limits spelled out when a name was too long. */
static const char *reason(int e)
{
    if (e == ENAMETOOLONG) return "File name too long (at most 255 bytes per name and 4095 per path)";
    return strerror(e);
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    if (slash == path) return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* Opens a device, a pipe or a file that must keep its identity for writing
 * in place (flags: O_TRUNC | O_NOFOLLOW for such a file). */
static int open_direct(op_afile *f, const char *path, int flags)
{
    /* Opening a FIFO blocks until a reader comes; a signal may interrupt that. */
    do
        f->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | flags);
    while (f->fd < 0 && errno == EINTR);
    if (f->fd < 0) {
        int e = errno;
        return op_fail(OPPROF_E_IO, "cannot write %s: %s", show(path).s, reason(e));
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
    /* A final symbolic link is followed only when it is the writer's own: in
     * a shared sticky folder (/tmp) another user's link could otherwise
     * point a root-run profiler at any file (the rule of the kernel's
     * fs.protected_symlinks, applied everywhere). */
    struct stat lst;
    int is_link = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);
    if (is_link && lst.st_uid != geteuid())
        return op_fail(OPPROF_E_IO,
                       "cannot write %s: it is a symbolic link owned by another user (uid %u), which opprof does "
                       "not follow; name its target or remove it",
                       show(path).s, (unsigned)lst.st_uid);
    if (exists && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return open_direct(f, path, 0);
    char *resolved = NULL;
    if (exists && is_link && (resolved = realpath(path, NULL))) path = resolved;
    /* A file with other hard links, or someone else's, is rewritten in place:
     * replacing it would break its links or make it the writer's own. */
    if (exists && S_ISREG(st.st_mode) && (st.st_nlink > 1 || st.st_uid != geteuid())) {
        int rc = open_direct(f, path, O_TRUNC | O_NOFOLLOW);
        free(resolved);
        return rc;
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    int rc = OPPROF_OK;
    char *dir = NULL;
    if (!*base) {
        rc = op_fail(OPPROF_E_INVAL, "cannot write %s: the path names a directory", show(path).s);
    } else if (!(dir = dir_of(path)) || !(f->path = strdup(path)) ||
               !(f->tmp = malloc(strlen(dir) + strlen(base) + 16))) {
        rc = op_fail(OPPROF_E_NOMEM, "out of memory");
    } else {
        /* Hidden, in the same directory, so that rename stays on one file
         * system. A name near the 255-byte limit is shortened so that its
         * temporary name fits; a name over the limit fails here, before any
         * writing, as it would at the rename. */
        size_t blen = strlen(base);
        int keep = (int)(blen <= 255 && blen > 247 ? 247 : blen);
        sprintf(f->tmp, "%s/.%.*s.XXXXXX", dir, keep, base);
        f->fd = mkostemp(f->tmp, O_CLOEXEC);
        if (f->fd < 0) {
            int e = errno;
            rc = op_fail(OPPROF_E_IO, "cannot write %s: cannot create a file in %s: %s", show(f->path).s, show(dir).s,
                         reason(e));
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
    size_t done = 0;
    int rc = op_write_all_fd(f->fd, p, n, &done);
    f->written += (uint64_t)done;
    if (rc != 0) {
        int e = errno;
        f->err = e;
        return op_fail(OPPROF_E_IO, "cannot write %s: %s (after %llu bytes; the previous file is kept)",
                       show(f->path).s, reason(e), (unsigned long long)f->written);
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
        int rc = close(f->fd) == 0 ? OPPROF_OK
                                   : op_fail(OPPROF_E_IO, "cannot write %s: %s", show(f->path).s, strerror(errno));
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
        int rc = op_fail(OPPROF_E_IO, "cannot write %s: %s: %s (the previous file is kept)", show(f->path).s, what,
                         reason(e));
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

/* The stdio side of an op_afile: the FILE's buffer is handed to
 * op_afile_write, which retries what a signal interrupts (stdio alone
 * would drop its buffer on EINTR). */
static ssize_t cookie_write(void *c, const char *buf, size_t n)
{
    op_afile *f = c;
    if (f->err) { /* an earlier write failed: its reason stands */
        errno = f->err;
        return -1;
    }
    if (op_afile_write(f, buf, n) != OPPROF_OK) {
        errno = f->err;
        return -1;
    }
    return (ssize_t)n;
}

/* Any stdio writer into an atomically replaced file: the FILE writes
 * through the file (cookie_write), so that closing the FILE and committing
 * the file are separate steps and a failure in either keeps the previous
 * file. */
int opprof_write_file(const char *path, opprof_write_fn write_fn, void *ctx)
{
    if (!path || !*path || !write_fn) return op_fail(OPPROF_E_INVAL, "opprof_write_file: NULL argument");
    op_afile af;
    int rc = op_afile_open(&af, path);
    if (rc != OPPROF_OK) return rc;
    cookie_io_functions_t io = {NULL, cookie_write, NULL, NULL};
    FILE *fp = fopencookie(&af, "w", io);
    if (!fp) {
        int e = errno;
        op_afile_abort(&af);
        return op_fail(OPPROF_E_IO, "cannot write %s: %s", show(path).s, strerror(e));
    }
    errno = 0;
    rc = write_fn(fp, ctx);
    /* A stream error is named here, with the path and the system's reason
     * (kept by cookie_write, or errno of the writer's last call); a failure
     * of the writer's own keeps its detail. */
    int e = ferror(fp) ? (af.err ? af.err : errno ? errno : EIO) : 0;
    if (!e) {
        errno = 0;
        if (fflush(fp) != 0) e = af.err ? af.err : errno ? errno : EIO;
    }
    if (fclose(fp) != 0 && !e) e = af.err ? af.err : errno ? errno : EIO;
    if (e) rc = op_fail(OPPROF_E_IO, "cannot write %s: %s (the previous file is kept)", show(path).s, reason(e));
    if (rc != OPPROF_OK) {
        op_afile_abort(&af);
        return rc;
    }
    return op_afile_commit(&af, 1);
}

/* Atomic replacement of a file through a temporary file and rename(2)
 * (afile.h). */
#define _GNU_SOURCE /* mkostemp, sync_file_range, O_TMPFILE, F_OFD_SETLK */
#include "export/afile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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
    if (f->fd < 0 || op_ownfd_set(&f->own, f->fd) != 0) {
        int e = errno;
        if (f->fd >= 0) close(f->fd);
        f->fd = -1;
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

/* A name's length as kept in temporary names (.NAME.PID.XXXXXX within 255 bytes). */
static int kept_len(const char *base)
{
    size_t blen = strlen(base);
    return (int)(blen <= 255 && blen > 236 ? 236 : blen);
}

/* A write lock on the whole file, held as long as the descriptor is open:
 * what tells a sweep (below) that a live writer, maybe in another pid
 * namespace, still has the file. 0 when taken. */
static int lock_file(int fd)
{
    struct flock lk;
    memset(&lk, 0, sizeof lk);
    lk.l_type = F_WRLCK;
    lk.l_whence = SEEK_SET;
    return fcntl(fd, F_OFD_SETLK, &lk);
}

/* Removes the temporary files that writers of base in dir left when their
 * process crashed, called _exit or was killed: only names of the form
 * .BASE.PID.XXXXXX, regular files of this user, whose process is gone and
 * whose lock no one holds. */
static void sweep_stale(const char *dir, const char *base)
{
    char prefix[300];
    int pl = snprintf(prefix, sizeof prefix, ".%.*s.", kept_len(base), base);
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, (size_t)pl) != 0) continue;
        char *end;
        long pid = strtol(e->d_name + pl, &end, 10);
        if (end == e->d_name + pl || pid <= 0 || *end != '.' || strlen(end + 1) != 6) continue;
        if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        int fd = openat(dirfd(d), e->d_name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) continue;
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && lock_file(fd) == 0)
            (void)unlinkat(dirfd(d), e->d_name, 0);
        close(fd);
    }
    closedir(d);
}

/* Six characters for a temporary name that the next try changes. */
static unsigned name_bits(void)
{
    static _Atomic unsigned counter;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ((unsigned)ts.tv_nsec ^ (unsigned)(ts.tv_sec * 2654435761u) ^ (counter++ * 40503u)) & 0xffffffu;
}

static int open_file(op_afile *f, const char *path, int named)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    f->own.fd = -1;
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
    mode_t mode = exists ? (st.st_mode & 07777) : (0666 & ~current_umask());
    if (!*base) {
        rc = op_fail(OPPROF_E_INVAL, "cannot write %s: the path names a directory", show(path).s);
    } else if (strlen(base) > 255) {
        rc = op_fail(OPPROF_E_IO, "cannot write %s: %s", show(path).s, reason(ENAMETOOLONG));
    } else if (!(dir = dir_of(path)) || !(f->path = strdup(path))) {
        rc = op_fail(OPPROF_E_NOMEM, "out of memory");
    } else {
        /* In the same directory, so that the rename stays on one file
         * system. Without a name when the file system allows: nothing is
         * left behind by a process that dies before the commit. */
        if (!named) {
            f->fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
            f->anon = f->fd >= 0;
            /* EISDIR, EOPNOTSUPP, EINVAL: no O_TMPFILE here; named instead */
            if (f->fd < 0 && errno != EISDIR && errno != EOPNOTSUPP && errno != EINVAL) named = -1;
        }
        if (f->fd < 0 && named >= 0) {
            /* Hidden, with the writer's pid: sweep_stale can tell when it is left over. */
            sweep_stale(dir, base);
            if (!(f->tmp = malloc(strlen(dir) + strlen(base) + 40))) {
                rc = op_fail(OPPROF_E_NOMEM, "out of memory");
            } else {
                sprintf(f->tmp, "%s/.%.*s.%lld.XXXXXX", dir, kept_len(base), base, (long long)getpid());
                f->fd = mkostemp(f->tmp, O_CLOEXEC);
                if (f->fd >= 0) {
                    (void)lock_file(f->fd);
                    (void)fchmod(f->fd, mode); /* mkostemp makes 0600: the mode open(2) would give */
                }
            }
        }
        if (rc == OPPROF_OK && (f->fd < 0 || op_ownfd_set(&f->own, f->fd) != 0)) {
            int e = errno;
            rc = op_fail(OPPROF_E_IO, "cannot write %s: cannot create a file in %s: %s", show(f->path).s, show(dir).s,
                         reason(e));
            if (f->fd >= 0) close(f->fd);
            if (f->tmp && f->fd >= 0) unlink(f->tmp);
            f->fd = -1;
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
    if (f->anon) (void)fchmod(f->fd, mode); /* the umask applied at open; the replaced file's mode stays */
    return OPPROF_OK;
}

int op_afile_open(op_afile *f, const char *path)
{
    return open_file(f, path, 0);
}

int op_afile_open_named(op_afile *f, const char *path)
{
    return open_file(f, path, 1);
}

/* When the program has closed opprof's descriptor (and maybe opened a file
 * that took its number), the file is opened again by its name, if it has
 * one and it is still the same file, at the offset written so far. The old
 * number is the program's and is never touched again. */
static int reclaim(op_afile *f)
{
    if (op_ownfd_ours(&f->own)) return OPPROF_OK;
    if (f->own.fd < 0 && !f->own.ino) return op_fail(OPPROF_E_IO, "cannot write %s: not open", show(f->path).s);
    op_ownfd was = f->own;
    f->fd = f->own.fd = -1;
    const char *name = f->direct ? f->path : f->tmp;
    if (!name) {
        f->err = EBADF;
        return op_fail(OPPROF_E_IO,
                       "cannot write %s: the program closed opprof's descriptor of its temporary file while it was "
                       "written (the previous file is kept)",
                       show(f->path).s);
    }
    int fd;
    do
        fd = open(name, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
    while (fd < 0 && errno == EINTR);
    op_ownfd now;
    int same = fd >= 0 && op_ownfd_set(&now, fd) == 0 && op_ownfd_same(&now, &was);
    if (same && S_ISREG(now.kind & S_IFMT) && lseek(fd, (off_t)f->written, SEEK_SET) < 0) same = 0;
    if (!same) {
        f->own = was; /* asked again at the next write */
        f->own.fd = -1;
        if (fd >= 0) close(fd);
        f->err = EBADF;
        return op_fail(OPPROF_E_IO,
                       "cannot write %s: the program closed opprof's descriptor, and %s is no longer the file it "
                       "was (the previous file is kept)",
                       show(f->path).s, show(name).s);
    }
    if (!f->direct) (void)lock_file(fd);
    f->own = now;
    f->fd = fd;
    f->reopened++;
    return OPPROF_OK;
}

int op_afile_write(op_afile *f, const void *p, size_t n)
{
    int rc = reclaim(f);
    if (rc != OPPROF_OK) return rc;
    size_t done = 0;
    rc = op_write_all_fd(f->fd, p, n, &done);
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
    f->own.fd = -1;
}

void op_afile_abort(op_afile *f)
{
    op_ownfd_close(&f->own); /* a number the program took stays open */
    if (f->tmp) unlink(f->tmp);
    release(f);
}

/* Gives the nameless temporary file the name `to`: 0, or -1 with errno
 * (EEXIST: a file has that name). Through /proc, else AT_EMPTY_PATH (which
 * needs CAP_DAC_READ_SEARCH). */
static int link_anon(int fd, const char *to)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    if (linkat(AT_FDCWD, proc, AT_FDCWD, to, AT_SYMLINK_FOLLOW) == 0) return 0;
    int e = errno;
    if (e == EEXIST) return -1;
    if (linkat(fd, "", AT_FDCWD, to, AT_EMPTY_PATH) == 0) return 0;
    errno = errno == EEXIST ? EEXIST : e;
    return -1;
}

/* The nameless file becomes the target: linked at its name when there is
 * none yet, else linked at a hidden name and renamed over it. 0, or the
 * errno with *what naming the step. */
static int name_anon(op_afile *f, const char **what)
{
    if (link_anon(f->fd, f->path) == 0) return 0;
    if (errno != EEXIST) {
        *what = "link";
        return errno;
    }
    char *dir = dir_of(f->path);
    const char *base = strrchr(f->path, '/');
    base = base ? base + 1 : f->path;
    if (!dir || !(f->tmp = malloc(strlen(dir) + strlen(base) + 48))) {
        free(dir);
        *what = "link";
        return ENOMEM;
    }
    int e = EEXIST;
    for (int i = 0; i < 100 && e == EEXIST; i++) {
        sprintf(f->tmp, "%s/.%.*s.%lld.%06x", dir, kept_len(base), base, (long long)getpid(), name_bits());
        e = link_anon(f->fd, f->tmp) == 0 ? 0 : errno;
    }
    free(dir);
    if (e) {
        free(f->tmp);
        f->tmp = NULL;
        *what = "link";
        return e;
    }
    if (rename(f->tmp, f->path) != 0) {
        *what = "rename";
        return errno; /* the caller removes f->tmp */
    }
    free(f->tmp);
    f->tmp = NULL;
    return 0;
}

int op_afile_commit(op_afile *f, int do_fsync)
{
    int rc = reclaim(f);
    if (rc != OPPROF_OK) {
        if (f->tmp && !f->direct) unlink(f->tmp);
        release(f);
        return rc;
    }
    if (f->direct) {
        rc = close(f->fd) == 0 ? OPPROF_OK
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
    if (!what && f->anon) e = name_anon(f, &what);
    if (close(f->fd) != 0 && !what) {
        e = errno;
        what = "close";
    }
    f->fd = f->own.fd = -1;
    if (!what && !f->anon && rename(f->tmp, f->path) != 0) {
        e = errno;
        what = "rename";
    }
    if (what) {
        rc = op_fail(OPPROF_E_IO, "cannot write %s: %s: %s (the previous file is kept)", show(f->path).s, what,
                     reason(e));
        if (f->tmp) unlink(f->tmp);
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

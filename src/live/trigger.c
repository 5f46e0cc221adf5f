/* The trigger: the client side of the listener (listener.c). It finds the
 * process's socket among its user's folders, says clearly why when it
 * cannot (no such process, another user's, not accepting triggers), sends
 * one request and relays the reply.
 *
 * What it connects to is checked before anything is sent (another user may
 * have made /tmp/opprof-UID first and planted a socket in it): the folder
 * must be the target user's own with mode 0700, the socket file theirs, and
 * the process at the other end (SO_PEERCRED) the target process of that
 * user. What comes back is shown with control characters escaped. A
 * process that does not answer within ANSWER_MS (stopped, in a debugger)
 * is given up on. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"
#include "common/textesc.h"
#include "opprof_trace.h"
#include "live/odsock.h"

#define REPLY_MAX (256u * 1024 * 1024)
#define ANSWER_MS 5000                /* for the first byte of a reply */
#define WRITE_GRACE_NS 300000000000LL /* after the recording's own time, for writing its files */

void opprof_trigger_request_init(opprof_trigger_request *r)
{
    if (r) memset(r, 0, sizeof *r);
}

/* Connects to the socket at path: the fd, or -1 with errno. */
static int connect_path(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* 0 when dir is a folder of uid that only uid may enter (the listener's
 * own test, odsock.c); else -1 with why (ENOENT: there is none). */
static int dir_is_users(const char *dir, uid_t uid, char *why, size_t cap)
{
    struct stat st;
    if (lstat(dir, &st) != 0) {
        if (errno != ENOENT) snprintf(why, cap, "%s: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 077)) {
        snprintf(why, cap, "%s is not user %u's own folder (%s of uid %u, mode %04o)", dir, (unsigned)uid,
                 S_ISDIR(st.st_mode) ? "a folder" : S_ISLNK(st.st_mode) ? "a symbolic link" : "a file",
                 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
        return -1;
    }
    return 0;
}

/* Connects to path, the socket of process pid of user uid, and checks the
 * file and the peer before anything is sent: the fd, or -1 (errno set for
 * a failed connect; why set, errno EPERM, for a socket that is not pid's). */
static int connect_checked(const char *path, long long pid, uid_t uid, char *why, size_t cap)
{
    struct stat st;
    if (lstat(path, &st) != 0) return -1;
    if (!S_ISSOCK(st.st_mode) || st.st_uid != uid) {
        snprintf(why, cap, "%s is not a socket of user %u (uid %u, mode %04o)", path, (unsigned)uid,
                 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
        errno = EPERM;
        return -1;
    }
    int fd = connect_path(path);
    if (fd < 0) return -1;
    struct ucred cr;
    socklen_t len = sizeof cr;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 || (long long)cr.pid != pid || cr.uid != uid) {
        snprintf(why, cap, "%s is served by process %lld of uid %u, not by process %lld of uid %u", path,
                 (long long)cr.pid, (unsigned)cr.uid, pid, (unsigned)uid);
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}

/* The owner of process pid, from /proc; -1 when there is no such process. */
static long long owner_of(long long pid)
{
    char p[64];
    struct stat st;
    snprintf(p, sizeof p, "/proc/%lld", pid);
    if (stat(p, &st) != 0) return -1;
    return (long long)st.st_uid;
}

/* Opens the connection to pid's listener, or fails with the reason. */
static int open_listener(long long pid, int *fd)
{
    if (pid <= 0) return op_fail(OPPROF_E_INVAL, "%lld is not a process id", pid);
    long long owner = owner_of(pid);
    if (owner < 0) return op_fail(OPPROF_E_NOT_FOUND, "no process %lld", pid);
    uid_t me = geteuid();
    if ((uid_t)owner != me && me != 0)
        return op_fail(OPPROF_E_PERM, "process %lld belongs to another user (uid %lld); only its user can trigger it",
                       pid, owner);
    char dir[256], path[320], why[700] = "";
    int denied = 0, refused;
    /* ECONNREFUSED: bound but not listening yet, or a socket the program
     * closed, which its listener replaces within a quarter of a second
     * (listener.c): asked again for up to a second. (Or a file left by an
     * earlier process of this pid, not ours to remove while the process
     * lives.) EPERM: not the process's (why says whose). */
    for (int tries = 0;; tries++) {
        refused = 0;
        for (int k = 0; op_od_dir_candidate((uid_t)owner, k, dir, sizeof dir) == 0; k++) {
            if (op_od_sock_path(dir, pid, path, sizeof path) != 0) continue;
            if (dir_is_users(dir, (uid_t)owner, why, sizeof why) != 0) continue; /* why says so, when there is one */
            int c = connect_checked(path, pid, (uid_t)owner, why, sizeof why);
            if (c >= 0) {
                *fd = c;
                return OPPROF_OK;
            }
            if (errno == EACCES) denied = 1;
            if (errno == ECONNREFUSED) refused = 1;
        }
        if (!refused || denied || why[0] || tries >= 10) break;
        struct timespec ts = {0, 100000000L};
        nanosleep(&ts, NULL);
    }
    if (why[0]) return op_fail(OPPROF_E_PERM, "process %lld: not connecting: %s", pid, why);
    if (denied) return op_fail(OPPROF_E_PERM, "process %lld: its socket is not open to user %u", pid, (unsigned)me);
    return op_fail(OPPROF_E_NOT_FOUND,
                   "process %lld does not accept triggers (start it with opprof exec --on-demand or --flight, "
                   "or OPPROF_ON_DEMAND=1)", pid);
}

/* Sends req and reads the whole reply (the listener closes when done): the
 * first byte within ANSWER_MS, the rest within rest_ms (-1: no limit) of
 * it. A record or a dump is answered "accepted" at once, dropped here. */
/* *nothing (when not NULL) is set when the connection ended without a
 * byte: the listener's socket was replaced under us (listener.c). */
static int exchange(int fd, long long pid, const char *req, int rest_ms, char **reply, int *nothing)
{
    int rc = OPPROF_OK, r = 0;
    if (nothing) *nothing = 0;
    /* A request that cannot be sent met a socket closed under us, as one
     * that gets no byte back does (r -1: nothing read, *reply unset). */
    if (op_od_write_all(fd, req, strlen(req)) != 0 || shutdown(fd, SHUT_WR) != 0) {
        rc = op_fail(OPPROF_E_IO, "cannot send the request: %s", strerror(errno));
        r = -1;
    } else if ((r = op_od_read_reply(fd, REPLY_MAX, ANSWER_MS, rest_ms, reply, NULL)) == -2)
        rc = op_fail(OPPROF_E_IO, "process %lld does not answer within %d s (stopped, in a debugger, or busy "
                                  "writing a trace); try again",
                     pid, ANSWER_MS / 1000);
    else if (r != 0)
        rc = op_fail(OPPROF_E_IO, "no reply (the process may have exited)");
    if (nothing) *nothing = r == -1 || (r == 0 && !**reply);
    if (r == 0 && !**reply) rc = op_fail(OPPROF_E_IO, "no reply (the process may have exited)");
    close(fd);
    if (rc == OPPROF_OK && !strncmp(*reply, "accepted\n", 9)) memmove(*reply, *reply + 9, strlen(*reply + 9) + 1);
    return rc;
}

/* text as a person may see it: each line with its control characters
 * escaped (common/textesc.h), so that a reply cannot drive the terminal. */
static void put_escaped(FILE *out, const char *text)
{
    for (const char *line = text; *line;) {
        size_t n = strcspn(line, "\n");
        char small[512];
        size_t need = op_text_escape(line, n, small, sizeof small);
        if (need < sizeof small) {
            fputs(small, out);
        } else {
            char *big = malloc(need + 1);
            if (big) {
                op_text_escape(line, n, big, need + 1);
                fputs(big, out);
                free(big);
            }
        }
        if (line[n] == '\n') fputc('\n', out);
        line += n + (line[n] == '\n');
    }
}

/* "ok\n..." -> OK with *body after the first line; "error CODE msg" -> CODE. */
static int parse_reply(const char *r, const char **body)
{
    if (!strncmp(r, "ok\n", 3)) {
        *body = r + 3;
        return OPPROF_OK;
    }
    if (!strncmp(r, "error ", 6)) {
        char *end;
        long code = strtol(r + 6, &end, 10);
        if (code >= 0 || code < -100) code = OPPROF_E_IO;
        const char *msg = *end == ' ' ? end + 1 : end;
        char shown[1100];
        op_text_escape(msg, strcspn(msg, "\n"), shown, sizeof shown);
        return op_fail((int)code, "%s", shown);
    }
    return op_fail(OPPROF_E_PARSE, "unexpected reply from the process");
}

/* key=value line; paths made absolute from our working directory. */
static int add(FILE *f, const char *key, const char *val, int is_path, const char *cwd)
{
    if (strchr(val, '\n')) return op_fail(OPPROF_E_INVAL, "%s has a newline", key);
    if (is_path && val[0] != '/' && strcmp(val, "-") != 0) fprintf(f, "%s=%s/%s\n", key, cwd, val);
    else fprintf(f, "%s=%s\n", key, val);
    return OPPROF_OK;
}

int opprof_trigger(int64_t pid, const opprof_trigger_request *r, FILE *out)
{
    opprof_trigger_request d;
    if (!r) {
        opprof_trigger_request_init(&d);
        r = &d;
    }
    if (r->duration_ns < 0 || r->steps < 0 || r->timeout_ns < 0 || r->row_limit < -1)
        return op_fail(OPPROF_E_INVAL, "opprof_trigger: negative duration, steps, timeout or row limit");
    if (r->dump && (r->table || r->steps || r->duration_ns))
        return op_fail(OPPROF_E_INVAL, "a dump writes the flight recorder's trace: no table, duration or steps");
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) return op_fail(OPPROF_E_IO, "getcwd: %s", strerror(errno));
    char *req = NULL;
    size_t rlen = 0;
    FILE *f = open_memstream(&req, &rlen);
    if (!f) return op_fail(OPPROF_E_NOMEM, "out of memory");
    int rc = add(f, "op", r->dump ? "dump" : "record", 0, cwd);
    if (!rc) rc = add(f, "cwd", cwd, 0, cwd);
    if (!rc && r->trace) rc = add(f, "trace", r->trace, 1, cwd);
    if (!rc && r->table) rc = add(f, "table", r->table, 1, cwd);
    if (!rc && r->sort_by) rc = add(f, "sort", r->sort_by, 0, cwd);
    if (r->duration_ns) fprintf(f, "duration_ns=%lld\n", (long long)r->duration_ns);
    if (r->steps) fprintf(f, "steps=%lld\n", (long long)r->steps);
    if (r->timeout_ns) fprintf(f, "timeout_ns=%lld\n", (long long)r->timeout_ns);
    if (r->row_limit) fprintf(f, "row_limit=%d\n", r->row_limit);
    if (r->record_shapes) fprintf(f, "shapes=1\n");
    if (fclose(f) != 0 && !rc) rc = op_fail(OPPROF_E_NOMEM, "out of memory");
    /* After the first answer: the recording's own time, then time to write. */
    int64_t bound = r->dump ? 0 : r->steps ? (r->timeout_ns ? r->timeout_ns : 600000000000LL)
                                           : (r->duration_ns ? r->duration_ns : 5000000000LL);
    int64_t rest_ms = bound > INT64_MAX - WRITE_GRACE_NS ? -1 : (bound + WRITE_GRACE_NS) / 1000000;
    char *reply = NULL;
    /* Nothing back at all: the program closed the listener's socket while
     * we connected to it, and the listener makes a new one within a quarter
     * of a second (listener.c); asked again for up to 2 s. */
    for (int tries = 0, nothing = 1; !rc && nothing && tries <= 20; tries++) {
        int fd = -1;
        if (tries) {
            free(reply);
            reply = NULL;
            struct timespec ts = {0, 100000000L};
            nanosleep(&ts, NULL);
        }
        if ((rc = open_listener(pid, &fd)) != OPPROF_OK) break;
        rc = exchange(fd, (long long)pid, req, rest_ms < 0 || rest_ms > 0x7fffffff ? -1 : (int)rest_ms, &reply, &nothing);
        if (rc != OPPROF_OK && nothing && tries < 20) rc = OPPROF_OK; /* asked again */
    }
    free(req);
    if (rc) return rc;
    const char *body = "";
    rc = parse_reply(reply, &body);
    if (!rc && out) {
        put_escaped(out, body);
        fflush(out);
    }
    free(reply);
    if (!rc) op_clear_error();
    return rc;
}

/* s escaped into out (cap bytes), cut at cap. */
static void shown(const char *s, char *out, size_t cap)
{
    op_text_escape(s, strlen(s), out, cap);
}

/* A process that does not answer a ping: "stopped" when the kernel says
 * so (SIGSTOP, a debugger), and its command from /proc. */
static void list_silent(long long pid, FILE *out)
{
    char p[64], comm[64] = "?", stat[256] = "", name[260];
    snprintf(p, sizeof p, "/proc/%lld/comm", pid);
    FILE *f = fopen(p, "r");
    if (f) {
        if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = '\0';
        fclose(f);
    }
    snprintf(p, sizeof p, "/proc/%lld/stat", pid);
    f = fopen(p, "r");
    if (f) {
        if (!fgets(stat, sizeof stat, f)) stat[0] = '\0';
        fclose(f);
    }
    const char *close_paren = strrchr(stat, ')');
    char st = close_paren && close_paren[1] == ' ' ? close_paren[2] : '?';
    shown(comm, name, sizeof name);
    if (out) fprintf(out, "%lld ? %s %s\n", pid, st == 'T' || st == 't' ? "stopped" : "not-answering", name);
}

/* One listed process: "PID MODE STATE COMMAND". */
static int list_one(const char *path, long long pid, FILE *out)
{
    char why[700];
    int fd = connect_checked(path, pid, geteuid(), why, sizeof why);
    if (fd < 0) return 0; /* starting up (bound, not yet listening), or not a listener of ours */
    char *reply = NULL;
    if (exchange(fd, pid, "op=ping\n", ANSWER_MS, &reply, NULL) != OPPROF_OK) {
        if (strstr(opprof_last_error(), "does not answer")) {
            list_silent(pid, out);
            return 1;
        }
        return 0;
    }
    const char *body;
    int listed = 0;
    if (parse_reply(reply, &body) == OPPROF_OK) {
        char mode[64] = "?", state[64] = "?", comm[64] = "?", m[260], st[260], c[260];
        op_od_get(body, "mode", mode, sizeof mode);
        op_od_get(body, "state", state, sizeof state);
        op_od_get(body, "comm", comm, sizeof comm);
        shown(mode, m, sizeof m);
        shown(state, st, sizeof st);
        shown(comm, c, sizeof c);
        if (out) fprintf(out, "%lld %s %s %s\n", pid, m, st, c);
        listed = 1;
    }
    free(reply);
    return listed;
}

int opprof_trigger_list(FILE *out)
{
    char dir[256];
    int n = 0;
    for (int k = 0; op_od_dir_candidate(geteuid(), k, dir, sizeof dir) == 0; k++) {
        char why[700];
        if (dir_is_users(dir, geteuid(), why, sizeof why) != 0) continue; /* none, or not ours: not looked into */
        DIR *d = opendir(dir);
        if (!d) continue;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            char *end;
            long long pid = strtoll(e->d_name, &end, 10);
            if (pid <= 0 || strcmp(end, ".sock") != 0) continue;
            char path[512];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
                unlink(path); /* its process is gone */
                continue;
            }
            n += list_one(path, pid, out);
        }
        closedir(d);
    }
    return n;
}

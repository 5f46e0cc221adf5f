/* The trigger: the client side of the listener (listener.c). It finds the
 * process's socket among its user's folders, says clearly why when it
 * cannot (no such process, another user's, not accepting triggers), sends
 * one request and relays the reply. */
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
#include <unistd.h>

#include "common/error.h"
#include "opprof_trace.h"
#include "live/odsock.h"

#define REPLY_MAX (256u * 1024 * 1024)

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
    char dir[256], path[320];
    int denied = 0;
    for (int k = 0; op_od_dir_candidate((uid_t)owner, k, dir, sizeof dir) == 0; k++) {
        if (op_od_sock_path(dir, pid, path, sizeof path) != 0) continue;
        int c = connect_path(path);
        if (c >= 0) {
            *fd = c;
            return OPPROF_OK;
        }
        if (errno == EACCES || errno == EPERM) denied = 1;
        /* ECONNREFUSED: bound but not listening yet (or left by an earlier
         * process of this pid); the file is not ours to remove while the
         * process lives. */
    }
    if (denied) return op_fail(OPPROF_E_PERM, "process %lld: its socket is not open to user %u", pid, (unsigned)me);
    return op_fail(OPPROF_E_NOT_FOUND,
                   "process %lld does not accept triggers (start it with opprof exec --on-demand or --flight, "
                   "or OPPROF_ON_DEMAND=1)", pid);
}

/* Sends req and reads the whole reply (the listener closes when done). */
static int exchange(int fd, const char *req, char **reply)
{
    int rc = OPPROF_OK;
    if (op_od_write_all(fd, req, strlen(req)) != 0 || shutdown(fd, SHUT_WR) != 0)
        rc = op_fail(OPPROF_E_IO, "cannot send the request: %s", strerror(errno));
    else if (op_od_read_all(fd, REPLY_MAX, -1, reply, NULL) != 0)
        rc = op_fail(OPPROF_E_IO, "no reply (the process may have exited)");
    close(fd);
    return rc;
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
        size_t n = strcspn(msg, "\n");
        return op_fail((int)code, "%.*s", (int)n, msg);
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
    int fd = -1;
    if (!rc) rc = open_listener(pid, &fd);
    char *reply = NULL;
    if (!rc) rc = exchange(fd, req, &reply);
    free(req);
    if (rc) return rc;
    const char *body = "";
    rc = parse_reply(reply, &body);
    if (!rc && out) {
        fputs(body, out);
        fflush(out);
    }
    free(reply);
    if (!rc) op_clear_error();
    return rc;
}

/* One listed process: "PID MODE STATE COMMAND". */
static int list_one(const char *path, long long pid, FILE *out)
{
    int fd = connect_path(path);
    if (fd < 0) return 0; /* starting up (bound, not yet listening), or not a listener of ours */
    char *reply = NULL;
    if (exchange(fd, "op=ping\n", &reply) != OPPROF_OK) return 0;
    const char *body;
    int listed = 0;
    if (parse_reply(reply, &body) == OPPROF_OK) {
        char mode[64] = "?", state[64] = "?", comm[64] = "?";
        op_od_get(body, "mode", mode, sizeof mode);
        op_od_get(body, "state", state, sizeof state);
        op_od_get(body, "comm", comm, sizeof comm);
        if (out) fprintf(out, "%lld %s %s %s\n", pid, mode, state, comm);
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

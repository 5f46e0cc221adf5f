/* The on-demand sockets' folder and the byte stream of a request. A socket
 * file is guarded by its folder: mode 0700 and owned by its user, so that
 * no one else can even connect (the listener also checks SO_PEERCRED). */
#define _GNU_SOURCE
#include "live/odsock.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/error.h"

int op_od_dir_candidate(uid_t uid, int k, char *buf, size_t cap)
{
    const char *xdg = uid == geteuid() ? getenv("XDG_RUNTIME_DIR") : NULL;
    int have_xdg = xdg && xdg[0] == '/';
    if (!have_xdg) k++; /* no first candidate */
    int n;
    switch (k) {
    case 0: n = snprintf(buf, cap, "%s/opprof", xdg); break;
    case 1: n = snprintf(buf, cap, "/run/user/%u/opprof", (unsigned)uid); break;
    case 2: n = snprintf(buf, cap, "/tmp/opprof-%u", (unsigned)uid); break;
    default: return -1;
    }
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

static int parent_exists(const char *dir)
{
    char p[512];
    snprintf(p, sizeof p, "%s", dir);
    char *slash = strrchr(p, '/');
    if (!slash || slash == p) return 1;
    *slash = '\0';
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode) && access(p, W_OK | X_OK) == 0;
}

int op_od_dir_make(char *buf, size_t cap)
{
    uid_t me = geteuid();
    for (int k = 0; op_od_dir_candidate(me, k, buf, cap) == 0; k++) {
        if (!parent_exists(buf)) continue;
        if (mkdir(buf, 0700) != 0 && errno != EEXIST)
            return op_fail(OPPROF_E_IO, "cannot make %s: %s", buf, strerror(errno));
        struct stat st;
        if (lstat(buf, &st) != 0) return op_fail(OPPROF_E_IO, "%s: %s", buf, strerror(errno));
        if (!S_ISDIR(st.st_mode) || st.st_uid != me || (st.st_mode & 077))
            return op_fail(OPPROF_E_IO, "%s is not a folder of user %u with mode 0700; not listening there", buf,
                           (unsigned)me);
        return 0;
    }
    return op_fail(OPPROF_E_IO, "no folder for the trigger socket ($XDG_RUNTIME_DIR, /run/user, /tmp)");
}

int op_od_sock_path(const char *dir, int64_t pid, char *buf, size_t cap)
{
    struct sockaddr_un a;
    int n = snprintf(buf, cap, "%s/%lld.sock", dir, (long long)pid);
    return n > 0 && (size_t)n < cap && (size_t)n < sizeof a.sun_path ? 0 : -1;
}

int op_od_write_all(int fd, const char *buf, size_t n)
{
    while (n) {
        ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

int op_od_read_reply(int fd, size_t max, int first_ms, int rest_ms, char **out, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    if (!b) return -1;
    int rc = -1;
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        int pr = poll(&p, 1, n ? rest_ms : first_ms);
        if (pr < 0 && errno == EINTR) continue;
        if (pr == 0 && !n) rc = -2;
        if (pr <= 0) break; /* timed out */
        if (n + 1 >= cap) {
            if (cap >= max + 1) break;
            char *g = realloc(b, cap * 2);
            if (!g) break;
            b = g;
            cap *= 2;
        }
        ssize_t r = read(fd, b + n, cap - 1 - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) break;
        if (r == 0) {
            b[n] = '\0';
            *out = b;
            if (len) *len = n;
            return 0;
        }
        n += (size_t)r;
    }
    free(b);
    return rc;
}

int op_od_read_all(int fd, size_t max, int timeout_ms, char **out, size_t *len)
{
    return op_od_read_reply(fd, max, timeout_ms, timeout_ms, out, len) == 0 ? 0 : -1;
}

int op_od_get(const char *req, const char *key, char *buf, size_t cap)
{
    size_t kl = strlen(key);
    for (const char *line = req; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (len > kl && !strncmp(line, key, kl) && line[kl] == '=') {
            snprintf(buf, cap, "%.*s", (int)(len - kl - 1), line + kl + 1);
            return 1;
        }
        line = nl ? nl + 1 : NULL;
    }
    return 0;
}

void op_od_expand(const char *in, unsigned long n, char *out, size_t cap)
{
    const char *at = strstr(in, "{n}");
    if (!at) snprintf(out, cap, "%s", in);
    else snprintf(out, cap, "%.*s%lu%s", (int)(at - in), in, n, at + 3);
}

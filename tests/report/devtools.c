/* The DevTools protocol over the browser's pipe, just enough to evaluate an
 * expression in its page: find the page target, attach to it (a flat
 * session), evaluate. Replies are matched by id; events are skipped. */
#define _GNU_SOURCE
#include "devtools.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "live/odsock.h"

typedef struct conn {
    int to, from;
    double deadline;
    char *buf; /* bytes read and not yet taken */
    size_t n, cap;
    int next_id;
} conn;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void pause_ms(int ms)
{
    struct timespec ts = {0, ms * 1000L * 1000L};
    nanosleep(&ts, NULL);
}

/* Writes s and its NUL; a socket, so a browser gone away is an error
 * (op_od_write_all sends with MSG_NOSIGNAL), not a SIGPIPE. */
static int send_all(int fd, const char *s)
{
    return op_od_write_all(fd, s, strlen(s) + 1);
}

/* The next whole message (malloc'd), or NULL at the deadline or EOF. */
static char *read_message(conn *c)
{
    for (;;) {
        char *nul = c->n ? memchr(c->buf, 0, c->n) : NULL;
        if (nul) {
            size_t len = (size_t)(nul - c->buf);
            char *m = malloc(len + 1);
            if (!m) return NULL;
            memcpy(m, c->buf, len + 1);
            memmove(c->buf, nul + 1, c->n - len - 1);
            c->n -= len + 1;
            return m;
        }
        double left = c->deadline - now_s();
        if (left <= 0) return NULL;
        struct pollfd p = {c->from, POLLIN, 0};
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return NULL;
        if (c->cap - c->n < 65536) {
            size_t cap = c->cap ? c->cap * 2 : 1 << 20;
            char *b = realloc(c->buf, cap);
            if (!b) return NULL;
            c->buf = b;
            c->cap = cap;
        }
        ssize_t got = read(c->from, c->buf + c->n, c->cap - c->n);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return NULL;
        c->n += (size_t)got;
    }
}

/* Sends a command and returns its reply (malloc'd), or NULL. */
static char *call(conn *c, const char *session, const char *method, const char *params)
{
    int id = ++c->next_id;
    size_t need = strlen(method) + strlen(params) + (session ? strlen(session) : 0) + 96;
    char *msg = malloc(need);
    if (!msg) return NULL;
    if (session)
        snprintf(msg, need, "{\"id\":%d,\"sessionId\":\"%s\",\"method\":\"%s\",\"params\":%s}", id, session, method,
                 params);
    else
        snprintf(msg, need, "{\"id\":%d,\"method\":\"%s\",\"params\":%s}", id, method, params);
    int rc = send_all(c->to, msg);
    free(msg);
    if (rc != 0) return NULL;
    char want[32];
    int wn = snprintf(want, sizeof want, "{\"id\":%d,", id);
    for (;;) {
        char *m = read_message(c);
        if (!m || strncmp(m, want, (size_t)wn) == 0) return m;
        free(m); /* an event, or the reply to something else */
    }
}

/* The JSON string that starts at s (just after its opening quote),
 * unescaped into UTF-8 (malloc'd). */
static char *json_string(const char *s)
{
    size_t cap = strlen(s) + 1;
    char *out = malloc(cap), *o = out;
    if (!out) return NULL;
    while (*s && *s != '"') {
        if (*s != '\\') {
            *o++ = *s++;
            continue;
        }
        s++;
        switch (*s) {
        case 'n': *o++ = '\n'; s++; break;
        case 't': *o++ = '\t'; s++; break;
        case 'r': *o++ = '\r'; s++; break;
        case 'b': *o++ = '\b'; s++; break;
        case 'f': *o++ = '\f'; s++; break;
        case 'u': {
            unsigned cp = 0;
            if (sscanf(s + 1, "%4x", &cp) != 1) goto bad;
            s += 5;
            if (cp >= 0xd800 && cp < 0xdc00 && s[0] == '\\' && s[1] == 'u') {
                unsigned lo = 0;
                if (sscanf(s + 2, "%4x", &lo) == 1 && lo >= 0xdc00 && lo < 0xe000) {
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    s += 6;
                }
            }
            if (cp < 0x80) *o++ = (char)cp;
            else if (cp < 0x800) {
                *o++ = (char)(0xc0 | cp >> 6);
                *o++ = (char)(0x80 | (cp & 0x3f));
            } else if (cp < 0x10000) {
                *o++ = (char)(0xe0 | cp >> 12);
                *o++ = (char)(0x80 | (cp >> 6 & 0x3f));
                *o++ = (char)(0x80 | (cp & 0x3f));
            } else {
                *o++ = (char)(0xf0 | cp >> 18);
                *o++ = (char)(0x80 | (cp >> 12 & 0x3f));
                *o++ = (char)(0x80 | (cp >> 6 & 0x3f));
                *o++ = (char)(0x80 | (cp & 0x3f));
            }
            break;
        }
        case 0: goto bad;
        default: *o++ = *s++; break; /* \" \\ \/ */
        }
    }
    if (*s != '"') goto bad;
    *o = 0;
    return out;
bad:
    free(out);
    return NULL;
}

/* The string value of key in msg ("key":"..."), unescaped; NULL when absent. */
static char *value_of(const char *msg, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *p = strstr(msg, pat);
    return p ? json_string(p + strlen(pat)) : NULL;
}

/* The id of the first page target, once there is one. */
static char *page_target(conn *c)
{
    while (now_s() < c->deadline) {
        char *m = call(c, NULL, "Target.getTargets", "{}");
        if (!m) return NULL;
        const char *page = strstr(m, "\"type\":\"page\"");
        char *id = NULL;
        if (page) {
            /* the target's id comes first in its object: the last one before "type" */
            const char *p = m, *q;
            while ((q = strstr(p, "\"targetId\":\"")) && q < page) p = q + 1;
            if (p != m) id = json_string(p - 1 + strlen("\"targetId\":\""));
        }
        free(m);
        if (id) return id;
        pause_ms(50);
    }
    return NULL;
}

char *devtools_eval(int to, int from, const char *expr, double timeout_s)
{
    conn c = {to, from, now_s() + timeout_s, NULL, 0, 0, 0};
    char *result = NULL, *session = NULL, *target = page_target(&c);
    if (!target) goto out;
    char params[256];
    snprintf(params, sizeof params, "{\"targetId\":\"%s\",\"flatten\":true}", target);
    char *m = call(&c, NULL, "Target.attachToTarget", params);
    session = m ? value_of(m, "sessionId") : NULL;
    free(m);
    if (!session) goto out;
    /* the expression as a JSON string */
    size_t cap = strlen(expr) * 6 + 128;
    char *ev = malloc(cap), *o = ev;
    if (!ev) goto out;
    o += sprintf(o, "{\"expression\":\"");
    for (const char *s = expr; *s; s++) {
        if (*s == '"' || *s == '\\') *o++ = '\\';
        if ((unsigned char)*s < 0x20) o += sprintf(o, "\\u%04x", (unsigned char)*s);
        else *o++ = *s;
    }
    strcpy(o, "\",\"awaitPromise\":true,\"returnByValue\":true}");
    while (!result && now_s() < c.deadline) {
        m = call(&c, session, "Runtime.evaluate", ev);
        if (!m) break;
        /* a page still navigating fails the evaluation or yields "" */
        if (!strstr(m, "\"exceptionDetails\"") && strstr(m, "\"type\":\"string\"")) {
            result = value_of(m, "value");
            if (result && !*result) {
                free(result);
                result = NULL;
            }
        }
        free(m);
        if (!result) pause_ms(50);
    }
    free(ev);
out:
    free(target);
    free(session);
    free(c.buf);
    return result;
}

void devtools_close(int to)
{
    (void)send_all(to, "{\"id\":999999,\"method\":\"Browser.close\",\"params\":{}}");
}

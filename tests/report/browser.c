/* Running headless Chromium from the tests: a fresh profile each time, no
 * network, a time limit, stdout captured to a file. */
#define _GNU_SOURCE
#include "browser.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *browser_path(void)
{
    const char *p = getenv("OPPROF_CHROMIUM");
    if (!p || !*p) p = "/usr/bin/chromium";
    return access(p, X_OK) == 0 ? p : NULL;
}

static void remove_tree(const char *dir)
{
    pid_t pid = fork();
    if (pid == 0) {
        execlp("rm", "rm", "-rf", dir, (char *)NULL);
        _exit(127);
    }
    if (pid > 0) waitpid(pid, NULL, 0);
}

/* Runs the browser with one action flag; its stdout goes to out_path. */
static int run_browser(const char *html_path, const char *fragment, int w, int h, const char *action,
                       const char *out_path)
{
    const char *exe = browser_path();
    if (!exe) return -1;
    char profile[] = "/tmp/opprof-chromium-XXXXXX";
    if (!mkdtemp(profile)) return -1;
    char url[4096], size[64], udd[128], abs_path[PATH_MAX];
    if (!realpath(html_path, abs_path)) return -1;
    snprintf(url, sizeof url, "file://%s%s%s", abs_path, fragment && *fragment ? "#" : "", fragment ? fragment : "");
    snprintf(size, sizeof size, "--window-size=%d,%d", w, h);
    snprintf(udd, sizeof udd, "--user-data-dir=%s", profile);
    const char *argv[] = {exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                          "--disable-background-networking", "--disable-component-update", "--disable-sync",
                          "--disable-extensions", "--disable-dev-shm-usage", "--hide-scrollbars",
                          "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9", udd, size, action,
                          url, NULL};
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644), null = open("/dev/null", O_WRONLY);
        if (out < 0 || null < 0) _exit(127);
        dup2(out, 1);
        dup2(null, 2);
        setpgid(0, 0); /* its helpers share our group: the time limit ends all of them */
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    setpgid(pid, pid);
    int status = -1;
    for (int waited = 0; waited < 1200; waited++) { /* 120 s */
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (waited == 1199) {
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            status = -1;
        }
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    remove_tree(profile);
    return status == 0 ? 0 : -1;
}

char *browser_dump_dom(const char *html_path, const char *fragment, int w, int h)
{
    char out[] = "/tmp/opprof-dom-XXXXXX";
    int fd = mkstemp(out);
    if (fd < 0) return NULL;
    close(fd);
    char *dom = NULL;
    if (run_browser(html_path, fragment, w, h, "--dump-dom", out) == 0) {
        FILE *f = fopen(out, "rb");
        if (f) {
            fseek(f, 0, SEEK_END);
            long n = ftell(f);
            fseek(f, 0, SEEK_SET);
            dom = malloc((size_t)n + 1);
            if (dom && fread(dom, 1, (size_t)n, f) == (size_t)n) dom[n] = 0;
            else {
                free(dom);
                dom = NULL;
            }
            fclose(f);
        }
    }
    unlink(out);
    return dom;
}

int browser_screenshot(const char *html_path, const char *fragment, int w, int h, const char *png_path)
{
    char action[PATH_MAX + 32], abs_png[PATH_MAX + 1];
    /* the browser writes relative to its own working directory: give it an absolute path */
    if (png_path[0] != '/') {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) return -1;
        snprintf(abs_png, sizeof abs_png, "%s/%s", cwd, png_path);
    } else {
        snprintf(abs_png, sizeof abs_png, "%s", png_path);
    }
    snprintf(action, sizeof action, "--screenshot=%s", abs_png);
    int rc = run_browser(html_path, fragment, w, h, action, "/dev/null");
    struct stat st;
    return rc == 0 && stat(abs_png, &st) == 0 && st.st_size > 0 ? 0 : -1;
}

double selftest_num(const char *dom, const char *within, const char *key)
{
    char pat[256];
    const char *res = strstr(dom, "id=\"opprof-selftest\""); /* not the data blocks above it */
    if (!res) return -1;
    snprintf(pat, sizeof pat, "\"%s\":{", within);
    const char *p = strstr(res, pat);
    if (!p) return -1;
    const char *end = strchr(p, '}'); /* the views' objects hold arrays, never objects */
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *k = strstr(p, pat);
    if (!k || !end || k > end) return -1;
    return strtod(k + strlen(pat), NULL);
}

char *selftest_text(const char *s)
{
    size_t n = strlen(s);
    char *out = malloc(n * 7 + 1), *o = out;
    if (!out) return NULL;
    for (; *s; s++) {
        const char *rep = NULL;
        switch (*s) {
        case '"': rep = "\\\""; break;
        case '\\': rep = "\\\\"; break;
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        default: break;
        }
        if (rep) o = stpcpy(o, rep);
        else *o++ = *s;
    }
    *o = 0;
    return out;
}

int selftest_view_shown(const char *dom, const char *view)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\":{\"ms\":", view);
    const char *p = strstr(dom, "id=\"opprof-selftest\"");
    if (!p || !(p = strstr(p, pat))) return -1;
    const char *ok = strstr(p, "\"shown\":true,\"othersHidden\":true");
    return ok && ok < strchr(p, '}');
}

void selftest_count(char *buf, size_t size, unsigned long long n)
{
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%llu", n), o = 0;
    for (int i = 0; i < len && (size_t)o + 2 < size; i++) {
        if (i && (len - i) % 3 == 0) buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = 0;
}

int browser_or_skip_message(void)
{
    if (browser_path()) return 1;
    printf("SKIP: no Chromium at /usr/bin/chromium (set OPPROF_CHROMIUM, or run scripts/deps.sh)\n");
    return 0;
}

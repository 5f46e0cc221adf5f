/* Running headless Chromium from the tests: a fresh profile each time, no
 * network, a time limit; the DOM read back through the DevTools pipe once
 * the page has drawn, screenshots taken once it is idle. */
#define _GNU_SOURCE
#include "browser.h"
#include "devtools.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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

/* Waits up to limit_s for the browser to exit, then ends its whole group;
 * its exit status, -1 when it had to be killed. */
static int wait_browser(pid_t pid, double limit_s)
{
    int status = -1;
    for (int waited = 0;; waited++) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return status;
        if (r < 0 || waited >= (int)(limit_s * 10)) break;
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kill(-pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

/* Runs the browser on file://html_path#fragment with one action flag
 * (NULL: none), its stdout to out_path; with devtools, the browser's end of
 * a socket pair becomes its fd 3 and 4 (--remote-debugging-pipe) and
 * on_page(our end, ctx) runs while it is up. The browser's exit status
 * (0 when on_page asked it to close and it did), else -1. */
static int run_browser(const char *html_path, const char *fragment, int w, int h, const char *action,
                       const char *out_path, void (*on_page)(int fd, void *ctx), void *ctx)
{
    const char *exe = browser_path();
    if (!exe) return -1;
    char profile[] = "/tmp/opprof-chromium-XXXXXX";
    if (!mkdtemp(profile)) return -1;
    char url[4096], size[64], udd[128], abs_path[PATH_MAX];
    if (!realpath(html_path, abs_path)) {
        remove_tree(profile);
        return -1;
    }
    snprintf(url, sizeof url, "file://%s%s%s", abs_path, fragment && *fragment ? "#" : "", fragment ? fragment : "");
    snprintf(size, sizeof size, "--window-size=%d,%d", w, h);
    snprintf(udd, sizeof udd, "--user-data-dir=%s", profile);
    /* A screenshot is taken once the page is idle (--virtual-time-budget),
     * not at its load event, so a report whose data the browser inflates
     * asynchronously is drawn by then; idle virtual time runs ahead, so
     * this waits no longer than the page's work. The DOM is read through
     * the DevTools pipe instead, since virtual time also stops the page's
     * clocks within a task, and the tests read its timings. */
    const char *mode = on_page ? "--remote-debugging-pipe" : "--virtual-time-budget=60000";
    const char *argv[] = {exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                          "--disable-background-networking", "--disable-component-update", "--disable-sync",
                          "--disable-extensions", "--disable-dev-shm-usage", "--hide-scrollbars",
                          "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9", mode, udd, size,
                          action ? action : url, action ? url : NULL, NULL};
    int sv[2] = {-1, -1};
    if (on_page && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        remove_tree(profile);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        if (on_page) {
            close(sv[0]);
            close(sv[1]);
        }
        remove_tree(profile);
        return -1;
    }
    if (pid == 0) {
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644), null = open("/dev/null", O_WRONLY);
        if (out < 0 || null < 0) _exit(127);
        dup2(out, 1);
        dup2(null, 2);
        if (on_page) {
            /* moved out of the way first: dup2 onto itself would keep the close-on-exec flag */
            int s = fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
            if (s < 0 || dup2(s, 3) != 3 || dup2(s, 4) != 4) _exit(127);
        }
        setpgid(0, 0); /* its helpers share our group: the time limit ends all of them */
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    setpgid(pid, pid);
    if (on_page) {
        close(sv[1]);
        on_page(sv[0], ctx);
    }
    int status = wait_browser(pid, on_page ? 15 : 120);
    if (on_page) close(sv[0]);
    remove_tree(profile);
    return status == 0 ? 0 : -1;
}

/* The page once it has drawn: its loading note gone (drawn, or an error
 * shown instead) and, with #selftest, the self-test's results written; ""
 * while the browser is still on another page (it then asks again). After a
 * minute it gives the DOM as it is. */
static const char DOM_WHEN_DRAWN[] =
    "new Promise(function (done) {"
    "  if (location.protocol !== 'file:') { done(''); return; }"
    "  var t0 = Date.now();"
    "  (function poll() {"
    "    var selftest = location.hash.indexOf('selftest') >= 0;"
    "    var drawn = document.readyState === 'complete' && !document.getElementById('loading') &&"
    "                (!selftest || document.getElementById('opprof-selftest') ||"
    "                 document.querySelector('#main .error'));"
    "    if (drawn || Date.now() - t0 > 60000) done('<!DOCTYPE html>\\n' + document.documentElement.outerHTML);"
    "    else setTimeout(poll, 20);"
    "  })();"
    "})";

static void read_dom(int fd, void *dom)
{
    *(char **)dom = devtools_eval(fd, fd, DOM_WHEN_DRAWN, 100);
    devtools_close(fd);
}

char *browser_dump_dom(const char *html_path, const char *fragment, int w, int h)
{
    char *dom = NULL;
    /* the page read back counts, however the browser then ends */
    (void)run_browser(html_path, fragment, w, h, NULL, "/dev/null", read_dom, &dom);
    return dom;
}

double browser_first_draw_ms(const char *dom)
{
    const char *p = dom ? strstr(dom, "data-first-draw-ms=\"") : NULL;
    return p ? strtod(p + strlen("data-first-draw-ms=\""), NULL) : -1;
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
    int rc = run_browser(html_path, fragment, w, h, action, "/dev/null", NULL, NULL);
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

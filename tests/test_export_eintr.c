/* Every writer of a file, given a pipe, while a timer signal whose handler
 * was installed without SA_RESTART keeps interrupting the writes: a write
 * into a full pipe then fails with EINTR, which must be retried (not
 * reported, not lost). The reader drains the pipe slowly, so the writer
 * blocks often; what it receives must be exactly what the same writer puts
 * in a regular file. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "big_trace.h"
#include "opprof.h"
#include "slurp.h"

static volatile sig_atomic_t g_ticks;

static void on_tick(int sig)
{
    (void)sig;
    g_ticks++;
}

static int timeline_to(FILE *f, void *t)
{
    return opprof_memory_timeline_write(t, f, OPPROF_FORMAT_CSV);
}

static int table_to(FILE *f, void *ka)
{
    return opprof_table_write(ka, NULL, -1, f);
}

static int write_with(const char *what, const opprof_trace *t, const char *path)
{
    if (!strcmp(what, "trace")) return opprof_export_chrome_trace(t, path);
    if (!strcmp(what, "stacks")) return opprof_export_stacks(t, path, NULL);
    if (!strcmp(what, "timeline")) return opprof_write_file(path, timeline_to, (void *)t);
    if (!strcmp(what, "report")) return opprof_report_write(t, NULL, NULL, path);
    opprof_key_averages *ka = NULL;
    int rc = opprof_key_averages(t, NULL, &ka);
    if (rc == OPPROF_OK) rc = opprof_write_file(path, table_to, ka);
    opprof_key_averages_free(ka);
    return rc;
}

typedef struct drain {
    int fd;
    char *buf;
    size_t len, cap;
} drain;

/* Reads the pipe to its end, a small piece at a time with a pause between:
 * the pipe stays full and the writer waits in write(2). */
static void *drain_main(void *p)
{
    drain *d = p;
    for (;;) {
        if (d->cap - d->len < 4096) {
            d->cap = d->cap * 2 + 65536;
            d->buf = realloc(d->buf, d->cap);
            if (!d->buf) abort();
        }
        ssize_t n = read(d->fd, d->buf + d->len, 4096);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        d->len += (size_t)n;
        nanosleep(&(struct timespec){0, 200 * 1000}, NULL);
    }
    return NULL;
}

/* The report says when it was made, in seconds ("created":N): the two
 * writes may fall on either side of a second. */
static void blank_created(char *text, size_t n)
{
    char *p = memmem(text, n, "\"created\":", 10);
    for (p = p ? p + 10 : NULL; p && p < text + n && *p >= '0' && *p <= '9'; p++) *p = '0';
}

static void check_writer(const char *what, const opprof_trace *t)
{
    char file[] = "/tmp/opprof_eintr_XXXXXX";
    int ffd = mkstemp(file);
    assert_true(ffd >= 0);
    close(ffd);
    assert_int_equal(write_with(what, t, file), OPPROF_OK);
    size_t want_len = 0;
    char *want = slurp_len(file, &want_len);
    assert_non_null(want);
    unlink(file);

    int p[2];
    assert_int_equal(pipe(p), 0);
    /* Only this thread takes the signal: the reader blocks it. */
    sigset_t alrm, old;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    assert_int_equal(pthread_sigmask(SIG_BLOCK, &alrm, &old), 0);
    drain d = {.fd = p[0]};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, drain_main, &d), 0);
    assert_int_equal(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);

    struct sigaction sa = {.sa_handler = on_tick}; /* no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
    g_ticks = 0;
    struct itimerval every = {{0, 500}, {0, 500}}, off = {{0, 0}, {0, 0}};
    assert_int_equal(setitimer(ITIMER_REAL, &every, NULL), 0);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", p[1]);
    int rc = write_with(what, t, path);
    assert_int_equal(setitimer(ITIMER_REAL, &off, NULL), 0);
    close(p[1]);
    assert_int_equal(pthread_join(th, NULL), 0);
    close(p[0]);
    if (rc != OPPROF_OK) fail_msg("%s into a pipe: %s", what, opprof_last_error());
    assert_true(g_ticks > 0); /* the signal did interrupt the writing */
    assert_int_equal(d.len, want_len);
    blank_created(d.buf, d.len);
    blank_created(want, want_len);
    assert_memory_equal(d.buf, want, want_len);
    free(d.buf);
    free(want);
}

static void test_trace(void **state)
{
    check_writer("trace", *state);
}

static void test_stacks(void **state)
{
    check_writer("stacks", *state);
}

static void test_timeline(void **state)
{
    check_writer("timeline", *state);
}

static void test_table(void **state)
{
    check_writer("table", *state);
}

static void test_report(void **state)
{
    check_writer("report", *state);
}

static int setup(void **state)
{
    *state = big_trace(2000);
    return 0;
}

static int teardown(void **state)
{
    opprof_trace_free(*state);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace),    cmocka_unit_test(test_stacks), cmocka_unit_test(test_timeline),
        cmocka_unit_test(test_table),    cmocka_unit_test(test_report),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* How output files are written (issue 16, items 4 and 6):
 *  - a final symbolic link owned by someone else is not followed (the
 *    /tmp attack: another user's link makes a root-run profiler replace a
 *    root-owned file); one's own link is followed;
 *  - a file with other hard links, or another user's, is rewritten in place,
 *    keeping its inode, owner and links;
 *  - writes interrupted by a signal handled without SA_RESTART are retried:
 *    a table to a pipe and a file written to a FIFO arrive whole. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "opprof_trace.h"
#include "slurp.h"
#include "tmpdir.h"

static char g_dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/opprof_outfiles_XXXXXX");
    return tmpdir_make(g_dir);
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove(g_dir);
}

static int write_text(FILE *f, void *ctx)
{
    return fputs((const char *)ctx, f) < 0 ? OPPROF_E_IO : OPPROF_OK;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void test_foreign_symlink_is_not_followed(void **state)
{
    (void)state;
    if (geteuid() != 0) skip(); /* giving a link to another user needs root */
    char target[128], link[128];
    snprintf(target, sizeof target, "%s/precious", g_dir);
    snprintf(link, sizeof link, "%s/trace.json", g_dir);
    put(target, "keep me\n");
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(lchown(link, 12345, 12345), 0);
    int rc = opprof_write_file(link, write_text, (void *)"overwritten\n");
    assert_int_equal(rc, OPPROF_E_IO);
    if (!strstr(opprof_last_error(), "symbolic link owned by another user")) fail_msg("%s", opprof_last_error());
    char *got = slurp(target);
    assert_string_equal(got, "keep me\n");
    free(got);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode)); /* the link itself is left alone too */
    unlink(link);
    unlink(target);
}

static void test_own_symlink_is_followed(void **state)
{
    (void)state;
    char target[128], link[128];
    snprintf(target, sizeof target, "%s/mine", g_dir);
    snprintf(link, sizeof link, "%s/mine.json", g_dir);
    put(target, "old\n");
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(opprof_write_file(link, write_text, (void *)"new\n"), OPPROF_OK);
    char *got = slurp(target);
    assert_string_equal(got, "new\n");
    free(got);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    unlink(link);
    unlink(target);
}

static void test_hard_links_and_owner_are_kept(void **state)
{
    (void)state;
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/a.json", g_dir);
    snprintf(b, sizeof b, "%s/b.json", g_dir);
    put(a, "old contents, longer than the new\n");
    assert_int_equal(link(a, b), 0);
    struct stat before, after;
    assert_int_equal(stat(a, &before), 0);
    assert_int_equal(opprof_write_file(a, write_text, (void *)"new\n"), OPPROF_OK);
    assert_int_equal(stat(a, &after), 0);
    assert_int_equal(after.st_ino, before.st_ino);
    assert_int_equal(after.st_nlink, 2);
    char *got = slurp(b);
    assert_string_equal(got, "new\n"); /* truncated, then written */
    free(got);
    unlink(b);

    if (geteuid() == 0) { /* someone else's file keeps its owner */
        assert_int_equal(chown(a, 12345, 12345), 0);
        assert_int_equal(opprof_write_file(a, write_text, (void *)"third\n"), OPPROF_OK);
        assert_int_equal(stat(a, &after), 0);
        assert_int_equal(after.st_uid, 12345);
        assert_int_equal(after.st_ino, before.st_ino);
        got = slurp(a);
        assert_string_equal(got, "third\n");
        free(got);
    }
    unlink(a);

    /* a file of one's own with one link is still replaced atomically */
    put(a, "x\n");
    assert_int_equal(stat(a, &before), 0);
    assert_int_equal(opprof_write_file(a, write_text, (void *)"y\n"), OPPROF_OK);
    assert_int_equal(stat(a, &after), 0);
    assert_true(after.st_ino != before.st_ino);
    unlink(a);
}

/* ---- EINTR: a child writes while a 50 us timer interrupts it; the parent
 * reads slowly so that the child blocks in write(2) on the full pipe. ---- */

static volatile sig_atomic_t g_ticks;
static void on_tick(int sig)
{
    (void)sig;
    g_ticks++;
}

static void start_ticking(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_tick; /* no SA_RESTART: blocked writes fail with EINTR */
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 50}, {0, 50}};
    setitimer(ITIMER_REAL, &it, NULL);
}

/* A table of 3000 rows (about 400 KB: six times a pipe's buffer). */
static opprof_key_averages *big_table(char **text)
{
    size_t cap = 3000 * 80 + 16, n = 0;
    char *json = malloc(cap);
    assert_non_null(json);
    n += (size_t)sprintf(json + n, "[");
    for (int i = 0; i < 3000; i++)
        n += (size_t)sprintf(json + n, "%s{\"ph\":\"X\",\"name\":\"op_%d\",\"ts\":%d,\"dur\":%d,\"pid\":1,\"tid\":1}",
                             i ? "," : "", i, i * 10, 1 + i % 7);
    n += (size_t)sprintf(json + n, "]");
    opprof_trace *t = NULL;
    assert_int_equal(opprof_trace_load_buffer(json, n, &t), OPPROF_OK);
    free(json);
    opprof_key_averages *ka = NULL;
    assert_int_equal(opprof_key_averages(t, NULL, &ka), OPPROF_OK);
    opprof_trace_free(t);
    assert_int_equal(opprof_table_string(ka, "self_cpu_time_total", -1, text), OPPROF_OK);
    return ka;
}

/* Reads fd to its end, slowly; returns what came, NUL-terminated. */
static char *read_slowly(int fd)
{
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    for (;;) {
        usleep(200);
        ssize_t k = read(fd, buf + n, 4096 < cap - n - 1 ? 4096 : cap - n - 1);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        n += (size_t)k;
    }
    buf[n] = '\0';
    return buf;
}

static int child_status(pid_t pid)
{
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_table_to_a_pipe_survives_signals(void **state)
{
    (void)state;
    char *want = NULL;
    opprof_key_averages *ka = big_table(&want);
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        FILE *f = fdopen(p[1], "w");
        start_ticking();
        int rc = opprof_table_write(ka, "self_cpu_time_total", -1, f);
        if (rc != OPPROF_OK) fprintf(stderr, "child: %s\n", opprof_last_error());
        _exit(rc == OPPROF_OK && fclose(f) == 0 && g_ticks > 0 ? 0 : 1);
    }
    close(p[1]);
    char *got = read_slowly(p[0]);
    close(p[0]);
    assert_int_equal(child_status(pid), 0);
    assert_int_equal(strlen(got), strlen(want));
    assert_string_equal(got, want);
    free(got);
    free(want);
    opprof_key_averages_free(ka);
}

static int table_to(FILE *f, void *ctx)
{
    return opprof_table_write((opprof_key_averages *)ctx, "self_cpu_time_total", -1, f);
}

static void test_file_to_a_fifo_survives_signals(void **state)
{
    (void)state;
    char *want = NULL;
    opprof_key_averages *ka = big_table(&want);
    char fifo[128];
    snprintf(fifo, sizeof fifo, "%s/fifo", g_dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        start_ticking();
        int rc = opprof_write_file(fifo, table_to, ka);
        if (rc != OPPROF_OK) fprintf(stderr, "child: %s\n", opprof_last_error());
        _exit(rc == OPPROF_OK && g_ticks > 0 ? 0 : 1);
    }
    int fd;
    while ((fd = open(fifo, O_RDONLY)) < 0 && errno == EINTR) {}
    assert_true(fd >= 0);
    char *got = read_slowly(fd);
    close(fd);
    assert_int_equal(child_status(pid), 0);
    assert_string_equal(got, want);
    free(got);
    free(want);
    opprof_key_averages_free(ka);
    unlink(fifo);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_foreign_symlink_is_not_followed),
        cmocka_unit_test(test_own_symlink_is_followed),
        cmocka_unit_test(test_hard_links_and_owner_are_kept),
        cmocka_unit_test(test_table_to_a_pipe_survives_signals),
        cmocka_unit_test(test_file_to_a_fifo_survives_signals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

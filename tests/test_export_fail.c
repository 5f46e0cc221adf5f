/* Write failures, for every writer of a file: the Chrome trace (plain and
 * gzip), folded stacks, the memory timeline and the table through
 * opprof_write_file, the HTML report, and the trace handler. Faults: an unwritable directory,
 * a write failing midway (file size limit, full file system), and a name or
 * path too long. Each must fail with OPPROF_E_IO and a detail naming the
 * path and the system's reason, leave the previous file as it was, and leave
 * no temporary file behind.
 *
 * The checks that change process state (user id, limits) run in a forked
 * child, which reports through its exit status; cmocka is not used there. */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "model/model.h"
#include "big_trace.h"
#include "opprof_trace.h"

static char g_dir[] = "/tmp/opprof_export_fail_XXXXXX";
static const char k_old[] = "{\"previous\": \"trace\"}\n";

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(g_dir)) return -1;
    return chmod(g_dir, 0755); /* an unprivileged child must reach inside */
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "chmod -R u+w '%s'; rm -rf '%s'", g_dir, g_dir);
    return system(cmd);
}

/* ---- the writers ---- */

static int w_chrome(const opprof_trace *t, const char *path)
{
    return opprof_export_chrome_trace(t, path);
}

static int w_stacks(const opprof_trace *t, const char *path)
{
    return opprof_export_stacks(t, path, NULL);
}

static int timeline_to(FILE *f, void *t)
{
    return opprof_memory_timeline_write(t, f, OPPROF_FORMAT_CSV);
}

static int w_timeline(const opprof_trace *t, const char *path)
{
    return opprof_write_file(path, timeline_to, (void *)t);
}

static int table_to(FILE *f, void *ka)
{
    return opprof_table_write(ka, NULL, -1, f);
}

static int w_table(const opprof_trace *t, const char *path)
{
    opprof_key_averages *ka = NULL;
    int rc = opprof_key_averages(t, NULL, &ka);
    if (rc == OPPROF_OK) rc = opprof_write_file(path, table_to, ka);
    opprof_key_averages_free(ka);
    return rc;
}

static int w_report(const opprof_trace *t, const char *path)
{
    return opprof_report_write(t, NULL, NULL, path);
}

/* The handler reports through opprof_trace_handler_status and _last_error (and stderr). */
static int w_handler(const opprof_trace *t, const char *path)
{
    char dir[8192];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    *slash = '\0';
    opprof_trace_handler h;
    int rc = opprof_trace_handler_init(&h, dir, NULL, 0);
    if (rc != OPPROF_OK) return rc;
    if (strlen(slash + 1) >= sizeof h.file_name) return OPPROF_E_INVAL;
    snprintf(h.file_name, sizeof h.file_name, "%s", slash + 1);
    opprof_trace_handler_ready(t, &h);
    int status = opprof_trace_handler_status(&h);
    if (status != OPPROF_OK && strcmp(opprof_trace_handler_last_error(&h), opprof_last_error()) != 0) return -100;
    return status;
}

typedef struct writer {
    const char *name, *ext;
    int (*write)(const opprof_trace *t, const char *path);
} writer;

static const writer k_writers[] = {
    {"chrome", ".json", w_chrome},     {"chrome_gz", ".json.gz", w_chrome}, {"stacks", ".folded", w_stacks},
    {"timeline", ".csv", w_timeline}, {"table", ".txt", w_table},          {"report", ".html", w_report},
    {"handler", ".pt.trace.json", w_handler},
};
#define NWRITERS (sizeof k_writers / sizeof *k_writers)

/* ---- checks ---- */

static void write_old(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return; /* a path the fault makes unwritable even for this */
    fputs(k_old, f);
    fclose(f);
}

/* 0 when path holds exactly the previous content. */
static int old_intact(const char *path)
{
    char buf[256] = {0};
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    return n == strlen(k_old) && memcmp(buf, k_old, n) == 0 ? 0 : -1;
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void target(char *out, size_t cap, const char *dir, const writer *w)
{
    snprintf(out, cap, "%s/%s%s", dir, w->name, w->ext);
}

/* Runs writer w into path, expected to fail for `why`; returns 0 or a code
 * naming the broken promise (in a child: its exit status). */
static int expect_failure(const writer *w, const opprof_trace *t, const char *dir, const char *path, const char *why,
                          int had_old)
{
    int before = entries(dir);
    int rc = w->write(t, path);
    char err[512];
    snprintf(err, sizeof err, "%s", opprof_last_error());
    fprintf(stderr, "%s: rc %d: %s\n", w->name, rc, err);
    char shown[101]; /* a long path is shown by its start and end */
    snprintf(shown, sizeof shown, "%s", path);
    if (rc != OPPROF_E_IO) return 10;
    if (!strstr(err, shown)) return 11;
    if (!strstr(err, why)) return 12;
    if (had_old && old_intact(path) != 0) return 13;
    if (entries(dir) != before) return 14; /* a temporary file left behind */
    return 0;
}

/* Every writer against one fault; 0 or 100 * (writer + 1) + code. */
static int all_fail(const opprof_trace *t, const char *dir, const char *why, int had_old)
{
    for (size_t i = 0; i < NWRITERS; i++) {
        char path[512];
        target(path, sizeof path, dir, &k_writers[i]);
        int rc = expect_failure(&k_writers[i], t, dir, path, why, had_old);
        if (rc) return (int)(10 * (i + 1)) + rc % 10;
    }
    return 0;
}

static void prepare(const char *dir)
{
    for (size_t i = 0; i < NWRITERS; i++) {
        char path[512];
        target(path, sizeof path, dir, &k_writers[i]);
        write_old(path);
    }
}

static void run_child(int (*fn)(void *), void *arg)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(fn(arg));
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status)) fail_msg("child died with signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : -1);
    if (WEXITSTATUS(status) != 0)
        fail_msg("child failed with code %d: writer %d, check %d (see stderr)", WEXITSTATUS(status),
                 WEXITSTATUS(status) / 10, WEXITSTATUS(status) % 10);
}

/* ---- read-only directory ---- */

static int unwritable_child(void *arg)
{
    const char *sub = arg;
    if (geteuid() == 0) {
        /* root writes anywhere: become nobody to meet a read-only directory. */
        if (setgid(65534) != 0 || setuid(65534) != 0) return 1;
    }
    opprof_trace *t = big_trace(10);
    int rc = all_fail(t, sub, "Permission denied", 1);
    opprof_trace_free(t);
    return rc;
}

static void test_unwritable_directory(void **state)
{
    (void)state;
    char sub[256];
    snprintf(sub, sizeof sub, "%s/readonly", g_dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    prepare(sub);
    assert_int_equal(chmod(sub, 0555), 0);
    run_child(unwritable_child, sub);
}

/* ---- a write failing midway ---- */

static int fsize_child(void *arg)
{
    const char *dir = arg;
    /* Without this the kernel kills the writer with SIGXFSZ. */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {256 * 1024, 256 * 1024};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) return 1;
    opprof_trace *t = big_trace(30000); /* megabytes from every writer */
    int rc = all_fail(t, dir, "File too large", 1);
    opprof_trace_free(t);
    return rc;
}

static void test_file_size_limit_midway(void **state)
{
    (void)state;
    char sub[256];
    snprintf(sub, sizeof sub, "%s/fsize", g_dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    prepare(sub);
    run_child(fsize_child, sub);
}

/* A small tmpfs filled up midway. Needs the right to mount (root in most
 * containers); skipped otherwise. */
static void test_full_file_system(void **state)
{
    (void)state;
    char mnt[256];
    snprintf(mnt, sizeof mnt, "%s/tmpfs", g_dir);
    assert_int_equal(mkdir(mnt, 0755), 0);
    if (mount("opprof_test", mnt, "tmpfs", 0, "size=512k") != 0) {
        print_message("cannot mount a tmpfs (%s): full-disk test skipped\n", strerror(errno));
        skip();
    }
    prepare(mnt);
    opprof_trace *t = big_trace(30000);
    int rc = all_fail(t, mnt, "No space left on device", 1);
    /* The space is given back: a small trace fits again, with every writer. */
    opprof_trace *small = big_trace(10);
    int small_rc = 0;
    for (size_t i = 0; i < NWRITERS && !small_rc; i++) {
        char path[512];
        target(path, sizeof path, mnt, &k_writers[i]);
        small_rc = k_writers[i].write(small, path);
    }
    int n = entries(mnt);
    umount(mnt);
    opprof_trace_free(t);
    opprof_trace_free(small);
    if (rc) fail_msg("writer %d, check %d (see stderr)", rc / 10, rc % 10);
    assert_int_equal(small_rc, OPPROF_OK);
    assert_int_equal(n, (int)NWRITERS);
}

/* ---- names and paths too long ---- */

static void fill(char *p, char c, size_t n)
{
    memset(p, c, n);
    p[n] = '\0';
}

/* A name over 255 bytes, and a path over 4095 (in folders that exist), are
 * refused before anything is written, with the limits in the message. The
 * trace handler has limits of its own (1023 bytes of folder, 255 of name)
 * and refuses those with OPPROF_E_INVAL first. */
static void test_name_and_path_too_long(void **state)
{
    (void)state;
    char sub[256];
    snprintf(sub, sizeof sub, "%s/long", g_dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    opprof_trace *t = big_trace(10);
    char path[8192], name[400];
    for (size_t i = 0; i < NWRITERS; i++) {
        const writer *w = &k_writers[i];
        fill(name, 'n', 300);
        snprintf(path, sizeof path, "%s/%s%s", sub, name, w->ext);
        if (w->write == w_handler) {
            assert_int_equal(w->write(t, path), OPPROF_E_INVAL);
            continue;
        }
        int rc = expect_failure(w, t, sub, path, "File name too long", 0);
        if (rc) fail_msg("%s, name of 300 bytes: check %d", w->name, rc);
    }
    /* Folders of 200-byte names, 21 deep: a path of more than 4096 bytes. */
    char deep[8192];
    snprintf(deep, sizeof deep, "%s", sub);
    for (int d = 0; d < 21; d++) {
        fill(name, (char)('a' + d), 200);
        size_t n = strlen(deep);
        snprintf(deep + n, sizeof deep - n, "/%s", name);
        if (strlen(deep) < 4000) assert_int_equal(mkdir(deep, 0755), 0);
    }
    for (size_t i = 0; i < NWRITERS; i++) {
        const writer *w = &k_writers[i];
        snprintf(path, sizeof path, "%s/trace%s", deep, w->ext);
        if (w->write == w_handler) {
            assert_int_equal(w->write(t, path), OPPROF_E_INVAL);
            continue;
        }
        int rc = w->write(t, path);
        const char *err = opprof_last_error();
        if (rc != OPPROF_E_IO || !strstr(err, "File name too long") || !strstr(err, sub))
            fail_msg("%s, path of %zu bytes: rc %d: %s", w->name, strlen(path), rc, err);
    }
    opprof_trace_free(t);
}

/* A name just under the limit is written: its temporary name is shortened
 * to fit, and the file it replaces is replaced. */
static void test_name_at_the_limit(void **state)
{
    (void)state;
    char sub[256], path[1024], name[300];
    snprintf(sub, sizeof sub, "%s/limit", g_dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    opprof_trace *t = big_trace(10);
    for (size_t i = 0; i < NWRITERS; i++) {
        const writer *w = &k_writers[i];
        fill(name, 'm', 255 - strlen(w->ext));
        snprintf(path, sizeof path, "%s/%s%s", sub, name, w->ext);
        write_old(path);
        int rc = w->write(t, path);
        if (rc != OPPROF_OK) fail_msg("%s: %s", w->name, opprof_last_error());
        assert_int_not_equal(old_intact(path), 0); /* replaced */
    }
    assert_int_equal(entries(sub), (int)NWRITERS);
    opprof_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unwritable_directory),  cmocka_unit_test(test_file_size_limit_midway),
        cmocka_unit_test(test_full_file_system),      cmocka_unit_test(test_name_and_path_too_long),
        cmocka_unit_test(test_name_at_the_limit),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* Export failures: an unwritable directory, a write failing midway (file
 * size limit, full file system). Each must return OPPROF_E_IO with a detail
 * naming the path and the reason, leave the previous file as it was, and
 * leave no temporary file behind.
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
#include "opprof.h"

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

/* A trace of n events with long names: about 250 bytes of JSON each. */
static opprof_trace *big_trace(size_t n)
{
    opprof_trace *t = op_trace_new();
    int64_t th = op_trace_thread(t, 1, 1);
    char name[160];
    for (size_t i = 0; i < n; i++) {
        /* Distinct names defeat compression, so gzip output is large too. */
        snprintf(name, sizeof name, "op_%zu_%08zx_%016llx", i, i * 2654435761u,
                 (unsigned long long)(i * 0x9E3779B97F4A7C15ull));
        op_trace_add_event(t, (uint32_t)th, op_trace_intern(t, name, strlen(name)), OPPROF_CAT_CPU_OP,
                           (int64_t)i * 1000, 500);
    }
    op_trace_finish(t);
    return t;
}

static void write_old(const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
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

/* In the child: export and report. Exit codes name the broken promise. */
static int child_export(const char *dir, const char *path, const char *why, size_t nev)
{
    opprof_trace *t = big_trace(nev);
    int before = entries(dir);
    int rc = opprof_export_chrome_trace(t, path);
    const char *err = opprof_last_error();
    fprintf(stderr, "child: rc %d: %s\n", rc, err);
    if (rc != OPPROF_E_IO) return 10;
    if (!strstr(err, path)) return 11;
    if (!strstr(err, why)) return 12;
    if (old_intact(path) != 0) return 13;
    if (entries(dir) != before) return 14; /* a temporary file left behind */
    opprof_trace_free(t);
    return 0;
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
    if (WEXITSTATUS(status) != 0) fail_msg("child failed with code %d (see stderr)", WEXITSTATUS(status));
}

static int unwritable_child(void *arg)
{
    const char *sub = arg;
    if (geteuid() == 0) {
        /* root writes anywhere: become nobody to meet a read-only directory. */
        if (setgid(65534) != 0 || setuid(65534) != 0) return 20;
    }
    char path[512];
    snprintf(path, sizeof path, "%s/trace.json", sub);
    int rc = child_export(sub, path, "Permission denied", 10);
    if (rc) return rc;
    snprintf(path, sizeof path, "%s/trace.json.gz", sub);
    return opprof_export_chrome_trace(big_trace(1), path) == OPPROF_E_IO ? 0 : 15;
}

static void test_unwritable_directory(void **state)
{
    (void)state;
    char sub[256], path[300];
    snprintf(sub, sizeof sub, "%s/readonly", g_dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    snprintf(path, sizeof path, "%s/trace.json", sub);
    write_old(path);
    assert_int_equal(chmod(path, 0644), 0);
    assert_int_equal(chmod(sub, 0555), 0);
    run_child(unwritable_child, sub);
    assert_int_equal(old_intact(path), 0);
}

static int fsize_child(void *arg)
{
    const char *dir = arg;
    /* Without this the kernel kills the writer with SIGXFSZ. */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {256 * 1024, 256 * 1024};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) return 21;
    char path[512];
    snprintf(path, sizeof path, "%s/trace.json", dir);
    int rc = child_export(dir, path, "File too large", 20000); /* ~4 MB */
    if (rc) return rc;
    snprintf(path, sizeof path, "%s/trace.json.gz", dir);
    return child_export(dir, path, "File too large", 60000);
}

static void test_file_size_limit_midway(void **state)
{
    (void)state;
    char sub[256], path[300];
    snprintf(sub, sizeof sub, "%s/fsize", g_dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    snprintf(path, sizeof path, "%s/trace.json", sub);
    write_old(path);
    snprintf(path, sizeof path, "%s/trace.json.gz", sub);
    write_old(path);
    run_child(fsize_child, sub);
    assert_int_equal(old_intact(path), 0);
}

/* A small tmpfs filled up midway. Needs the right to mount (root in most
 * containers); skipped otherwise. */
static void test_full_file_system(void **state)
{
    (void)state;
    char mnt[256], path[300];
    snprintf(mnt, sizeof mnt, "%s/tmpfs", g_dir);
    assert_int_equal(mkdir(mnt, 0755), 0);
    if (mount("opprof_test", mnt, "tmpfs", 0, "size=512k") != 0) {
        print_message("cannot mount a tmpfs (%s): full-disk test skipped\n", strerror(errno));
        skip();
    }
    snprintf(path, sizeof path, "%s/trace.json", mnt);
    write_old(path);
    opprof_trace *t = big_trace(20000);
    int before = entries(mnt);
    int rc = opprof_export_chrome_trace(t, path);
    char err[512];
    snprintf(err, sizeof err, "%s", opprof_last_error());
    int after = entries(mnt);
    int intact = old_intact(path);
    /* The space is given back: a small trace fits again. */
    opprof_trace *small = big_trace(10);
    int rc_small = opprof_export_chrome_trace(small, path);
    umount(mnt);
    opprof_trace_free(t);
    opprof_trace_free(small);
    assert_int_equal(rc, OPPROF_E_IO);
    if (!strstr(err, "No space left on device") || !strstr(err, path)) fail_msg("detail: %s", err);
    assert_int_equal(after, before);
    assert_int_equal(intact, 0);
    assert_int_equal(rc_small, OPPROF_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unwritable_directory),
        cmocka_unit_test(test_file_size_limit_midway),
        cmocka_unit_test(test_full_file_system),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

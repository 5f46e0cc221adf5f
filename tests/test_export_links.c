/* A final symbolic link owned by another user (planted in a shared sticky
 * folder such as /tmp) is refused by every writer, whichever way it opens
 * its file: the Chrome trace (op_out), folded stacks, the HTML report and
 * opprof_write_file; also when it names a device, which would be written in
 * place. The file it names keeps its content, inode and owner.
 * test_output_files.c covers the rule itself (one's own link is followed,
 * hard links and owners are kept) through opprof_write_file. Another user is
 * simulated with lchown, so the checks need root (skipped otherwise). */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "model/model.h"
#include "opprof.h"
#include "slurp.h"

#define OTHER_UID 54321

static char g_dir[] = "/tmp/opprof_links_XXXXXX";
static const char k_old[] = "precious\n";

static void path_in(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", g_dir, name);
}

static opprof_trace *small_trace(void)
{
    opprof_trace *t = op_trace_new();
    int64_t th = op_trace_thread(t, 1, 1);
    op_trace_add_event(t, (uint32_t)th, op_trace_intern(t, "op", 2), OPPROF_CAT_CPU_OP, 0, 100);
    op_trace_finish(t);
    return t;
}

static int text_to(FILE *f, void *ctx)
{
    return fputs(ctx, f) < 0 ? OPPROF_E_IO : OPPROF_OK;
}

static void make_file(const char *path, uid_t uid)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(k_old, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, 0640), 0);
    assert_int_equal(chown(path, uid, uid), 0);
}

static int skip_unless_root(void)
{
    if (geteuid() == 0) return 0;
    print_message("not root: another user's link cannot be made with lchown; skipped\n");
    return 1;
}

/* Another user's link to root's file: every writer refuses, naming the
 * rule; nothing changes on either side of the link. */
static void test_other_users_link_is_not_followed(void **state)
{
    (void)state;
    if (skip_unless_root()) skip();
    char victim[256], link[256];
    path_in(victim, sizeof victim, "victim");
    path_in(link, sizeof link, "trap.json");
    make_file(victim, 0);
    assert_int_equal(symlink(victim, link), 0);
    assert_int_equal(lchown(link, OTHER_UID, OTHER_UID), 0);
    struct stat before, after;
    assert_int_equal(stat(victim, &before), 0);
    opprof_trace *t = small_trace();
    for (int w = 0; w < 4; w++) {
        int rc = w == 0   ? opprof_export_chrome_trace(t, link)
                 : w == 1 ? opprof_export_stacks(t, link, NULL)
                 : w == 2 ? opprof_report_write(t, NULL, NULL, link)
                          : opprof_write_file(link, text_to, "new\n");
        assert_int_equal(rc, OPPROF_E_IO);
        assert_non_null(strstr(opprof_last_error(), "symbolic link owned by another user (uid 54321)"));
        assert_non_null(strstr(opprof_last_error(), link));
    }
    assert_int_equal(stat(victim, &after), 0);
    assert_int_equal(after.st_ino, before.st_ino);
    assert_int_equal(after.st_uid, 0);
    char *text = slurp(victim);
    assert_string_equal(text, k_old);
    free(text);
    assert_int_equal(lstat(link, &after), 0);
    assert_true(S_ISLNK(after.st_mode));
    /* A link to a device or a pipe is refused too (it would be written in place). */
    char dev[256];
    path_in(dev, sizeof dev, "trap.dev");
    assert_int_equal(symlink("/dev/null", dev), 0);
    assert_int_equal(lchown(dev, OTHER_UID, OTHER_UID), 0);
    assert_int_equal(opprof_export_chrome_trace(t, dev), OPPROF_E_IO);
    opprof_trace_free(t);
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(g_dir)) return -1;
    return chmod(g_dir, 01777); /* a shared sticky folder, as /tmp */
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_other_users_link_is_not_followed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* An output file whose descriptor the program closed and took for a file
 * of its own (export/afile.c, common/ownfd.h): the program's file is never
 * written; a streamed file (a named temporary) is opened again and ends
 * whole; a nameless one fails with the reason and leaves the previous
 * file; nothing is left behind either way. */
#define _GNU_SOURCE
#include <fcntl.h>
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

#include "common/ownfd.h"
#include "export/afile.h"
#include "opprof_trace.h"
#include "slurp.h"
#include "tmpdir.h"

static char g_dir[] = "/tmp/opprof_afile_taken_XXXXXX";

static void path_in(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", g_dir, name);
}

/* Closes f's descriptor as a program would and opens `theirs`, which
 * takes the number. */
static int take(const op_afile *f, const char *theirs)
{
    int n = f->fd;
    assert_int_equal(close(n), 0);
    int fd = open(theirs, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_int_equal(fd, n);
    return fd;
}

static int hidden_files(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | grep -c '^\\.'", g_dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p && fscanf(p, "%d", &n) != 1) n = -1;
    if (p) pclose(p);
    return n;
}

static void named_file_is_opened_again(void **state)
{
    (void)state;
    char path[300], theirs[300];
    path_in(path, sizeof path, "stream.json");
    path_in(theirs, sizeof theirs, "their.log");
    op_afile f;
    assert_int_equal(op_afile_open_named(&f, path), OPPROF_OK);
    assert_int_equal(op_afile_write(&f, "abc", 3), OPPROF_OK);
    int fd = take(&f, theirs);
    assert_int_equal(op_afile_write(&f, "def", 3), OPPROF_OK);
    assert_int_equal(f.reopened, 1);
    assert_int_equal(op_afile_commit(&f, 1), OPPROF_OK);
    char *got = slurp(path), *their = slurp(theirs);
    assert_string_equal(got, "abcdef");
    assert_string_equal(their, ""); /* never written */
    free(got);
    free(their);
    assert_int_equal(write(fd, "x", 1), 1); /* and never closed */
    close(fd);
    assert_int_equal(hidden_files(), 0);
}

static void nameless_file_fails_and_keeps_the_old(void **state)
{
    (void)state;
    char path[300], theirs[300];
    path_in(path, sizeof path, "table.txt");
    path_in(theirs, sizeof theirs, "their2.log");
    FILE *old = fopen(path, "w");
    assert_non_null(old);
    fputs("previous\n", old);
    fclose(old);
    op_afile f;
    assert_int_equal(op_afile_open(&f, path), OPPROF_OK);
    assert_int_equal(f.anon, 1); /* this file system has O_TMPFILE */
    assert_int_equal(op_afile_write(&f, "new", 3), OPPROF_OK);
    int fd = take(&f, theirs);
    assert_int_equal(op_afile_write(&f, "more", 4), OPPROF_E_IO);
    assert_non_null(strstr(opprof_last_error(), "the program closed opprof's descriptor"));
    assert_int_equal(op_afile_commit(&f, 1), OPPROF_E_IO);
    char *got = slurp(path), *their = slurp(theirs);
    assert_string_equal(got, "previous\n");
    assert_string_equal(their, "");
    free(got);
    free(their);
    assert_int_equal(write(fd, "x", 1), 1);
    close(fd);
    assert_int_equal(hidden_files(), 0);
}

static void ownfd_tells_a_taken_number(void **state)
{
    (void)state;
    char a[300], b[300];
    path_in(a, sizeof a, "a");
    path_in(b, sizeof b, "b");
    op_ownfd o;
    assert_int_equal(op_ownfd_set(&o, open(a, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)), 0);
    assert_true(op_ownfd_ours(&o));
    close(o.fd);
    assert_false(op_ownfd_ours(&o)); /* closed */
    int fd = open(b, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    assert_int_equal(fd, o.fd);
    assert_false(op_ownfd_ours(&o)); /* someone else's file under the number */
    op_ownfd_close(&o);
    assert_int_equal(o.fd, -1);
    assert_int_equal(write(fd, "x", 1), 1); /* still open */
    close(fd);
}

TMPDIR_SETUP(g_dir)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(named_file_is_opened_again),
        cmocka_unit_test(nameless_file_fails_and_keeps_the_old),
        cmocka_unit_test(ownfd_tells_a_taken_number),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

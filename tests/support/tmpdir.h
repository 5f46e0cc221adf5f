/* A temporary folder for a group of tests: made in the group's setup,
 * removed with everything in it in its teardown. */
#ifndef OPPROF_TESTS_TMPDIR_H
#define OPPROF_TESTS_TMPDIR_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* templ ends in XXXXXX and is filled in (mkdtemp). 0 or -1. */
static inline int tmpdir_make(char *templ)
{
    return mkdtemp(templ) ? 0 : -1;
}

static inline int tmpdir_remove(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A group's cmocka setup and teardown, as static int setup(void **) and
 * teardown(void **): folder dir (a char[] ending in XXXXXX) made before
 * the group's first test and removed after its last. */
#define TMPDIR_SETUP(dir)                                                                                               \
    static int setup(void **state)                                                                                      \
    {                                                                                                                   \
        (void)state;                                                                                                    \
        return tmpdir_make(dir);                                                                                        \
    }                                                                                                                   \
    static int teardown(void **state)                                                                                   \
    {                                                                                                                   \
        (void)state;                                                                                                    \
        return tmpdir_remove(dir);                                                                                      \
    }

/* The same with the folder's name declared: char dir[] = templ. */
#define TMPDIR_GROUP(dir, templ)                                                                                        \
    static char dir[] = templ;                                                                                          \
    TMPDIR_SETUP(dir)

/* Whether dir's file system takes O_DIRECT (0 where the includer's
 * headers do not define it: _GNU_SOURCE before the first include). */
static inline int tmpdir_takes_direct(const char *dir)
{
#ifdef O_DIRECT
    char path[600];
    snprintf(path, sizeof path, "%s/direct.probe", dir);
    int fd = open(path, O_CREAT | O_WRONLY | O_DIRECT, 0600);
    if (fd >= 0) close(fd);
    unlink(path);
    return fd >= 0;
#else
    (void)dir;
    return 0;
#endif
}

#endif

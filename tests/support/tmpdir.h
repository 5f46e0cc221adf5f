/* A temporary folder for a group of tests: made in the group's setup,
 * removed with everything in it in its teardown. */
#ifndef OPPROF_TESTS_TMPDIR_H
#define OPPROF_TESTS_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

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

#endif

/* Where the fixture tests find ../shared/fixtures: OPPROF_FIXTURES when set,
 * else the default CMake passes in OPPROF_FIXTURES_DEFAULT. A test whose
 * folder is absent skips with a message naming the path. */
#ifndef OPPROF_TESTS_FIXTURES_H
#define OPPROF_TESTS_FIXTURES_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static inline const char *fixtures_dir(void)
{
    const char *d = getenv("OPPROF_FIXTURES");
    if (d && *d) return d;
    d = getenv("OPPROF_FIXTURES_DEFAULT");
    return d && *d ? d : "../shared/fixtures";
}

/* Fills buf with fixtures_dir()/sub; returns 1 when that path exists. */
static inline int fixture_path(char *buf, size_t n, const char *sub)
{
    struct stat st;
    snprintf(buf, n, "%s/%s", fixtures_dir(), sub);
    return stat(buf, &st) == 0;
}

#endif

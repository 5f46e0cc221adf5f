/* Running the built opprof CLI (OPPROF_BIN) from a test, and reading the
 * tables it prints. */
#ifndef OPPROF_TESTS_NN_CLI_RUN_H
#define OPPROF_TESTS_NN_CLI_RUN_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

/* Runs `opprof ARGS` and returns its stdout (free it); *status gets the exit status. */
static inline char *run(const char *args, int *status)
{
    const char *bin = getenv("OPPROF_BIN");
    if (!bin) bin = "opprof";
    char cmd[1024];
    /* one thread: OpenMP's workers are not instrumented for TSan */
    snprintf(cmd, sizeof cmd, "OMP_NUM_THREADS=1 '%s' %s 2>/dev/null", bin, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, n = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    size_t got;
    while ((got = fread(out + n, 1, cap - n - 1, p)) > 0) {
        n += got;
        if (n + 1 == cap) {
            out = realloc(out, cap *= 2);
            assert_non_null(out);
        }
    }
    out[n] = 0;
    int st = pclose(p);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
}

/* The "# of Calls" of the first row named name, -1 when absent. Columns are
 * fixed width and right-aligned: the number ends where its heading ends. */
static inline long calls_of(const char *table, const char *name)
{
    const char *head = strstr(table, "# of Calls");
    if (!head) return -1;
    const char *line = head;
    while (line > table && line[-1] != '\n') line--;
    size_t end = (size_t)(head - line) + strlen("# of Calls");
    char pat[128];
    snprintf(pat, sizeof pat, " %s ", name);
    const char *p = strstr(head, pat);
    if (!p) return -1;
    while (p > table && p[-1] != '\n') p--;
    const char *eol = strchr(p, '\n');
    if (!eol || (size_t)(eol - p) < end) return -1;
    const char *q = p + end;
    while (q > p && q[-1] >= '0' && q[-1] <= '9') q--;
    return strtol(q, NULL, 10);
}

#endif

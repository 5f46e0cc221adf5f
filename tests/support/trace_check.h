/* Runs the strict JSON checker (tests/support/check_trace.py) on an exported
 * trace and returns what it prints: one ASCII JSON line summarising the
 * events. NULL when the check fails (its reason is on stderr). A test calls
 * trace_check_available() first and skips when Python is missing. */
#ifndef OPPROF_TESTS_TRACE_CHECK_H
#define OPPROF_TESTS_TRACE_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline const char *trace_check_python(void)
{
    if (access("/usr/bin/python3", X_OK) == 0) return "/usr/bin/python3";
    return system("command -v python3 >/dev/null 2>&1") == 0 ? "python3" : NULL;
}

static inline int trace_check_available(void)
{
    return trace_check_python() != NULL;
}

/* raw (may be NULL): a file whose bytes, decoded by Python with
 * errors="replace", must equal the first event's name. */
static inline char *trace_check_name(const char *path, const char *raw)
{
    const char *src = getenv("OPPROF_SOURCE_DIR");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' '%s/tests/support/check_trace.py' '%s' %s%s%s", trace_check_python(),
             src ? src : ".", path, raw ? "'" : "", raw ? raw : "", raw ? "'" : "");
    FILE *p = popen(cmd, "r");
    if (!p) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *out = malloc(cap);
    size_t k;
    while (out && (k = fread(out + n, 1, cap - n - 1, p)) > 0) {
        n += k;
        if (n + 1 == cap) {
            char *bigger = realloc(out, cap * 2);
            if (!bigger) break;
            out = bigger;
            cap *= 2;
        }
    }
    int rc = pclose(p);
    if (!out || rc != 0) {
        free(out);
        return NULL;
    }
    out[n] = '\0';
    return out;
}

static inline char *trace_check(const char *path)
{
    return trace_check_name(path, NULL);
}

#endif

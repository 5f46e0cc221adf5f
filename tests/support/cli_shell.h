/* Running the built opprof command (OPPROF_BIN) through the shell from a
 * test, with its stdout and stderr in files; counting their lines; writing
 * a test's input files. */
#ifndef OPPROF_TESTS_CLI_SHELL_H
#define OPPROF_TESTS_CLI_SHELL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cmocka.h>

/* Runs the shell command fmt makes; returns its exit status (-1 when it
 * did not exit). */
static inline int shell_status(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Runs "opprof ARGS" (ARGS a shell fragment from fmt) with stdout in out
 * and stderr in err; returns the exit status (-1 when it did not exit). */
static inline int cli_shell_run(const char *out, const char *err, const char *fmt, ...)
{
    const char *bin = getenv("OPPROF_BIN");
    char args[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    return shell_status("%s %s >%s 2>%s", bin ? bin : "opprof", args, out, err);
}

static inline int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* Writes text to dir/name. */
static inline void write_text(const char *dir, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

#endif

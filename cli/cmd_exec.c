/* opprof exec [options] -- PROGRAM [ARGS]: profiles a program that was not
 * written for opprof. The program runs in place of this command (execvp),
 * with libopprof_instrument.so preloaded and its settings in the
 * environment (preload/autosession.c reads them): its pid, exit status,
 * signals, stdin, stdout and stderr are its own (SIGINT and SIGTERM reach
 * the program's own handling once the trace so far is written). Functions
 * become operators when the program was compiled with -finstrument-functions;
 * --memory also preloads the malloc interposer. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "opprof.h"
#include "opts.h"
#include "vocab.h"

#ifndef OPPROF_INSTALL_LIBDIR
#define OPPROF_INSTALL_LIBDIR "lib"
#endif

typedef struct exec_opts {
    const char *table, *trace, *stacks, *sort, *format, *metric;
    long row_limit, group_by_stack, stack_depth, max_events;
    int with_stack, memory;
    cli_list exclude;
} exec_opts;

#define FIELD(f) offsetof(exec_opts, f)

static const cli_option OPTIONS[] = {
    {"--trace", "FILE", CLI_OPT_STRING, FIELD(trace), 0, 0, NULL,
     "the Chrome trace (FILE.gz: compressed), for chrome://tracing, Perfetto," CLI_CONT
     "speedscope or opprof summary; also written, marked incomplete, when the" CLI_CONT
     "program gets SIGINT or SIGTERM"},
    {"--table", "FILE", CLI_OPT_STRING, FIELD(table), 0, 0, NULL,
     "the key averages, in --format (\"-\": stderr, the default when no other" CLI_CONT
     "output is asked for)"},
    CLI_ROW_SORT(FIELD(sort), ""),
    CLI_ROW_ROW_LIMIT(FIELD(row_limit), ""),
    CLI_ROW_FORMAT(FIELD(format), ""),
    CLI_ROW_GROUP_BY_STACK(FIELD(group_by_stack), ""),
    CLI_ROW_WITH_STACK(FIELD(with_stack), "capture the call stack of each operator (libunwind)", ""),
    CLI_ROW_STACKS(FIELD(stacks),
                   "folded stacks for flame graphs (flamegraph.pl, speedscope): the call" CLI_CONT
                   "tree of functions, or the captured stacks with --with-stack",
                   ""),
    CLI_ROW_STACKS_METRIC(FIELD(metric), ""),
    {"--exclude", "PATTERNS", CLI_OPT_LIST, FIELD(exclude), 0, 0, NULL,
     "functions to leave out: shell patterns on names, or file:PATTERN on" CLI_CONT
     "source files, comma-separated; repeatable"},
    {"--stack-depth", "N", CLI_OPT_LONG, FIELD(stack_depth), 1, 128, NULL, "frames per stack (default 32)"},
    {"--memory", NULL, CLI_OPT_FLAG, FIELD(memory), 0, 0, NULL, "profile memory (preloads libopprof_malloc.so too)"},
    {"--max-events", "N", CLI_OPT_LONG, FIELD(max_events), 1, LONG_MAX, NULL,
     "cap on recorded events (default 16777216, OPPROF_DEFAULT_MAX_EVENTS)"},
    CLI_ROW_OLD_SORT(FIELD(sort)),
    CLI_ROW_OLD_STACKS(FIELD(stacks)),
};

static const cli_spec SPEC = {
    "exec",
    "[options] [--] PROGRAM [ARGS...]",
    "Runs PROGRAM with opprof preloaded. Every function of a program compiled with\n"
    "-finstrument-functions becomes an operator, named by its symbol. The program's\n"
    "exit status, stdout and stderr are its own; the results are written when it exits.\n"
    "The OPPROF_* variables of opprof_config_from_env (OPPROF_SCHEDULE,\n"
    "OPPROF_RECORD_SHAPES, OPPROF_OUTPUT_TRACE_DIR, ...) apply too.\n"
    "OPPROF_LIBDIR overrides where the preload libraries are looked for.\n"
    "Exit status: the program's; 2 bad arguments; 126 or 127 the program cannot be run.",
    OPTIONS,
    sizeof OPTIONS / sizeof *OPTIONS,
    1,
    1,
    1,
};

/* Where the preload libraries are: OPPROF_LIBDIR, else beside this program
 * (../lib in a build tree, ../LIBDIR once installed). */
static int find_libdir(char *out, size_t cap)
{
    const char *env = getenv("OPPROF_LIBDIR");
    char probe[PATH_MAX + 64];
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        snprintf(probe, sizeof probe, "%s/libopprof_instrument.so", out);
        return access(probe, R_OK) == 0 ? 0 : -1;
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return -1;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash) return -1;
    *slash = '\0';
    const char *rel[] = {"../lib", "../" OPPROF_INSTALL_LIBDIR};
    for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
        snprintf(probe, sizeof probe, "%s/%s/libopprof_instrument.so", self, rel[i]);
        if (access(probe, R_OK) == 0) {
            char *real = realpath(probe, NULL);
            if (!real) return -1;
            *strrchr(real, '/') = '\0';
            snprintf(out, cap, "%s", real);
            free(real);
            return 0;
        }
    }
    return -1;
}

static int set(const char *name, const char *value)
{
    if (setenv(name, value, 1) == 0) return 0;
    fprintf(stderr, "opprof exec: cannot set %s: %s\n", name, strerror(errno));
    return -1;
}

/* The settings preload/autosession.c reads, from the options. */
static int export_options(const exec_opts *o)
{
    char num[32];
    int bad = set("OPPROF_EXEC_SORT_BY", o->sort) || set("OPPROF_EXEC_FORMAT", o->format) ||
              set("OPPROF_EXEC_STACKS_METRIC", o->metric);
    snprintf(num, sizeof num, "%ld", o->row_limit);
    bad = bad || set("OPPROF_EXEC_ROW_LIMIT", num);
    snprintf(num, sizeof num, "%ld", o->group_by_stack);
    if (o->group_by_stack) bad = bad || set("OPPROF_EXEC_GROUP_BY_STACK_N", num);
    snprintf(num, sizeof num, "%ld", o->stack_depth);
    if (o->stack_depth) bad = bad || set("OPPROF_MAX_STACK_DEPTH", num);
    snprintf(num, sizeof num, "%ld", o->max_events);
    if (o->max_events) bad = bad || set("OPPROF_MAX_EVENTS", num);
    if (o->with_stack) bad = bad || set("OPPROF_WITH_STACK", "1");
    if (o->memory) bad = bad || set("OPPROF_PROFILE_MEMORY", "1");
    const char *table = o->table;
    if (!table && !o->stacks && !o->trace) table = "-";
    if (table) bad = bad || set("OPPROF_EXEC_TABLE", table);
    if (o->stacks) bad = bad || set("OPPROF_EXEC_STACKS", o->stacks);
    if (o->trace) bad = bad || set("OPPROF_EXEC_TRACE", o->trace);
    if (bad || !o->exclude.n) return bad ? -1 : 0;
    size_t len = 1;
    for (int i = 0; i < o->exclude.n; i++) len += strlen(o->exclude.item[i]) + 1;
    char *all = malloc(len);
    if (!all) return -1;
    all[0] = '\0';
    for (int i = 0; i < o->exclude.n; i++) {
        if (i) strcat(all, ",");
        strcat(all, o->exclude.item[i]);
    }
    bad = set("OPPROF_EXCLUDE", all);
    free(all);
    return bad ? -1 : 0;
}

int cmd_exec(int argc, char **argv)
{
    exec_opts o = {.sort = CLI_DEFAULT_SORT, .format = "table", .metric = "self_cpu_time_total",
                   .row_limit = CLI_DEFAULT_ROW_LIMIT};
    int first, p = cli_parse(&SPEC, argc, argv, &o, NULL, &first);
    if (p) return p > 0 ? CLI_OK : CLI_BAD_INPUT;
    if (first >= argc) return cli_bad_usage(&SPEC, "no program given");
    if (export_options(&o) != 0) return CLI_FAIL;

    char dir[PATH_MAX];
    if (find_libdir(dir, sizeof dir) != 0) {
        fprintf(stderr, "opprof exec: libopprof_instrument.so not found beside the opprof program "
                        "(set OPPROF_LIBDIR to its folder)\n");
        return CLI_FAIL;
    }
    if (strpbrk(dir, " :")) { /* LD_PRELOAD's separators */
        fprintf(stderr, "opprof exec: the preload libraries' folder '%s' has a space or ':' in its path, "
                        "which LD_PRELOAD cannot carry\n", dir);
        return CLI_FAIL;
    }
    /* Ours first; a preload the caller had stays. */
    const char *old = getenv("LD_PRELOAD");
    size_t cap = 2 * strlen(dir) + 128 + (old ? strlen(old) : 0);
    char *preload = malloc(cap);
    if (!preload) return CLI_FAIL;
    int n = snprintf(preload, cap, "%s/libopprof_instrument.so", dir);
    if (o.memory) n += snprintf(preload + n, cap - (size_t)n, " %s/libopprof_malloc.so", dir);
    if (old && *old) snprintf(preload + n, cap - (size_t)n, " %s", old);
    if (set("LD_PRELOAD", preload) || set("OPPROF_EXEC", "1")) return CLI_FAIL;
    free(preload);
    execvp(argv[first], argv + first);
    int err = errno;
    fprintf(stderr, "opprof exec: cannot run %s: %s\n", argv[first], strerror(err));
    return err == ENOENT ? 127 : 126; /* the shell's statuses for "not found" and "not runnable" */
}

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
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "exec_flight.h"
#include "opprof.h"

#ifndef OPPROF_INSTALL_LIBDIR
#define OPPROF_INSTALL_LIBDIR "lib"
#endif

static void usage(FILE *f)
{
    fprintf(f,
            "usage: opprof exec [options] [--] PROGRAM [ARGS...]\n"
            "\n"
            "Runs PROGRAM with opprof preloaded. Every function of a program compiled with\n"
            "-finstrument-functions becomes an operator, named by its symbol. The program's\n"
            "exit status, stdout and stderr are its own; the results are written when it exits.\n"
            "\n"
            "options:\n"
            "  --trace FILE         the Chrome trace (FILE.gz: compressed), for chrome://tracing,\n"
            "                       Perfetto, speedscope or opprof summary; also written, marked\n"
            "                       incomplete, when the program gets SIGINT or SIGTERM\n"
            "  --table FILE         the key-averages table (\"-\": stderr, the default when no\n"
            "                       other output is asked for)\n"
            "  --sort-by KEY        its sort key (default self_cpu_time_total)\n"
            "  --row-limit N        its rows, -1 for all (default 100)\n"
            "  --group-by-stack N   split its rows by the top N stack frames (with --with-stack)\n"
            "  --stacks FILE        folded stacks for flame graphs (flamegraph.pl, speedscope):\n"
            "                       the call tree of functions, or the captured stacks with\n"
            "                       --with-stack\n"
            "  --stacks-metric M    self_cpu_time_total (default), self_device_time_total\n"
            "  --exclude PATTERNS   functions to leave out: shell patterns on names, or\n"
            "                       file:PATTERN on source files, comma-separated; repeatable\n"
            "  --with-stack         capture the call stack of each operator (libunwind)\n"
            "  --stack-depth N      frames per stack (default 32)\n"
            "  --memory             profile memory (preloads libopprof_malloc.so too)\n"
            "  --max-events N       cap on recorded events (default %u)\n"
            EXEC_FLIGHT_HELP
            "\n"
            "The OPPROF_* variables of opprof_config_from_env (OPPROF_SCHEDULE,\n"
            "OPPROF_RECORD_SHAPES, OPPROF_OUTPUT_TRACE_DIR, ...) apply too.\n"
            "OPPROF_LIBDIR overrides where the preload libraries are looked for.\n",
            (unsigned)OPPROF_DEFAULT_MAX_EVENTS);
}

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

static int parse_int(const char *opt, const char *v, long lo, long hi)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (*v && !*end && !errno && x >= lo && x <= hi) return 0;
    fprintf(stderr, "opprof exec: %s wants an integer from %ld to %ld, not '%s'\n", opt, lo, hi, v);
    return -1;
}

enum {
    O_TABLE = 256, O_TRACE, O_SORT, O_ROWS, O_GROUP, O_STACKS, O_METRIC, O_EXCLUDE, O_WITH_STACK, O_DEPTH, O_MEMORY,
    O_MAX_EVENTS, O_HELP, O_ON_DEMAND, O_FLIGHT, O_SLOW_STEP, O_FLIGHT_FILE, O_FLIGHT_SIGNAL, O_SLOW
};

int cmd_exec(int argc, char **argv)
{
    static const struct option opts[] = {
        {"table", required_argument, NULL, O_TABLE},
        {"trace", required_argument, NULL, O_TRACE},
        {"sort-by", required_argument, NULL, O_SORT},
        {"row-limit", required_argument, NULL, O_ROWS},
        {"group-by-stack", required_argument, NULL, O_GROUP},
        {"stacks", required_argument, NULL, O_STACKS},
        {"stacks-metric", required_argument, NULL, O_METRIC},
        {"exclude", required_argument, NULL, O_EXCLUDE},
        {"with-stack", no_argument, NULL, O_WITH_STACK},
        {"stack-depth", required_argument, NULL, O_DEPTH},
        {"memory", no_argument, NULL, O_MEMORY},
        {"max-events", required_argument, NULL, O_MAX_EVENTS},
        {"help", no_argument, NULL, O_HELP},
        {"on-demand", no_argument, NULL, O_ON_DEMAND},
        {"flight", required_argument, NULL, O_FLIGHT},
        {"slow-step", required_argument, NULL, O_SLOW_STEP},
        {"flight-file", required_argument, NULL, O_FLIGHT_FILE},
        {"flight-signal", required_argument, NULL, O_FLIGHT_SIGNAL},
        {"slow", required_argument, NULL, O_SLOW},
        {NULL, 0, NULL, 0},
    };
    const char *table = NULL, *stacks = NULL, *trace = NULL;
    char exclude[8192] = "";
    int memory = 0, c, bad = 0, li = 0;
    optind = 1;
    opterr = 1;
    /* '+': the first operand is the program; its options are its own. */
    while ((c = getopt_long(argc, argv, "+h", opts, &li)) != -1) {
        switch (c) {
        case O_TABLE: table = optarg; break;
        case O_TRACE: trace = optarg; break;
        case O_STACKS: stacks = optarg; break;
        case O_SORT: bad |= set("OPPROF_EXEC_SORT_BY", optarg); break;
        case O_ROWS: bad |= parse_int("--row-limit", optarg, -1, INT_MAX) || set("OPPROF_EXEC_ROW_LIMIT", optarg); break;
        case O_GROUP:
            bad |= parse_int("--group-by-stack", optarg, 0, 128) || set("OPPROF_EXEC_GROUP_BY_STACK_N", optarg);
            break;
        case O_METRIC: bad |= set("OPPROF_EXEC_STACKS_METRIC", optarg); break;
        case O_EXCLUDE:
            if (strlen(exclude) + strlen(optarg) + 2 > sizeof exclude) {
                fprintf(stderr, "opprof exec: --exclude patterns too long\n");
                bad = 1;
            } else {
                if (*exclude) strcat(exclude, ",");
                strcat(exclude, optarg);
            }
            break;
        case O_WITH_STACK: bad |= set("OPPROF_WITH_STACK", "1"); break;
        case O_DEPTH: bad |= parse_int("--stack-depth", optarg, 1, 128) || set("OPPROF_MAX_STACK_DEPTH", optarg); break;
        case O_MEMORY: memory = 1; bad |= set("OPPROF_PROFILE_MEMORY", "1"); break;
        case O_MAX_EVENTS: bad |= parse_int("--max-events", optarg, 1, LONG_MAX) || set("OPPROF_MAX_EVENTS", optarg); break;
        case O_ON_DEMAND:
        case O_FLIGHT:
        case O_SLOW_STEP:
        case O_FLIGHT_FILE:
        case O_FLIGHT_SIGNAL:
        case O_SLOW: {
            char name[32];
            snprintf(name, sizeof name, "--%s", opts[li].name);
            bad |= exec_flight_option(name, optarg) != 0;
            break;
        }
        case 'h':
        case O_HELP: usage(stdout); return CLI_OK;
        default: usage(stderr); return CLI_BAD_INPUT;
        }
    }
    if (bad || exec_flight_check() != 0) return CLI_BAD_INPUT;
    if (optind >= argc) {
        fprintf(stderr, "opprof exec: no program given\n");
        usage(stderr);
        return CLI_BAD_INPUT;
    }
    if (!table && !stacks && !trace) table = "-";
    if ((table && set("OPPROF_EXEC_TABLE", table)) || (stacks && set("OPPROF_EXEC_STACKS", stacks)) ||
        (trace && set("OPPROF_EXEC_TRACE", trace)))
        return CLI_FAIL;
    if (*exclude && set("OPPROF_EXCLUDE", exclude)) return CLI_FAIL;

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
    if (memory) n += snprintf(preload + n, cap - (size_t)n, " %s/libopprof_malloc.so", dir);
    if (old && *old) snprintf(preload + n, cap - (size_t)n, " %s", old);
    if (set("LD_PRELOAD", preload) || set("OPPROF_EXEC", "1")) return CLI_FAIL;
    free(preload);
    execvp(argv[optind], argv + optind);
    int err = errno;
    fprintf(stderr, "opprof exec: cannot run %s: %s\n", argv[optind], strerror(err));
    return err == ENOENT ? 127 : 126; /* the shell's statuses for "not found" and "not runnable" */
}

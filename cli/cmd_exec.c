/* opprof exec [options] -- PROGRAM [ARGS]: profiles a program that was not
 * written for opprof. The program runs in place of this command (execvp),
 * with libopprof_instrument.so preloaded and its settings in the
 * environment (preload/autosession.c reads them): its pid, exit status,
 * signals, stdin, stdout and stderr are its own (SIGINT and SIGTERM reach
 * the program's own handling once the trace so far is written). Functions
 * become operators when the program was compiled with -finstrument-functions;
 * --memory also preloads the malloc interposer. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "exec_flight.h"
#include "opprof_trace.h"
#include "opts.h"
#include "vocab.h"

#ifndef OPPROF_INSTALL_LIBDIR
#define OPPROF_INSTALL_LIBDIR "lib"
#endif

typedef struct exec_opts {
    const char *table, *trace, *stacks, *sort, *format, *metric, *activities;
    long row_limit, group_by_stack, stack_depth, max_events, sample;
    const char *threads, *columns, *within;
    int with_stack, memory, on_demand, no_compensate, no_inline, separate_debuginfo;
    const char *flight, *slow_step, *slow, *flight_file, *flight_signal;
    const char *min_duration; /* --min-duration, parsed into min_duration_ns */
    long max_depth;
    int64_t min_duration_ns;
    cli_list exclude;
} exec_opts;

#define FIELD(f) offsetof(exec_opts, f)

static const cli_option OPTIONS[] = {
    {"--trace", "FILE", CLI_OPT_STRING, FIELD(trace), 0, 0, NULL,
     "the Chrome trace (FILE.gz: compressed; FILE.pftrace: Perfetto's protobuf)," CLI_CONT
     "for chrome://tracing, Perfetto, speedscope or opprof summary; written as" CLI_CONT
     "the program runs, in bounded memory (not with --max-events);" CLI_CONT
     "also written, marked incomplete, when the program gets SIGINT or SIGTERM"},
    {"--min-duration", "T", CLI_OPT_STRING, FIELD(min_duration), 0, 0, NULL,
     "leave calls shorter than T (1us, 500ns) out of --trace, and the calls" CLI_CONT
     "inside them; the table still counts every call, the trace says what it left out"},
    {"--max-depth", "N", CLI_OPT_LONG, FIELD(max_depth), 1, 256, NULL,
     "leave calls deeper than N (1: outermost only) out of --trace, and the calls" CLI_CONT
     "inside them; the table still counts every call, the trace says what it left out"},
    {"--table", "FILE", CLI_OPT_STRING, FIELD(table), 0, 0, NULL,
     "the key averages, in --format (\"-\": stderr, the default when no other" CLI_CONT
     "output is asked for)"},
    CLI_ROW_SORT(FIELD(sort), ""),
    CLI_ROW_ROW_LIMIT(FIELD(row_limit), ""),
    CLI_ROW_FORMAT(FIELD(format), ""),
    CLI_ROW_GROUP_BY_STACK(FIELD(group_by_stack), ";" CLI_CONT "implies --with-stack", ""),
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
    {"--no-compensate", NULL, CLI_OPT_FLAG, FIELD(no_compensate), 0, 0, NULL,
     "keep the hooks' own cost in the table: by default it is measured at" CLI_CONT
     "start and taken out of each function's times (the footer says how much)"},
    {"--activities", "LIST", CLI_OPT_STRING, FIELD(activities), 0, 0, "cpu|cuda|cpu,cuda",
     "what is recorded: cpu (default), or cpu,cuda: the program's kernels," CLI_CONT
     "copies and CUDA calls too (CUPTI), charged to the operator or NVTX range" CLI_CONT
     "that launched them"},
    CLI_ROW_MAX_EVENTS_RECORD(FIELD(max_events), ";" CLI_CONT "a table alone or a streamed --trace has none", ""),
    {"--on-demand", NULL, CLI_OPT_FLAG, FIELD(on_demand), 0, 0, NULL,
     "profiling idle until opprof trigger PID asks for a recording"},
    {"--flight", "SIZE", CLI_OPT_STRING, FIELD(flight), 0, 0, NULL,
     "flight recorder: the last SIZE (64M) of events per thread, kept all" CLI_CONT
     "the time; dumped on SIGUSR2, opprof trigger PID --dump, or a slow step"},
    {"--slow-step", "T", CLI_OPT_STRING, FIELD(slow_step), 0, 0, NULL,
     "dump when a step (opprof_step) takes longer than T (50ms), than a" CLI_CONT
     "multiple of the running median (1.5x), or both (1.5x,20ms)"},
    {"--slow", "RANGE", CLI_OPT_STRING, FIELD(slow), 0, 0, NULL,
     "a step is a range of that name (a function): for programs that do" CLI_CONT "not call opprof_step"},
    {"--flight-file", "PATH", CLI_OPT_STRING, FIELD(flight_file), 0, 0, NULL,
     "the dumps' name ({n}: the dump's number, {pid})"},
    {"--flight-signal", "N", CLI_OPT_STRING, FIELD(flight_signal), 0, 0, NULL,
     "the signal that dumps (default 12, SIGUSR2; 0 none)"},
    {"--sample", "HZ", CLI_OPT_LONG_OPT, FIELD(sample), 1, 100000, NULL,
     "sample every thread's stack HZ times per second of its CPU time" CLI_CONT
     "(default 1000): no recompiling. The table and --stacks are then by" CLI_CONT
     "function (self: samples at the leaf, total: on the stack, in time;" CLI_CONT
     "calls: sampling periods) when the program records no ranges"},
    {"--no-inline", NULL, CLI_OPT_FLAG, FIELD(no_inline), 0, 0, NULL,
     "stacks name the function the code belongs to (its symbol), not" CLI_CONT
     "the functions inlined into it: perf report's view (OPPROF_INLINE=0)"},
    {"--separate-debuginfo", NULL, CLI_OPT_FLAG, FIELD(separate_debuginfo), 0, 0, NULL,
     "source lines and inlined frames also from separate debug files" CLI_CONT
     "(-dbg packages); by default such modules are named from their" CLI_CONT
     "symbol tables (OPPROF_SEPARATE_DEBUGINFO=1)"},
    {"--threads", "LIST", CLI_OPT_STRING, FIELD(threads), 0, 0, NULL,
     "with --sample, only these threads' samples: thread ids or shell" CLI_CONT
     "patterns on thread names, comma-separated"},
    {"--columns", "LIST", CLI_OPT_STRING, FIELD(columns), 0, 0, "oncpu",
     "more table columns: oncpu, with --sample: each operator's Self On-CPU" CLI_CONT
     "and On-CPU total (the CPU time of the samples inside its ranges) and" CLI_CONT
     "Wait total (its wall time less that); sort keys oncpu_time_total," CLI_CONT
     "self_oncpu_time_total, wait_time_total. Keeps events (not sums)"},
    {"--within", "NAME", CLI_OPT_STRING, FIELD(within), 0, 0, NULL,
     "with --sample, the table and --stacks by function of the samples" CLI_CONT
     "taken inside ranges named NAME: what inside an operator is hot"},
    CLI_ROW_OLD_SORT(FIELD(sort)),
    CLI_ROW_OLD_STACKS(FIELD(stacks)),
};

/* Options that cannot work together, refused before the program runs,
 * in one line: 0, or -1 after saying why. */
static int check_together(exec_opts *o)
{
    const char *out = o->trace ? "--trace" : o->table ? "--table" : o->stacks ? "--stacks" : NULL;
    const char *filter = o->min_duration ? "--min-duration" : o->max_depth ? "--max-depth" : NULL;
    if (o->min_duration && (opprof_parse_duration(o->min_duration, &o->min_duration_ns) != OPPROF_OK ||
                            o->min_duration_ns <= 0))
        fprintf(stderr, "opprof exec: --min-duration takes a positive duration (1us, 500ns, 2ms), not '%s'\n",
                o->min_duration);
    else if (filter && (!o->trace || o->max_events))
        fprintf(stderr, "opprof exec: %s filters the streamed --trace (%s)\n", filter,
                o->trace ? "not with --max-events, which keeps events to the end" : "no --trace given");
    else if (o->on_demand && o->flight)
        fprintf(stderr, "opprof exec: --on-demand or --flight, not both: the flight recorder already records, "
                        "and opprof trigger PID --dump writes what it holds\n");
    else if (o->sample && (o->on_demand || o->flight))
        fprintf(stderr, "opprof exec: --sample does not go with %s: the flight recorder's dumps and on-demand "
                        "recordings keep ranges, not samples; run opprof exec --sample --trace FILE (or --table) "
                        "instead\n", o->flight ? "--flight" : "--on-demand");
    else if (o->on_demand && out)
        fprintf(stderr, "opprof exec: --on-demand records only when triggered, so %s would stay empty: give it to "
                        "opprof trigger PID (--trace, --table)\n", out);
    else if (o->flight && out)
        fprintf(stderr, "opprof exec: --flight writes its dumps (on SIGUSR2, opprof trigger PID --dump or a slow "
                        "step; named by --flight-file), not %s\n", out);
    else
        return 0;
    return -1;
}

/* The on-demand and flight-recorder options, checked and handed on as
 * variables (exec_flight.c): 0, or -1 after saying why. */
static int flight_options(const exec_opts *o, const char *flight_file)
{
    const struct {
        const char *opt, *value;
    } f[] = {{"--flight", o->flight},        {"--slow-step", o->slow_step},         {"--slow", o->slow},
             {"--flight-file", flight_file}, {"--flight-signal", o->flight_signal}};
    if (o->on_demand && exec_flight_option("--on-demand", NULL) != 0) return -1;
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        if (f[i].value && exec_flight_option(f[i].opt, f[i].value) != 0) return -1;
    return exec_flight_check();
}

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
    bad = bad || set("OPPROF_EXEC_COMPENSATE", o->no_compensate ? "0" : "1");
    if (o->activities) bad = bad || set("OPPROF_ACTIVITIES", o->activities);
    snprintf(num, sizeof num, "%ld", o->sample < 0 ? 1000L : o->sample);
    if (o->sample) bad = bad || set("OPPROF_SAMPLE", num);
    if (o->threads) bad = bad || set("OPPROF_EXEC_THREADS", o->threads);
    if (o->columns) bad = bad || set("OPPROF_EXEC_COLUMNS", o->columns);
    if (o->within) bad = bad || set("OPPROF_EXEC_WITHIN", o->within);
    if (o->no_inline) bad = bad || set("OPPROF_INLINE", "0");
    if (o->separate_debuginfo) bad = bad || set("OPPROF_SEPARATE_DEBUGINFO", "1");
    const char *table = o->table;
    if (!table && !o->stacks && !o->trace) table = "-";
    if (table) bad = bad || set("OPPROF_EXEC_TABLE", table);
    if (o->stacks) bad = bad || set("OPPROF_EXEC_STACKS", o->stacks);
    if (o->trace) bad = bad || set("OPPROF_EXEC_TRACE", o->trace);
    snprintf(num, sizeof num, "%lld", (long long)o->min_duration_ns);
    if (o->min_duration_ns) bad = bad || set("OPPROF_EXEC_MIN_DURATION_NS", num);
    snprintf(num, sizeof num, "%ld", o->max_depth);
    if (o->max_depth) bad = bad || set("OPPROF_EXEC_MAX_DEPTH", num);
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

/* PROGRAM as execvp will find it, for the checks below; NULL when not found
 * (execvp then says so). */
static char *find_program(const char *name)
{
    if (strchr(name, '/')) return strdup(name);
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path;; p++) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char *cand = malloc(n + strlen(name) + 3);
        if (!cand) return NULL;
        sprintf(cand, "%.*s/%s", (int)n, n ? p : ".", name);
        if (access(cand, X_OK) == 0) return cand;
        free(cand);
        if (!end) return NULL;
        p = end;
    }
}

/* 1 when the file is an ELF program without an interpreter: statically
 * linked, so LD_PRELOAD can load nothing into it. */
static int is_static_elf(const char *file)
{
    FILE *f = fopen(file, "rb");
    if (!f) return 0;
    Elf64_Ehdr eh;
    int stat_elf = 0;
    if (fread(&eh, sizeof eh, 1, f) == 1 && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
        eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum < 4096 &&
        fseek(f, (long)eh.e_phoff, SEEK_SET) == 0) {
        stat_elf = 1;
        Elf64_Phdr ph;
        for (unsigned i = 0; i < eh.e_phnum && stat_elf; i++) {
            if (fread(&ph, sizeof ph, 1, f) != 1) stat_elf = 0; /* unreadable: let the loader judge */
            else if (ph.p_type == PT_INTERP || ph.p_type == PT_DYNAMIC) stat_elf = 0;
        }
    }
    fclose(f);
    return stat_elf;
}

/* Every output checked and made absolute, the environment's output folder
 * too; 0, or -1 after saying why. */
static int check_outputs(exec_opts *o, char **keep)
{
    struct {
        const char *opt;
        const char **path;
        int dash;
    } outs[] = {{"--table", &o->table, 1}, {"--trace", &o->trace, 0}, {"--stacks", &o->stacks, 0}};
    for (size_t i = 0; i < sizeof outs / sizeof *outs; i++) {
        if (!*outs[i].path) continue;
        if (!(keep[i] = cli_check_output("exec", outs[i].opt, *outs[i].path, outs[i].dash))) return -1;
        *outs[i].path = keep[i];
    }
    const char *dir = getenv("OPPROF_OUTPUT_TRACE_DIR");
    if (dir && *dir && dir[0] != '/') {
        char *abs = cli_absolute("exec", "OPPROF_OUTPUT_TRACE_DIR", dir);
        if (!abs) return -1;
        int rc = set("OPPROF_OUTPUT_TRACE_DIR", abs);
        free(abs);
        if (rc) return -1;
    }
    return 0;
}

int cmd_exec(int argc, char **argv)
{
    exec_opts o = {.sort = CLI_DEFAULT_SORT, .format = "table", .metric = "self_cpu_time_total",
                   .row_limit = CLI_DEFAULT_ROW_LIMIT};
    int first, p = cli_parse(&SPEC, argc, argv, &o, NULL, &first);
    if (p) return p > 0 ? CLI_OK : CLI_BAD_INPUT;
    if (first >= argc) return cli_bad_usage(&SPEC, "no program given");
    if (check_together(&o) != 0) return CLI_BAD_INPUT;
    const char *needs = o.threads ? "--threads" : o.columns ? "--columns oncpu" : o.within ? "--within" : NULL;
    if (needs && !o.sample) {
        fprintf(stderr, "opprof exec: %s reads samples: it needs --sample\n", needs);
        return CLI_BAD_INPUT;
    }
    if (o.columns && strcmp(o.format, "table") != 0) {
        fprintf(stderr, "opprof exec: --columns adds columns to the text table, not to --format %s\n", o.format);
        return CLI_BAD_INPUT;
    }
    o.with_stack |= o.group_by_stack > 0; /* as its help says: frames need stacks */
    char *keep[4] = {NULL, NULL, NULL, NULL}; /* the absolute paths, alive until execvp */
    int bad = check_outputs(&o, keep) != 0;
    if (!bad && o.flight_file && !(keep[3] = cli_check_output("exec", "--flight-file", o.flight_file, 0))) bad = 1;
    if (!bad && flight_options(&o, keep[3]) != 0) bad = 1;
    char *prog = bad ? NULL : find_program(argv[first]);
    if (prog && is_static_elf(prog)) {
        fprintf(stderr, "opprof exec: %s is statically linked: LD_PRELOAD cannot load opprof into it, so nothing "
                        "would be recorded (link it dynamically)\n", argv[first]);
        bad = 1;
    }
    free(prog);
    int rc = bad ? CLI_BAD_INPUT : export_options(&o) != 0 ? CLI_FAIL : CLI_OK;
    if (rc != CLI_OK) {
        for (int i = 0; i < 4; i++) free(keep[i]);
        return rc;
    }

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
    /* NVTX ranges become user annotations: NVTX loads the injection library
     * this names, the libopprof.so the preloaded library already mapped. */
    char nvtx[PATH_MAX + 32];
    snprintf(nvtx, sizeof nvtx, "%s/libopprof.so", dir);
    if (!getenv("NVTX_INJECTION64_PATH") && access(nvtx, R_OK) == 0 && set("NVTX_INJECTION64_PATH", nvtx))
        return CLI_FAIL;
    execvp(argv[first], argv + first);
    int err = errno;
    fprintf(stderr, "opprof exec: cannot run %s: %s\n", argv[first], strerror(err));
    return err == ENOENT ? 127 : 126; /* the shell's statuses for "not found" and "not runnable" */
}

/* The session the environment asks for, in any program that loads
 * libopprof_instrument.so (preloaded by opprof exec or by hand, or linked):
 * started when the library is loaded, ended when the program exits or when
 * SIGINT or SIGTERM arrives (sigchain.c; the trace so far is then written,
 * marked incomplete, before the program's own handling of the signal).
 *
 * Settings are the documented variables of opprof_config_from_env
 * (include/opprof.h, section 10): a session starts when any of them is set,
 * e.g.  LD_PRELOAD=libopprof_instrument.so OPPROF_OUTPUT_TRACE_DIR=traces
 * OPPROF_SCHEDULE=wait=1,warmup=1,active=2 ./app  writes a file per cycle,
 * traces/profile_{rank}.step{N}.{time}.pt.trace.json. opprof exec (cli/cmd_exec.c) adds
 * its own:
 *
 *   OPPROF_EXEC=1                 profile this process even with no other
 *                                 setting, and only it: every OPPROF_ variable
 *                                 is removed from the environment once read,
 *                                 so the programs it runs are not profiled
 *   OPPROF_EXCLUDE=PATTERNS       functions left out (opprof_function_exclude)
 *   OPPROF_INLINE=0               stacks without inlined frames (opprof_stack_inline)
 *   OPPROF_SEPARATE_DEBUGINFO=1   lines and inlined frames from separate debug files too
 *   OPPROF_EXEC_TRACE=FILE        the trace (.gz: compressed; .pftrace:
 *                                 Perfetto's); streamed
 *                                 (opprof_config.stream_trace) unless a
 *                                 schedule, another handler or a cap
 *                                 (OPPROF_MAX_EVENTS) keep the events to the
 *                                 end
 *   OPPROF_EXEC_TABLE=FILE        the key averages; "-": stderr
 *   OPPROF_EXEC_FORMAT=F          their form: table (default), csv or json
 *   OPPROF_EXEC_SORT_BY=KEY       their sort key (cpu_time_total)
 *   OPPROF_EXEC_ROW_LIMIT=N       the table's rows, -1 all (10)
 *   OPPROF_EXEC_GROUP_BY_STACK_N=N  split its rows by the top N frames
 *   OPPROF_EXEC_STACKS=FILE       folded stacks: the captured call stacks
 *                                 with OPPROF_WITH_STACK, else the call tree
 *                                 (from sums by call path, without events)
 *   OPPROF_EXEC_STACKS_METRIC=M   their metric (self_cpu_time_total)
 *   OPPROF_EXEC_COMPENSATE=0|1    overhead compensation (default 1): the
 *                                 hooks' cost per call, measured at start
 *                                 (opprof_calibrate_overhead on an empty
 *                                 function through these hooks), taken out
 *                                 of the table's sums
 *   OPPROF_EXEC_THREADS=LIST      with OPPROF_SAMPLE, the threads whose
 *                                 samples the function view keeps
 *   OPPROF_EXEC_WITHIN=NAME       ... and only those inside ranges of NAME:
 *                                 the table and stacks by function then, even
 *                                 when the program records ranges
 *   OPPROF_EXEC_COLUMNS=oncpu     the table's on-CPU and wait columns (events
 *                                 are kept: a trace of sums has no samples'
 *                                 ranges)
 *
 * With OPPROF_SAMPLE (opprof exec --sample) every thread the program starts
 * joins the sampling (threads.c), and a trace without ranges gets its table
 * and folded stacks by function, from the samples.
 *
 * Each output is written when a trace is ready (at exit, at a signal, or at
 * the end of each schedule cycle), replacing the file atomically. Only the
 * process that started the session writes: a forked child has no session
 * (opprof's fork handler). A process that ends in _exit, or is killed by a
 * signal other than SIGINT and SIGTERM, writes nothing. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opprof_trace.h"
#include "sigchain.h"
#include "threads.h"

#define NOINSTR __attribute__((no_instrument_function))

extern char **environ;

static struct {
    pthread_mutex_t state_lock; /* started */
    pthread_mutex_t out_lock;   /* the outputs: one ready trace at a time */
    int started;
    int exec;                   /* started by opprof exec */
    pid_t pid;
    opprof_env env;
    opprof_trace_ready_fn env_ready; /* what the environment's config asked for */
    void *env_user;
    opprof_trace_handler trace; /* --trace */
    char trace_path[4096], table[4096], sort_by[64], stacks[4096], metric[64], format[8], threads[1024];
    char within[1024];
    unsigned columns;
    int row_limit, group_by_stack_n, with_stack, scheduled, compensate;
    int64_t min_duration_ns; /* --min-duration, --max-depth: the streamed trace's filters */
    int max_depth;
    size_t events_seen;
} S = {.state_lock = PTHREAD_MUTEX_INITIALIZER, .out_lock = PTHREAD_MUTEX_INITIALIZER};

static NOINSTR int env_int(const char *name, long long def)
{
    const char *v = getenv(name);
    if (!v || !*v) return (int)def;
    char *end;
    long long x = strtoll(v, &end, 10);
    return *end ? (int)def : (int)x;
}

static NOINSTR void env_str(char *dst, size_t cap, const char *name, const char *def)
{
    const char *v = getenv(name);
    snprintf(dst, cap, "%s", v && *v ? v : def);
}

static NOINSTR const char *who(void)
{
    return S.exec ? "opprof exec" : "opprof";
}

static NOINSTR void complain(const char *what)
{
    fprintf(stderr, "%s: %s: %s\n", who(), what, opprof_last_error());
}

typedef struct table_job {
    opprof_key_averages *ka;
    const opprof_trace *t;
} table_job;

/* The key averages in OPPROF_EXEC_FORMAT; a table cut short by a signal
 * says so under it, as the trace says "incomplete". */
static NOINSTR int table_to(FILE *f, void *ctx)
{
    const table_job *j = ctx;
    int rc;
    if (!strcmp(S.format, "csv") || !strcmp(S.format, "json")) {
        rc = opprof_key_averages_sort(j->ka, S.sort_by);
        if (rc == OPPROF_OK)
            rc = S.format[0] == 'c' ? opprof_key_averages_write_csv(j->ka, f) : opprof_key_averages_write_json(j->ka, f);
        return rc;
    }
    rc = opprof_table_write_columns(j->ka, S.sort_by, S.row_limit, S.columns, f);
    if (rc == OPPROF_OK && opprof_trace_incomplete(j->t))
        fprintf(f, "Incomplete: the program got a signal (SIGINT or SIGTERM) before it ended; "
                   "the table holds what was recorded until then\n");
    return rc;
}

static NOINSTR void write_table(const opprof_trace *t)
{
    opprof_avg_options opt = {.group_by_stack_n = S.group_by_stack_n};
    table_job j = {NULL, t};
    if (opprof_key_averages(t, &opt, &j.ka) != OPPROF_OK) {
        complain("key averages");
        return;
    }
    int rc = !strcmp(S.table, "-") ? table_to(stderr, &j) : opprof_write_file(S.table, table_to, &j);
    if (rc != OPPROF_OK) complain("table");
    opprof_key_averages_free(j.ka);
}

static NOINSTR int stacks_to(FILE *f, void *t)
{
    return opprof_write_stacks(t, f, S.metric, S.with_stack ? OPPROF_STACKS_CALLS : OPPROF_STACKS_OPERATORS);
}

static NOINSTR int sampled_stacks_to(FILE *f, void *t)
{
    return opprof_write_stacks(t, f, S.metric, OPPROF_STACKS_CALLS);
}

/* A sampled trace without ranges: its table and folded stacks are the
 * samples by function. */
static NOINSTR void write_functions(const opprof_trace *t)
{
    opprof_trace *ft = NULL;
    if (opprof_trace_functions(t, S.threads, S.within[0] ? S.within : NULL, &ft) != OPPROF_OK) {
        complain("samples by function");
        return;
    }
    unsigned columns = S.columns;
    S.columns = 0; /* functions have no ranges of their own */
    if (S.table[0]) write_table(ft);
    S.columns = columns;
    if (S.stacks[0] && opprof_write_file(S.stacks, sampled_stacks_to, ft) != OPPROF_OK) complain("stacks");
    opprof_trace_free(ft);
}

/* on_trace_ready: every output, one trace at a time (a step's trace and the
 * one a signal writes may be ready on two threads at once). */
static NOINSTR void ready(const opprof_trace *t, void *user)
{
    (void)user;
    pthread_mutex_lock(&S.out_lock);
    size_t ranges = opprof_trace_event_count(t) + opprof_trace_aggregated(t);
    S.events_seen += ranges + opprof_trace_sample_count(t);
    if (S.env_ready) S.env_ready(t, S.env_user);
    /* A streamed trace is in its file already (the writer reports its own failures). */
    if (S.trace_path[0] && !opprof_trace_streamed(t)) opprof_trace_handler_ready(t, &S.trace);
    if ((!ranges || S.within[0]) && opprof_trace_sample_period_ns(t) > 0) {
        if (S.table[0] || S.stacks[0]) write_functions(t);
    } else {
        if (S.table[0]) write_table(t);
        if (S.stacks[0] && opprof_write_file(S.stacks, stacks_to, (void *)t) != OPPROF_OK) complain("stacks");
    }
    opprof_trace_sample_note(t, who(), stderr);
    if (S.exec) opprof_trace_drop_note(t, "opprof exec", "--max-events", "--exclude", stderr);
    pthread_mutex_unlock(&S.out_lock);
}

/* The end of the session: at exit (sig 0), or on the helper thread after
 * SIGINT / SIGTERM, while the program's other threads may still record. */
static NOINSTR void finish(int sig)
{
    pthread_mutex_lock(&S.state_lock);
    if (S.started && getpid() == S.pid) {
        S.started = 0;
        opprof_trace *t = NULL;
        int rc = sig ? opprof_stop_incomplete(&t) : opprof_stop(&t);
        if (rc != OPPROF_OK && rc != OPPROF_E_NO_SESSION) complain("cannot stop profiling");
        opprof_trace_free(t);
        pthread_mutex_lock(&S.out_lock); /* a step's trace still being written is whole before we go on */
        if (S.exec && !sig && S.events_seen == 0 && !S.scheduled)
            fprintf(stderr, "opprof exec: nothing was recorded (is the program compiled with -finstrument-functions "
                            "and dynamically linked? --sample needs no recompiling)\n");
        pthread_mutex_unlock(&S.out_lock);
    }
    pthread_mutex_unlock(&S.state_lock);
}

/* opprof exec's settings are for this process only. */
static NOINSTR void forget_settings(void)
{
    for (;;) {
        char name[256] = "";
        for (char **e = environ; e && *e; e++) {
            const char *eq = strchr(*e, '=');
            if (strncmp(*e, "OPPROF_", 7) == 0 && eq && (size_t)(eq - *e) < sizeof name) {
                memcpy(name, *e, (size_t)(eq - *e));
                name[eq - *e] = '\0';
                break;
            }
        }
        if (!name[0] || unsetenv(name) != 0) return;
    }
}

/* --trace FILE: the handler writes FILE itself, in its directory. */
static NOINSTR int setup_trace(void)
{
    const char *slash = strrchr(S.trace_path, '/');
    char dir[4096];
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == S.trace_path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - S.trace_path), S.trace_path);
    const char *base = slash ? slash + 1 : S.trace_path;
    if (opprof_trace_handler_init(&S.trace, dir, NULL, 0) != OPPROF_OK) {
        complain("--trace");
        return -1;
    }
    if (!*base || strlen(base) >= sizeof S.trace.file_name) {
        fprintf(stderr, "opprof exec: --trace %s: not a file name (at most %zu bytes)\n", S.trace_path,
                sizeof S.trace.file_name - 1);
        return -1;
    }
    snprintf(S.trace.file_name, sizeof S.trace.file_name, "%s", base);
    return 0;
}

/* The calibration's call: an empty function through the hooks, as the
 * program's instrumented functions are called (the hooks are this
 * library's exported ones, reached as the program reaches them). */
__attribute__((noinline, no_instrument_function)) static void calibration_probe(void)
{
    __asm__ volatile("" ::: "memory");
}

static NOINSTR void probe_bare(void *ctx)
{
    (void)ctx;
    calibration_probe();
}

void __cyg_profile_func_enter(void *fn, void *call_site);
void __cyg_profile_func_exit(void *fn, void *call_site);

static NOINSTR void probe_call(void *ctx)
{
    (void)ctx;
    __cyg_profile_func_enter((void *)calibration_probe, NULL);
    calibration_probe();
    __cyg_profile_func_exit((void *)calibration_probe, NULL);
}

/* opprof exec's default: the sums lose what the hooks cost (the table's
 * footer says how much). */
static NOINSTR void calibrate(opprof_config *cfg)
{
    double in = 0, out = 0;
    if (opprof_calibrate_overhead(cfg, probe_call, probe_bare, NULL, &in, &out) != OPPROF_OK) {
        complain("overhead compensation left out");
        return;
    }
    cfg->overhead_inside_ns = in;
    cfg->overhead_outside_ns = out;
}

__attribute__((constructor, no_instrument_function)) static void on_load(void)
{
    const char *on = getenv("OPPROF_EXEC");
    S.exec = on && !strcmp(on, "1");
    /* On demand and the flight recorder have started already, in libopprof's
     * own constructor (src/config/autostart.c): no session from here. */
    const char *od = getenv("OPPROF_ON_DEMAND"), *fl = getenv("OPPROF_FLIGHT");
    if ((od && !strcmp(od, "1")) || (fl && *fl)) {
        if (S.exec) forget_settings();
        return;
    }
    opprof_config cfg;
    int rc = opprof_config_from_env(&cfg, &S.env); /* reports a bad value itself */
    int want = rc == OPPROF_OK && (S.env.enabled || S.exec);
    if (want && S.exec) {
        env_str(S.trace_path, sizeof S.trace_path, "OPPROF_EXEC_TRACE", "");
        env_str(S.table, sizeof S.table, "OPPROF_EXEC_TABLE", "");
        env_str(S.stacks, sizeof S.stacks, "OPPROF_EXEC_STACKS", "");
        env_str(S.metric, sizeof S.metric, "OPPROF_EXEC_STACKS_METRIC", "self_cpu_time_total");
        env_str(S.sort_by, sizeof S.sort_by, "OPPROF_EXEC_SORT_BY", "cpu_time_total"); /* opprof's defaults */
        env_str(S.format, sizeof S.format, "OPPROF_EXEC_FORMAT", "table");
        S.row_limit = env_int("OPPROF_EXEC_ROW_LIMIT", 10);
        S.group_by_stack_n = env_int("OPPROF_EXEC_GROUP_BY_STACK_N", 0);
        S.compensate = env_int("OPPROF_EXEC_COMPENSATE", 1);
        const char *md = getenv("OPPROF_EXEC_MIN_DURATION_NS");
        S.min_duration_ns = md && *md ? strtoll(md, NULL, 10) : 0;
        S.max_depth = env_int("OPPROF_EXEC_MAX_DEPTH", 0);
        env_str(S.threads, sizeof S.threads, "OPPROF_EXEC_THREADS", "");
        env_str(S.within, sizeof S.within, "OPPROF_EXEC_WITHIN", "");
        const char *cols = getenv("OPPROF_EXEC_COLUMNS");
        S.columns = cols && !strcmp(cols, "oncpu") ? OPPROF_COLUMNS_ONCPU : 0;
    }
    const char *inl = getenv("OPPROF_INLINE"); /* read now: the settings go before the stacks are named */
    if (want && inl && !strcmp(inl, "0")) (void)opprof_stack_inline(0);
    const char *sep = getenv("OPPROF_SEPARATE_DEBUGINFO");
    if (want && sep && !strcmp(sep, "1")) (void)opprof_stack_separate_debuginfo(1);
    if (want && opprof_function_exclude(getenv("OPPROF_EXCLUDE")) != OPPROF_OK) {
        complain("--exclude");
        want = 0;
    }
    if (S.exec) forget_settings();
    if (!want || (S.trace_path[0] && setup_trace() != 0)) return;
    S.with_stack = cfg.with_stack;
    S.scheduled = cfg.schedule.enabled;
    S.env_ready = cfg.on_trace_ready;
    S.env_user = cfg.user;
    /* A table and folded stacks are all that is asked for: sums by name
     * (and call path, or captured stack), no events (nothing dropped,
     * memory that of the keys, for any length of run). */
    cfg.aggregate = S.exec && (S.table[0] || S.stacks[0]) && !S.trace_path[0] && !S.env_ready && !S.columns &&
                    !S.within[0];
    /* A trace besides: written as the program runs, in bounded memory, and
     * the same records summed. */
    if (S.exec && S.trace_path[0] && !S.env_ready && !cfg.schedule.enabled &&
        !(cfg.activities & OPPROF_ACTIVITY_CUDA) && cfg.max_events == OPPROF_DEFAULT_MAX_EVENTS && !S.columns &&
        !S.within[0]) {
        cfg.stream_trace = S.trace_path;
        cfg.trace_min_duration_ns = S.min_duration_ns > 0 ? S.min_duration_ns : 0;
        cfg.trace_max_depth = S.max_depth > 0 ? S.max_depth : 0;
    }
    /* The call tree's folded stacks from sums keyed by call path. */
    if (S.stacks[0] && !cfg.with_stack && (cfg.aggregate || cfg.stream_trace)) cfg.aggregate = OPPROF_AGGREGATE_PATHS;
    /* Only sums are compensated: a session that keeps events hands them out
     * as recorded. */
    if (S.exec && S.compensate && (cfg.aggregate || cfg.stream_trace)) calibrate(&cfg);
    cfg.on_trace_ready = ready;
    cfg.user = NULL;
    if (opprof_start(&cfg) != OPPROF_OK) {
        complain("cannot start profiling");
        return;
    }
    S.pid = getpid();
    S.started = 1;
    if (cfg.sample_hz) op_threads_sample(1);
    if (op_sigchain_install(finish) != 0)
        fprintf(stderr, "%s: SIGINT and SIGTERM will end the program without a trace: %s\n", who(), strerror(errno));
}

__attribute__((destructor, no_instrument_function)) static void on_unload(void)
{
    if (!S.pid || getpid() != S.pid) return;
    finish(0);
    op_sigchain_end();
}

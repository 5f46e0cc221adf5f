/* The session `opprof exec` asks for: started when the library is loaded,
 * stopped at exit, its table and folded stacks written where asked. The
 * settings come from the environment that opprof exec (cli/cmd_exec.c) sets:
 *
 *   OPPROF_EXEC=1                 start a session at load (then unset, so
 *                                 that programs this one runs are not profiled)
 *   OPPROF_WITH_STACK=1           capture call stacks
 *   OPPROF_MAX_STACK_DEPTH=N      frames per stack
 *   OPPROF_PROFILE_MEMORY=1       record memory events (with libopprof_malloc)
 *   OPPROF_MAX_EVENTS=N           cap on recorded events
 *   OPPROF_EXCLUDE=PATTERNS       functions left out (opprof_function_exclude)
 *   OPPROF_EXEC_TABLE=FILE        the key-averages table; "-": stderr
 *   OPPROF_EXEC_SORT_BY=KEY       its sort key (self_cpu_time_total)
 *   OPPROF_EXEC_ROW_LIMIT=N       its rows, -1 all (100)
 *   OPPROF_EXEC_GROUP_BY_STACK_N=N  split its rows by the top N frames
 *   OPPROF_EXEC_STACKS=FILE       folded stacks: the captured call stacks
 *                                 with OPPROF_WITH_STACK, else the call tree
 *   OPPROF_EXEC_STACKS_METRIC=M   their metric (self_cpu_time_total)
 *
 * Only the process that loaded the library with OPPROF_EXEC=1 writes: a
 * forked child has no session (opprof's fork handler) and an exec'd one
 * finds OPPROF_EXEC unset. Output is written at exit(); a process killed by a
 * signal or ending in _exit writes nothing. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opprof.h"

#define NOINSTR __attribute__((no_instrument_function))

static struct {
    int started;
    pid_t pid;
    int with_stack;
    char table[4096], sort_by[64], stacks[4096], metric[64];
    int row_limit, group_by_stack_n;
} S;

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

static NOINSTR void complain(const char *what)
{
    fprintf(stderr, "opprof exec: %s: %s\n", what, opprof_last_error());
}

__attribute__((constructor, no_instrument_function)) static void on_load(void)
{
    const char *on = getenv("OPPROF_EXEC");
    if (!on || strcmp(on, "1") != 0) return;
    unsetenv("OPPROF_EXEC");
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.with_stack = S.with_stack = env_int("OPPROF_WITH_STACK", 0);
    cfg.max_stack_depth = (unsigned)env_int("OPPROF_MAX_STACK_DEPTH", 0);
    cfg.profile_memory = env_int("OPPROF_PROFILE_MEMORY", 0);
    const char *me = getenv("OPPROF_MAX_EVENTS");
    if (me && *me) cfg.max_events = strtoull(me, NULL, 10);
    env_str(S.table, sizeof S.table, "OPPROF_EXEC_TABLE", "");
    env_str(S.sort_by, sizeof S.sort_by, "OPPROF_EXEC_SORT_BY", "self_cpu_time_total");
    env_str(S.stacks, sizeof S.stacks, "OPPROF_EXEC_STACKS", "");
    env_str(S.metric, sizeof S.metric, "OPPROF_EXEC_STACKS_METRIC", "self_cpu_time_total");
    S.row_limit = env_int("OPPROF_EXEC_ROW_LIMIT", 100);
    S.group_by_stack_n = env_int("OPPROF_EXEC_GROUP_BY_STACK_N", 0);
    if (opprof_function_exclude(getenv("OPPROF_EXCLUDE")) != OPPROF_OK || opprof_start(&cfg) != OPPROF_OK) {
        complain("cannot start profiling");
        return;
    }
    S.pid = getpid();
    S.started = 1;
}

static NOINSTR void write_table(const opprof_trace *t)
{
    opprof_avg_options opt = {.group_by_stack_n = S.group_by_stack_n};
    opprof_key_averages *ka = NULL;
    if (opprof_key_averages(t, &opt, &ka) != OPPROF_OK) {
        complain("key averages");
        return;
    }
    int to_stderr = !strcmp(S.table, "-");
    FILE *f = to_stderr ? stderr : fopen(S.table, "w");
    if (!f) {
        fprintf(stderr, "opprof: cannot write %s: %s\n", S.table, strerror(errno));
    } else {
        if (opprof_table_write(ka, S.sort_by, S.row_limit, f) != OPPROF_OK) complain("table");
        if (!to_stderr && fclose(f) != 0) fprintf(stderr, "opprof: cannot write %s: %s\n", S.table, strerror(errno));
    }
    opprof_key_averages_free(ka);
}

static NOINSTR void write_stacks(const opprof_trace *t)
{
    FILE *f = fopen(S.stacks, "w");
    if (!f) {
        fprintf(stderr, "opprof: cannot write %s: %s\n", S.stacks, strerror(errno));
        return;
    }
    int frames = S.with_stack ? OPPROF_STACKS_CALLS : OPPROF_STACKS_OPERATORS;
    if (opprof_write_stacks(t, f, S.metric, frames) != OPPROF_OK) complain("stacks");
    if (fclose(f) != 0) fprintf(stderr, "opprof: cannot write %s: %s\n", S.stacks, strerror(errno));
}

__attribute__((destructor, no_instrument_function)) static void on_exit_(void)
{
    if (!S.started || getpid() != S.pid) return;
    S.started = 0;
    opprof_trace *t = NULL;
    if (opprof_stop(&t) != OPPROF_OK || !t) {
        complain("cannot stop profiling");
        return;
    }
    if (opprof_trace_event_count(t) == 0)
        fprintf(stderr, "opprof exec: nothing was recorded (is the program compiled with -finstrument-functions "
                        "and dynamically linked?)\n");
    if (S.table[0]) write_table(t);
    if (S.stacks[0]) write_stacks(t);
    opprof_trace_free(t);
}

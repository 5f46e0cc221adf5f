/* opprof trigger PID [options]: asks a running program that accepts
 * triggers (opprof exec --on-demand or --flight, OPPROF_ON_DEMAND=1,
 * opprof_on_demand_start) to record for a while, or to dump its flight
 * recorder, and waits until it has written. opprof trigger --list shows
 * the processes that accept triggers. */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "opprof_trace.h"
#include "opts.h"
#include "vocab.h"

typedef struct trigger_opts {
    const char *duration, *timeout, *trace, *table, *sort;
    long steps, row_limit;
    int shapes, dump, list;
} trigger_opts;

#define FIELD(f) offsetof(trigger_opts, f)

static const cli_option OPTIONS[] = {
    {"--duration", "TIME", CLI_OPT_STRING, FIELD(duration), 0, 0, NULL,
     "record this long: 5s (default), 250ms, 2m, 1h" CLI_EXAMPLE("opprof trigger 4242 --duration 10s")},
    {"--steps", "N", CLI_OPT_LONG, FIELD(steps), 1, LONG_MAX, NULL,
     "record the next N whole steps (opprof_step), as ProfilerStep#1..N" CLI_EXAMPLE("opprof trigger 4242 --steps 20")},
    {"--timeout", "TIME", CLI_OPT_STRING, FIELD(timeout), 0, 0, NULL,
     "with --steps: stop after this long if the steps do not come (default 10m)"},
    {"--trace", "FILE", CLI_OPT_STRING, FIELD(trace), 0, 0, NULL,
     "the Chrome trace to write ({n}: the trigger's number); default, with no\n"
     "                             --table: opprof_trigger_PID_N.json here"
         CLI_EXAMPLE("opprof trigger 4242 --trace 'job_{n}.json'")},
    {"--table", "FILE", CLI_OPT_STRING, FIELD(table), 0, 0, NULL,
     "the key-averages table to write; '-': print it here" CLI_EXAMPLE("opprof trigger 4242 --table -")},
    CLI_ROW_SORT(FIELD(sort), ""),
    CLI_ROW_ROW_LIMIT(FIELD(row_limit), ""),
    {"--shapes", NULL, CLI_OPT_FLAG, FIELD(shapes), 0, 0, NULL, "record input shapes too"},
    {"--dump", NULL, CLI_OPT_FLAG, FIELD(dump), 0, 0, NULL,
     "dump the flight recorder (opprof exec --flight) to --trace or its own name"
         CLI_EXAMPLE("opprof trigger 4242 --dump --trace now.json")},
    {"--list", NULL, CLI_OPT_FLAG, FIELD(list), 0, 0, NULL,
     "list this user's processes that accept triggers, under a header line" CLI_CONT "PID MODE STATE COMMAND"},
};

static const cli_spec SPEC = {
    "trigger",
    "PID [options] | --list",
    "Makes a running program record for a while and write its trace or table, or dump its\n"
    "flight recorder, while it runs on. The program must accept triggers: run it with\n"
    "opprof exec --on-demand (or --flight SIZE), or set OPPROF_ON_DEMAND=1 for a program\n"
    "linked with libopprof.so. Only its own user (or root) can trigger it.\n"
    "Exit status: 0 done, 1 the program could not record or write, 2 bad arguments, no such\n"
    "process, a process that does not accept triggers or is another user's, or one that is\n"
    "busy.",
    OPTIONS,
    sizeof OPTIONS / sizeof *OPTIONS,
    0,
    1,
    0,
};

static int parse_time(const char *opt, const char *v, int64_t *ns)
{
    if (!v) return 0;
    if (opprof_parse_duration(v, ns) == OPPROF_OK) return 0;
    fprintf(stderr, "opprof trigger: %s: %s\n", opt, opprof_last_error());
    return -1;
}

/* The listing under its header line; nothing when none. */
static int list(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    int n = mem ? opprof_trigger_list(mem) : -1;
    if (mem && fclose(mem) != 0 && n >= 0) n = -1;
    if (n < 0) {
        fprintf(stderr, "opprof trigger: --list: %s\n", *opprof_last_error() ? opprof_last_error() : "out of memory");
        free(text);
        return CLI_FAIL;
    }
    if (n == 0) fprintf(stderr, "opprof trigger: no process of yours accepts triggers\n");
    else printf("PID MODE STATE COMMAND\n%s", text);
    free(text);
    return CLI_OK;
}

/* The program's reply, with the files it wrote named by absolute paths: a
 * dump's own name is relative to the program's folder, not the caller's. */
static void relay(const char *reply, long long pid)
{
    char cwd[4096] = "", link[64];
    snprintf(link, sizeof link, "/proc/%lld/cwd", pid);
    ssize_t k = readlink(link, cwd, sizeof cwd - 1);
    cwd[k > 0 ? k : 0] = '\0';
    for (const char *line = reply; *line;) {
        size_t n = strcspn(line, "\n");
        if (!strncmp(line, "wrote ", 6) && n > 6 && line[6] != '/' && *cwd)
            printf("wrote %s/%.*s\n", cwd, (int)(n - 6), line + 6);
        else
            printf("%.*s\n", (int)n, line);
        line += n + (line[n] == '\n');
    }
}

int cmd_trigger(int argc, char **argv)
{
    trigger_opts o = {.sort = CLI_DEFAULT_SORT, .row_limit = CLI_DEFAULT_ROW_LIMIT};
    const char *pos[1];
    int npos, p = cli_parse(&SPEC, argc, argv, &o, pos, &npos);
    if (p) return p > 0 ? CLI_OK : CLI_BAD_INPUT;
    if (o.list) {
        if (npos) {
            fprintf(stderr, "opprof trigger: --list takes no PID\n");
            return CLI_BAD_INPUT;
        }
        return list();
    }
    if (!npos) {
        fprintf(stderr, "opprof trigger: give a PID (or --list)\n");
        cli_usage(&SPEC, stderr, 0);
        return CLI_BAD_INPUT;
    }
    char *end;
    long long pid = strtoll(pos[0], &end, 10);
    if (*end || pid <= 0) {
        fprintf(stderr, "opprof trigger: '%s' is not a process id\n", pos[0]);
        return CLI_BAD_INPUT;
    }
    opprof_trigger_request r;
    opprof_trigger_request_init(&r);
    if (parse_time("--duration", o.duration, &r.duration_ns) || parse_time("--timeout", o.timeout, &r.timeout_ns))
        return CLI_BAD_INPUT;
    if (o.duration && o.steps) {
        fprintf(stderr, "opprof trigger: --duration or --steps, not both\n");
        return CLI_BAD_INPUT;
    }
    if (o.dump && (o.duration || o.steps || o.table || o.shapes)) {
        fprintf(stderr, "opprof trigger: --dump writes what the flight recorder holds: only --trace goes with it\n");
        return CLI_BAD_INPUT;
    }
    r.steps = o.steps;
    r.trace = o.trace;
    r.table = o.table;
    r.sort_by = o.sort;
    r.row_limit = (int)o.row_limit;
    r.record_shapes = o.shapes;
    r.dump = o.dump;
    char *reply = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&reply, &len);
    int rc = mem ? opprof_trigger((int64_t)pid, &r, mem) : OPPROF_E_NOMEM;
    if (mem) fclose(mem);
    if (rc == OPPROF_OK && reply) relay(reply, pid);
    free(reply);
    if (rc == OPPROF_OK) return CLI_OK;
    fprintf(stderr, "opprof trigger: %s\n", *opprof_last_error() ? opprof_last_error() : opprof_strerror(rc));
    return rc == OPPROF_E_IO || rc == OPPROF_E_NOMEM ? CLI_FAIL : CLI_BAD_INPUT;
}

/* Folded stacks of a trace file (--stacks of the commands that read
 * traces): the trace's captured call stacks when it has them, else the
 * call tree of its operators, which every trace has. */
#include <stddef.h>
#include <stdio.h>

#include "commands.h"
#include "opprof_trace.h"

int cli_trace_has_stacks(const opprof_trace *t)
{
    size_t n = opprof_trace_event_count(t);
    for (size_t i = 0; i < n; i++)
        if (opprof_trace_event_stack_depth(t, i)) return 1;
    return 0;
}

void cli_note_no_stacks(const char *command, const char *path)
{
    fprintf(stderr, "opprof %s: %s has no call stacks (record it with --with-stack): one row per name\n", command,
            path);
}

typedef struct folded_job {
    const opprof_trace *t;
    const char *metric;
    int frames;
} folded_job;

static int write_folded(FILE *f, void *ctx)
{
    const folded_job *j = ctx;
    return opprof_write_stacks(j->t, f, j->metric, j->frames);
}

int cli_write_folded(const char *command, const opprof_trace *t, const char *path, const char *metric)
{
    folded_job j = {t, metric, cli_trace_has_stacks(t) ? OPPROF_STACKS_CALLS : OPPROF_STACKS_OPERATORS};
    if (opprof_write_file(path, write_folded, &j) == OPPROF_OK) return CLI_OK;
    fprintf(stderr, "opprof %s: --stacks %s: %s\n", command, path, opprof_last_error());
    return CLI_FAIL;
}

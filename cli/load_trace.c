/* Reading a trace file for a subcommand, with the reader's one-line error. */
#include <stdint.h>
#include <stdio.h>

#include "commands.h"
#include "opprof_trace.h"

static int loaded(const char *command, const char *path, int rc, opprof_trace **out)
{
    if (rc == 0) {
        /* The table is right for what was recorded; the reader should know it stops early. */
        if (opprof_trace_incomplete(*out))
            fprintf(stderr, "opprof %s: %s is incomplete: the program was interrupted (e.g. by a signal) "
                            "while it was being recorded\n", command, path);
        return CLI_OK;
    }
    fprintf(stderr, "opprof %s: %s\n", command, opprof_last_error());
    /* Every command's help documents 2 for a trace it cannot read, whether
     * the file is malformed or too large for the memory there is. */
    return CLI_BAD_INPUT;
}


int cli_load_trace(const char *command, const char *path, long max_events, opprof_trace **out)
{
    return loaded(command, path, opprof_trace_load_max(path, max_events > 0 ? (uint64_t)max_events : 0, out), out);
}

int cli_load_table(const char *command, const char *path, long max_events, const opprof_avg_options *ao,
                   opprof_trace **out)
{
    uint64_t max = max_events > 0 ? (uint64_t)max_events : 0;
    return loaded(command, path, opprof_trace_load_table(path, max, ao, out), out);
}

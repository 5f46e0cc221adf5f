/* Reading a trace file for a subcommand, with the reader's one-line error. */
#include <stdio.h>

#include "commands.h"
#include "opprof.h"

int cli_load_trace(const char *command, const char *path, opprof_trace **out)
{
    int rc = opprof_trace_load(path, out);
    if (rc == 0) return CLI_OK;
    fprintf(stderr, "opprof %s: %s\n", command, opprof_last_error());
    return rc == OPPROF_E_NOMEM ? CLI_FAIL : CLI_BAD_INPUT;
}


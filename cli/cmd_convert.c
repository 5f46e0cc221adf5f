/* opprof convert IN OUT: a trace in the format another tool wants
 * (chrome://tracing and speedscope read the JSON, Perfetto either, opprof
 * both), converted as it is read, in bounded memory. */
#include <stddef.h>
#include <stdio.h>

#include "commands.h"
#include "opprof_trace.h"
#include "opts.h"

typedef struct convert_opts {
    long level;
} convert_opts;

static const cli_option OPTIONS[] = {
    {"--gzip-level", "N", CLI_OPT_LONG, offsetof(convert_opts, level), 1, 9, NULL,
     "zlib level of a .gz output and of a .pftrace's compressed batches" CLI_CONT "(default 1: the fastest)"},
};

static const cli_spec SPEC = {
    "convert",
    "IN OUT [options]",
    "Writes the trace IN in the format OUT's name says: .json (Chrome/Kineto JSON: chrome://tracing,\n"
    "Perfetto, speedscope, TensorBoard), .pftrace (Perfetto's protobuf), either with .gz. IN is any\n"
    "trace 'opprof summary' reads ('-': stdin). Written as it is read: memory holds a batch of a\n"
    "million events and the distinct names, whatever the file's size; OUT is replaced only when whole.\n"
    "Times, names, shapes, args, FLOPs, ids, stacks, memory events and thread names come along, so\n"
    "'opprof summary OUT' prints the table of IN. Chrome \"B\"/\"E\" pairs become complete events.\n"
    "Example: opprof convert kineto.pt.trace.json.gz kineto.pftrace\n"
    "Exit status: 0 written, 1 OUT could not be written, 2 bad arguments or a trace that cannot be read.",
    OPTIONS,
    sizeof OPTIONS / sizeof *OPTIONS,
    2,
    2,
    0,
};

int cmd_convert(int argc, char **argv)
{
    convert_opts o = {1};
    const char *pos[2];
    int npos, rc = cli_parse(&SPEC, argc, argv, &o, pos, &npos);
    if (rc) return rc > 0 ? CLI_OK : CLI_BAD_INPUT;
    opprof_export_options eo;
    opprof_export_options_init(&eo);
    eo.gzip_level = (int)o.level;
    rc = opprof_trace_convert(pos[0], pos[1], &eo);
    if (rc == OPPROF_OK) {
        printf("wrote %s\n", pos[1]);
        return CLI_OK;
    }
    fprintf(stderr, "opprof convert: %s\n", opprof_last_error());
    /* what cannot be read is bad input, as for every reading command */
    return rc == OPPROF_E_PARSE || rc == OPPROF_E_NOT_FOUND || rc == OPPROF_E_RANGE || rc == OPPROF_E_INVAL
               ? CLI_BAD_INPUT
               : CLI_FAIL;
}

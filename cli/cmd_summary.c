/* opprof summary TRACE: reads a Chrome/Kineto trace file (ours, PyTorch's,
 * any tool's; gzip'd or not; "-" for stdin) and prints its key averages:
 * PyTorch's table, byte for byte, or the same rows as CSV or JSON. */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "opprof_trace.h"
#include "opts.h"
#include "vocab.h"

#define FIELD(f) offsetof(cli_avg_opts, f)

static const cli_option OPTIONS[] = {
    CLI_ROW_SORT(FIELD(sort), ""),
    CLI_ROW_ROW_LIMIT(FIELD(row_limit), ""),
    CLI_ROW_GROUP_BY_INPUT_SHAPE(FIELD(by_shape), "one row per (name, input shapes), from args \"Input Dims\"", ""),
    CLI_ROW_GROUP_BY_STACK(FIELD(by_stack), CLI_GROUP_BY_STACK_READ,
                           CLI_EXAMPLE("opprof summary opprof_flight_4242_1.json --group-by-stack 3")),
    CLI_ROW_TOP_LEVEL(FIELD(top_level)),
    CLI_ROW_FORMAT(FIELD(format), ""),
    CLI_ROW_STACKS(FIELD(stacks), CLI_STACKS_READ, CLI_EXAMPLE("opprof summary trace.json --stacks trace.folded")),
    CLI_ROW_STACKS_METRIC(FIELD(metric), ""),
    CLI_ROW_MAX_EVENTS_READ(FIELD(max_events)),
};

static const cli_spec SPEC = {
    "summary",
    "TRACE [options]",
    "Reads a trace (Chrome/Kineto JSON: PyTorch's legacy or Kineto, opprof's own, any tool's;\n"
    "Perfetto's .pftrace; .gz of either; '-' for stdin) and prints its key averages as PyTorch does. Device kernels, copies and memsets are charged to\n"
    "the operator that launched them (Self CUDA / CUDA total columns).\n"
    "Exit status: 0 done, 1 the output could not be written or memory ran out, 2 bad arguments or a\n"
    "trace that cannot be read (one line on stderr).",
    OPTIONS,
    sizeof OPTIONS / sizeof *OPTIONS,
    1,
    1,
    0,
};

int cmd_summary(int argc, char **argv)
{
    cli_avg_opts o = CLI_AVG_OPTS_INIT;
    const char *pos[1];
    int npos, rc = cli_parse(&SPEC, argc, argv, &o, pos, &npos);
    if (rc) return rc > 0 ? CLI_OK : CLI_BAD_INPUT;
    opprof_trace *t;
    opprof_avg_options ao = {o.by_shape, (int)o.by_stack, o.top_level};
    /* Folded stacks need the events; the table alone, only sums (a .pftrace folded as read). */
    rc = o.stacks ? cli_load_trace("summary", pos[0], o.max_events, &t)
                  : cli_load_table("summary", pos[0], o.max_events, &ao, &t);
    if (rc != CLI_OK) return rc;
    if (o.by_stack && !cli_trace_has_stacks(t)) cli_note_no_stacks("summary", pos[0]);
    opprof_trace_sample_note(t, "opprof summary", stderr); /* sample events read past, if any */
    /* An empty table says why: a trace of other kinds of events (async "b"/"e", counters, flows)
     * is read but gives no rows. */
    if (opprof_trace_event_count(t) == 0 && opprof_trace_aggregated(t) == 0)
        fprintf(stderr, "opprof summary: %s has no operators: rows are complete (\"X\") or paired \"B\"/\"E\" "
                        "events of category cpu_op, user_annotation, cuda_runtime, cuda_driver, kernel, gpu_memcpy, "
                        "gpu_memset or none\n", pos[0]);
    opprof_key_averages *ka = NULL;
    rc = opprof_key_averages(t, &ao, &ka);
    if (rc == 0) rc = cli_write_key_averages(ka, o.format, o.sort, o.row_limit, stdout);
    if (rc != 0) fprintf(stderr, "opprof summary: %s\n", opprof_last_error());
    int out = rc == 0 ? CLI_OK : rc == OPPROF_E_INVAL ? CLI_BAD_INPUT : CLI_FAIL;
    if (out == CLI_OK && o.stacks) out = cli_write_folded("summary", t, o.stacks, o.metric);
    opprof_key_averages_free(ka);
    opprof_trace_free(t);
    if (fflush(stdout) != 0 && out == CLI_OK) {
        fprintf(stderr, "opprof summary: cannot write the output\n");
        return CLI_FAIL;
    }
    return out;
}

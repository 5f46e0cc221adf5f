/* opprof summary TRACE: reads a Chrome/Kineto trace file (ours, PyTorch's,
 * any tool's; gzip'd or not; "-" for stdin) and prints its key averages:
 * PyTorch's table, byte for byte, or the same rows as CSV or JSON. */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "opprof.h"
#include "opts.h"

#define FIELD(f) offsetof(cli_avg_opts, f)

static const cli_option OPTIONS[] = {
    {"--sort", "KEY", CLI_OPT_STRING, FIELD(sort), 0, 0, NULL,
     "row order, largest first: cpu_time_total (default), self_cpu_time_total, cpu_time, count, "
     "device_time_total, self_device_time_total, cuda_time_total, cpu_memory_usage, "
     "self_cpu_memory_usage, flops"},
    {"--row-limit", "N", CLI_OPT_LONG, FIELD(row_limit), -1, INT_MAX, NULL,
     "table rows printed; -1: all (default 100; csv and json give every row)"},
    {"--group-by-input-shape", NULL, CLI_OPT_FLAG, FIELD(by_shape), 0, 0, NULL,
     "one row per (name, input shapes), from args \"Input Dims\""},
    {"--top-level", NULL, CLI_OPT_FLAG, FIELD(top_level), 0, 0, NULL, "only events that no other event encloses"},
    {"--format", "FMT", CLI_OPT_STRING, FIELD(format), 0, 0, "table|csv|json",
     "table (PyTorch's key_averages().table(), default), csv or json"},
};

static const cli_spec SPEC = {
    "summary",
    "TRACE [options]",
    "Reads a Chrome trace (PyTorch legacy or Kineto, opprof's own, .gz too, '-' for stdin) and\n"
    "prints its key averages as PyTorch does. Device kernels, copies and memsets are charged to\n"
    "the operator that launched them (Self CUDA / CUDA total columns).\n"
    "Exit status: 0 done, 2 bad arguments or a trace that cannot be read (one line on stderr).",
    OPTIONS,
    sizeof OPTIONS / sizeof *OPTIONS,
    1,
    1,
};

int cmd_summary(int argc, char **argv)
{
    cli_avg_opts o = {"cpu_time_total", "table", 100, 0, 0};
    const char *pos[1];
    int npos, rc = cli_parse(&SPEC, argc, argv, &o, pos, &npos);
    if (rc) return rc > 0 ? CLI_OK : CLI_BAD_INPUT;
    opprof_trace *t;
    if ((rc = cli_load_trace("summary", pos[0], &t)) != CLI_OK) return rc;
    opprof_avg_options ao = {o.by_shape, 0, o.top_level};
    opprof_key_averages *ka = NULL;
    rc = opprof_key_averages(t, &ao, &ka);
    if (rc == 0) {
        if (!strcmp(o.format, "table")) {
            rc = opprof_table_write(ka, o.sort, (int)o.row_limit, stdout);
        } else {
            rc = opprof_key_averages_sort(ka, o.sort);
            if (rc == 0)
                rc = !strcmp(o.format, "csv") ? opprof_key_averages_write_csv(ka, stdout)
                                              : opprof_key_averages_write_json(ka, stdout);
        }
    }
    if (rc != 0) fprintf(stderr, "opprof summary: %s\n", opprof_last_error());
    opprof_key_averages_free(ka);
    opprof_trace_free(t);
    if (fflush(stdout) != 0 && rc == 0) {
        fprintf(stderr, "opprof summary: cannot write the output\n");
        return CLI_FAIL;
    }
    return rc == 0 ? CLI_OK : rc == OPPROF_E_INVAL ? CLI_BAD_INPUT : CLI_FAIL;
}

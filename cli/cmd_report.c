/* opprof report TRACE [TRACE2] -o report.html: one self-contained HTML file
 * with the trace's overview, operators, timeline, memory and devices views,
 * and with a second trace the per-operator diff of TRACE2 against TRACE. */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "opprof_trace.h"
#include "opts.h"
#include "vocab.h"

typedef struct report_opts {
    const char *out, *title;
    long max_events;
} report_opts;

#define FIELD(f) offsetof(report_opts, f)

static const cli_option OPTIONS[] = {
    {"-o", "FILE", CLI_OPT_STRING, FIELD(out), 0, 0, NULL, "the HTML file to write (default report.html)"},
    {"--output", "FILE", CLI_OPT_STRING, FIELD(out), 0, 0, NULL, "the same as -o"},
    {"--title", "TEXT", CLI_OPT_STRING, FIELD(title), 0, 0, NULL, "the page's title (default \"opprof report\")"},
    CLI_ROW_MAX_EVENTS_READ(FIELD(max_events)),
};

static const cli_spec SPEC = {
    "report",
    "TRACE [TRACE2] [-o FILE] [options]",
    "Writes one HTML file that opens offline in any browser: overview, operators (the key averages),\n"
    "timeline (every thread and device stream, zoomable), memory and devices views; with TRACE2, a diff\n"
    "of TRACE2 against TRACE. TRACE is any file 'opprof summary' reads (Chrome/Kineto JSON, Perfetto's\n"
    ".pftrace, .gz of either).\n"
    "Example: opprof report trace.json.gz -o report.html\n"
    "Exit status: 0 written, 1 the file could not be written, 2 bad arguments or an unreadable trace.",
    OPTIONS,
    sizeof OPTIONS / sizeof *OPTIONS,
    1,
    2,
    0,
};

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

int cmd_report(int argc, char **argv)
{
    report_opts o = {"report.html", NULL, 0};
    const char *pos[2];
    int npos = 0;
    int p = cli_parse(&SPEC, argc, argv, &o, pos, &npos);
    if (p) return p > 0 ? CLI_OK : CLI_BAD_INPUT;
    opprof_trace *t[2] = {NULL, NULL};
    int rc = CLI_OK;
    for (int i = 0; i < npos && rc == CLI_OK; i++) rc = cli_load_trace("report", pos[i], o.max_events, &t[i]);
    if (rc == CLI_OK) {
        const char *config[] = {"file", pos[0], npos > 1 ? "compared with" : NULL, npos > 1 ? pos[1] : NULL, NULL};
        opprof_report_options ro = {.title = o.title, .label_a = base_name(pos[0]),
                                    .label_b = npos > 1 ? base_name(pos[1]) : NULL, .config = config};
        if (opprof_report_write(t[0], t[1], &ro, o.out) != OPPROF_OK) {
            fprintf(stderr, "opprof report: %s\n", opprof_last_error());
            rc = CLI_FAIL;
        } else {
            printf("wrote %s\n", o.out);
        }
    }
    opprof_trace_free(t[0]);
    opprof_trace_free(t[1]);
    return rc;
}

/* opprof merge TRACE... -o merged.json: the traces of a distributed run's
 * ranks in one timeline, one process per rank on rank 0's clock, and the
 * cross-rank report (operators across ranks, waiting in collectives and the
 * straggler of each, communication overlapping computation). */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "merge_dir.h"
#include "opprof_trace.h"
#include "opts.h"
#include "vocab.h"

typedef struct merge_opts {
    const char *output, *report, *format;
    long row_limit;
    int quiet;
    long max_events;
} merge_opts;

#define FIELD(f) offsetof(merge_opts, f)

static const cli_option OPTIONS[] = {
    {"--output", "FILE", CLI_OPT_STRING, FIELD(output), 0, 0, NULL,
     "the merged trace (.gz: compressed); without it only the report is made"},
    {"-o", "FILE", CLI_OPT_STRING, FIELD(output), 0, 0, NULL, "the same as --output"},
    {"--report", "FILE", CLI_OPT_STRING, FIELD(report), 0, 0, NULL,
     "also write the report there (\"-\": stdout instead of the text)"},
    {"--format", "FMT", CLI_OPT_STRING, FIELD(format), 0, 0, "text|json", "the --report file's form (default json)"},
    {"--row-limit", "N", CLI_OPT_LONG, FIELD(row_limit), -1, INT_MAX, NULL,
     "collectives listed in the text, largest arrival spread first; -1: all (default 20)"},
    {"--quiet", NULL, CLI_OPT_FLAG, FIELD(quiet), 0, 0, NULL, "print no report on stdout"},
    CLI_ROW_MAX_EVENTS_READ(FIELD(max_events)),
};

static const cli_spec SPEC = {
    "merge",
    "TRACE...|DIR [-o MERGED] [options]",
    "Merges the traces of a distributed run's ranks (libopprof_mpi's, or any with distributedInfo)\n"
    "into one trace with one process per rank, times aligned on rank 0's clock by the offsets each\n"
    "rank measured, and prints the cross-rank report: each operator's total time across ranks,\n"
    "each rank's communication, computation, their overlap and its time waiting in collectives,\n"
    "and for each collective the rank that arrived last (the straggler).\n"
    "A folder instead of files: the latest run that 'opprof run --distributed --trace-dir DIR'\n"
    "wrote there (DIR/RUN_rank_R.*, the largest RUN; a rank's last file when it wrote several).\n"
    "Exit status: 0 done, 1 a file could not be written, 2 bad arguments, an unreadable trace or\n"
    "two traces of the same rank.",
    OPTIONS,
    sizeof OPTIONS / sizeof *OPTIONS,
    1,
    INT_MAX,
    0,
};

typedef struct report_job {
    const opprof_ranks_report *rep;
    int fmt;
    long row_limit;
} report_job;

static int report_to(FILE *f, void *ctx)
{
    const report_job *j = ctx;
    return opprof_ranks_report_write(j->rep, f, j->fmt, j->fmt == OPPROF_FORMAT_TEXT ? (int)j->row_limit : -1);
}

/* To stdout ("-"), or a file replaced atomically. */
static int write_report(const opprof_ranks_report *rep, const merge_opts *o)
{
    report_job j = {rep, !strcmp(o->format, "text") ? OPPROF_FORMAT_TEXT : OPPROF_FORMAT_JSON, o->row_limit};
    int rc = !strcmp(o->report, "-") ? report_to(stdout, &j) : opprof_write_file(o->report, report_to, &j);
    /* A file's failure names its path already; standard output has none. */
    if (rc != OPPROF_OK)
        fprintf(stderr, "opprof merge: %s%s\n", strcmp(o->report, "-") ? "" : "standard output: ", opprof_last_error());
    return rc == OPPROF_OK ? CLI_OK : CLI_FAIL;
}

/* The library refuses two traces of one rank without naming them; the
 * user needs the files (a second run into the same folder, a copy). A
 * trace's rank is its distributedInfo's, else its place, as the merge has it. */
static int same_rank_twice(opprof_trace *const *t, const char *const *path, int n)
{
    for (int i = 0; i < n; i++) {
        opprof_distributed_info a, b;
        int64_t ra = opprof_trace_distributed_info(t[i], &a) == OPPROF_OK ? a.rank : i;
        for (int j = i + 1; j < n; j++) {
            int64_t rb = opprof_trace_distributed_info(t[j], &b) == OPPROF_OK ? b.rank : j;
            if (ra != rb) continue;
            fprintf(stderr, "opprof merge: %s and %s are both rank %lld: give one run's traces (a folder "
                            "gives its latest run)\n", path[i], path[j], (long long)ra);
            return CLI_BAD_INPUT;
        }
    }
    return CLI_OK;
}

/* Loads the n files, merges them (-o), and writes the report. */
static int merge_files(const merge_opts *o, const char *const *files, size_t n)
{
    opprof_trace **traces = calloc(n + 1, sizeof *traces);
    if (!traces) return CLI_FAIL;
    int rc = CLI_OK;
    size_t loaded = 0;
    for (; loaded < n && rc == CLI_OK; loaded++) rc = cli_load_trace("merge", files[loaded], o->max_events, &traces[loaded]);
    if (rc == CLI_OK) rc = same_rank_twice(traces, files, (int)n);
    opprof_trace *merged = NULL;
    opprof_ranks_report *rep = NULL;
    const opprof_trace *const *in = (const opprof_trace *const *)traces;
    if (rc == CLI_OK && o->output) {
        int mrc = opprof_ranks_merge(in, n, &merged);
        if (mrc == OPPROF_OK && opprof_export_chrome_trace(merged, o->output) != OPPROF_OK) mrc = OPPROF_E_IO;
        if (mrc != OPPROF_OK) {
            fprintf(stderr, "opprof merge: %s\n", opprof_last_error());
            rc = mrc == OPPROF_E_INVAL ? CLI_BAD_INPUT : CLI_FAIL; /* the traces, or the writing */
        }
    }
    if (rc == CLI_OK) {
        int rrc = opprof_ranks_report_new(in, n, &rep);
        if (rrc != OPPROF_OK) {
            fprintf(stderr, "opprof merge: %s\n", opprof_last_error());
            rc = rrc == OPPROF_E_INVAL ? CLI_BAD_INPUT : CLI_FAIL;
        }
    }
    int report_to_stdout = o->report && !strcmp(o->report, "-");
    if (rc == CLI_OK && !o->quiet && !report_to_stdout &&
        opprof_ranks_report_write(rep, stdout, OPPROF_FORMAT_TEXT, (int)o->row_limit) != OPPROF_OK) {
        fprintf(stderr, "opprof merge: standard output: %s\n", opprof_last_error());
        rc = CLI_FAIL;
    }
    if (rc == CLI_OK && o->report) rc = write_report(rep, o);
    if (rc == CLI_OK && o->output && !o->quiet) printf("\nmerged trace: %s\n", o->output);
    opprof_ranks_report_free(rep);
    opprof_trace_free(merged);
    for (size_t i = 0; i < loaded; i++) opprof_trace_free(traces[i]);
    free(traces);
    return rc;
}

int cmd_merge(int argc, char **argv)
{
    merge_opts o = {NULL, NULL, "json", 20, 0, 0};
    const char **pos = calloc((size_t)argc + 1, sizeof *pos);
    int npos = 0, rc = pos ? cli_parse(&SPEC, argc, argv, &o, pos, &npos) : -1;
    if (rc) {
        free(pos);
        return rc > 0 ? CLI_OK : CLI_BAD_INPUT;
    }
    cli_run_files run = {0};
    const char *const *files = pos;
    size_t n = (size_t)npos;
    if (npos == 1 && cli_is_dir(pos[0])) { /* a folder: its latest run */
        rc = cli_latest_run("merge", pos[0], &run);
        files = (const char *const *)run.path;
        n = run.n;
    }
    if (rc == CLI_OK) rc = merge_files(&o, files, n);
    cli_run_files_free(&run);
    free(pos);
    if (fflush(stdout) != 0 && rc == CLI_OK) {
        fprintf(stderr, "opprof merge: cannot write to standard output: %s\n", strerror(errno));
        rc = CLI_FAIL;
    }
    return rc;
}

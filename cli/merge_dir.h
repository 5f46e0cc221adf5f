/* `opprof merge DIR`: the files of the latest run that
 * `opprof run --distributed --trace-dir DIR` wrote there. Each rank's file
 * is DIR/RUN_rank_R.{time_ns}.pt.trace.json[.gz], RUN the run's start
 * (YYYYmmdd-HHMMSS-NNNNNNNNN, UTC), so the largest RUN is the latest run and
 * a second run into the folder never mixes with the first. */
#ifndef OPPROF_CLI_MERGE_DIR_H
#define OPPROF_CLI_MERGE_DIR_H

#include <stddef.h>

typedef struct cli_run_files {
    char **path; /* DIR/NAME, one per rank, by rank */
    size_t n;
} cli_run_files;

/* 1 when path is a folder. */
int cli_is_dir(const char *path);

/* The latest run's files in dir; with several files of one rank (a
 * schedule writes one per cycle) the last. Says on stderr which run it took
 * and what it left out. CLI_OK, CLI_BAD_INPUT (no run there, with a line on
 * stderr) or CLI_FAIL. */
int cli_latest_run(const char *command, const char *dir, cli_run_files *out);

void cli_run_files_free(cli_run_files *f);

#endif

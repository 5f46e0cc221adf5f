/* The opprof command's subcommands: each is a main-like function in its own
 * file, using only the public API. */
#ifndef OPPROF_CLI_COMMANDS_H
#define OPPROF_CLI_COMMANDS_H

#include <stdio.h>

typedef struct cli_command {
    const char *name;
    const char *summary;
    int (*main)(int argc, char **argv); /* argv[0] is the subcommand's name */
} cli_command;

/* Exit statuses shared by every subcommand. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_BAD_INPUT = 2 };

typedef struct opprof_trace opprof_trace;
typedef struct opprof_key_averages opprof_key_averages;

/* The options of the commands that print key averages (summary, diff). */
typedef struct cli_avg_opts {
    const char *sort, *format; /* a sort key; table, csv or json */
    long row_limit;            /* table rows; -1 all */
    int by_shape, top_level;   /* --group-by-input-shape, --top-level */
} cli_avg_opts;

int cmd_run(int argc, char **argv);
int cmd_summary(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* Loads the trace at path ("-": stdin). On failure prints
 * "opprof COMMAND: PATH: byte N: what" and returns CLI_BAD_INPUT (CLI_FAIL
 * when out of memory). */
int cli_load_trace(const char *command, const char *path, opprof_trace **out);

/* Writes ka as format says ("table": the table of its first row_limit rows
 * by sort; "csv", "json": every row, sorted by sort). */
int cli_write_key_averages(opprof_key_averages *ka, const char *format, const char *sort, long row_limit, FILE *f);

int cmd_exec(int argc, char **argv);
int cmd_merge(int argc, char **argv);

#endif

/* The opprof command's subcommands: each is a main-like function in its own
 * file, using only the public API. */
#ifndef OPPROF_CLI_COMMANDS_H
#define OPPROF_CLI_COMMANDS_H

#include <stddef.h>
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
typedef struct opprof_avg_options opprof_avg_options;

/* The options of the commands that print key averages of trace files
 * (summary, diff). */
typedef struct cli_avg_opts {
    const char *sort, *format; /* a sort key; table, csv or json */
    long row_limit;            /* table rows; -1 all */
    int by_shape, top_level;   /* --group-by-input-shape, --top-level */
    long max_events;           /* --max-events; 0 no limit */
    long by_stack;             /* --group-by-stack N */
    const char *stacks;        /* --stacks FILE */
    const char *metric;        /* --stacks-metric */
} cli_avg_opts;

/* The defaults every command states (vocab.h). */
#define CLI_AVG_OPTS_INIT {.sort = CLI_DEFAULT_SORT, .format = "table", .row_limit = CLI_DEFAULT_ROW_LIMIT}

int cmd_run(int argc, char **argv);
int cmd_summary(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* Loads the trace at path ("-": stdin), refusing one of more than
 * max_events events (0: no limit). On failure prints
 * "opprof COMMAND: PATH: byte N: what" and returns CLI_BAD_INPUT, also when
 * the trace is too large for memory. */
int cli_load_trace(const char *command, const char *path, long max_events, opprof_trace **out);

/* cli_load_trace keeping only what key averages with ao need
 * (opprof_trace_load_table: a .pftrace folded into sums as it is read). */
int cli_load_table(const char *command, const char *path, long max_events, const opprof_avg_options *ao,
                   opprof_trace **out);

/* Writes ka as format says ("table": the table of its first row_limit rows
 * by sort; "csv", "json": every row, sorted by sort). */
int cli_write_key_averages(opprof_key_averages *ka, const char *format, const char *sort, long row_limit, FILE *f);

/* 1 when some event of t has a captured call stack. */
int cli_trace_has_stacks(const opprof_trace *t);

/* --stacks FILE of a trace file (replaced atomically): folded lines of its
 * call stacks, or of its operator call tree when it has none. On failure
 * prints "opprof COMMAND: what" and returns CLI_FAIL. */
int cli_write_folded(const char *command, const opprof_trace *t, const char *path, const char *metric);

/* The note of a command asked to group a trace without stacks by stack. */
void cli_note_no_stacks(const char *command, const char *path);

/* path made absolute against the current folder (a copy to free); NULL
 * after saying "opprof COMMAND: OPT PATH: why". */
char *cli_absolute(const char *command, const char *opt, const char *path);

/* An output of option opt, checked before anything runs: not empty, not a
 * folder, a name that fits, not another user's symbolic link, in a folder
 * that exists and can be written. "-" passes as it is where allow_dash.
 * Returns the absolute path (a copy to free), or NULL after saying why. */
char *cli_check_output(const char *command, const char *opt, const char *path, int allow_dash);

/* --flight SIZE of exec and run: a size with its unit (64M); 0, or -1
 * after saying why. */
int cli_flight_size(const char *command, const char *value, size_t *bytes);

int cmd_exec(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_trigger(int argc, char **argv);
int cmd_convert(int argc, char **argv);

#endif

/* Command-line options as rows of a table: parsing, validation and --help
 * of a subcommand all come from its rows. */
#ifndef OPPROF_CLI_OPTS_H
#define OPPROF_CLI_OPTS_H

#include <stddef.h>
#include <stdio.h>

typedef enum cli_opt_kind { CLI_OPT_FLAG, CLI_OPT_LONG, CLI_OPT_STRING } cli_opt_kind;

typedef struct cli_option {
    const char *name;    /* "--sort" */
    const char *arg;     /* metavariable; NULL for a flag */
    cli_opt_kind kind;
    size_t offset;       /* of an int (flag), long or const char * in the options struct */
    long min, max;       /* CLI_OPT_LONG bounds */
    const char *choices; /* CLI_OPT_STRING: "table|csv|json", or NULL for any */
    const char *help;
} cli_option;

/* Appends an example line to an option's help, aligned under the help text
 * that cli_usage prints at column 29. */
#define CLI_EXAMPLE(cmd) "\n                             e.g. " cmd

typedef struct cli_spec {
    const char *command;    /* "summary" */
    const char *usage;      /* "TRACE [options]" */
    const char *about;      /* one paragraph */
    const cli_option *opts;
    size_t nopts;
    int min_pos, max_pos;   /* positional arguments */
} cli_spec;

/* Parses argv[1..] ("--name value", "--name=value", flags) into the struct at
 * out and the positional arguments into pos. Returns 0; 1 after printing
 * --help (exit 0); or -1 after printing the problem and the usage line to
 * stderr (exit CLI_BAD_INPUT). */
int cli_parse(const cli_spec *spec, int argc, char **argv, void *out, const char **pos, int *npos);

void cli_usage(const cli_spec *spec, FILE *f, int full);

#endif

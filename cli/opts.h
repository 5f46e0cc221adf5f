/* Command-line options as rows of a table: parsing, validation and --help
 * of a subcommand all come from its rows. The rows every command shares
 * (one name and one default for each) are in vocab.h. */
#ifndef OPPROF_CLI_OPTS_H
#define OPPROF_CLI_OPTS_H

#include <stddef.h>
#include <stdio.h>

/* CLI_OPT_LONG_OPT: a number given only as "--name=N"; "--name" alone
 * stores -1 (the command's default). */
typedef enum cli_opt_kind { CLI_OPT_FLAG, CLI_OPT_LONG, CLI_OPT_STRING, CLI_OPT_LIST, CLI_OPT_LONG_OPT } cli_opt_kind;

/* A repeatable option's values, in the order given (CLI_OPT_LIST). */
#define CLI_LIST_MAX 64
typedef struct cli_list {
    const char *item[CLI_LIST_MAX];
    int n;
} cli_list;

typedef struct cli_option {
    const char *name;    /* "--sort" */
    const char *arg;     /* metavariable; NULL for a flag */
    cli_opt_kind kind;
    size_t offset;       /* of an int (flag), long, const char * or cli_list in the options struct */
    long min, max;       /* CLI_OPT_LONG bounds */
    const char *choices; /* CLI_OPT_STRING: "table|csv|json", or NULL for any */
    const char *help;    /* NULL: an old spelling kept working, not shown in --help */
} cli_option;

/* Appends an example line to an option's help, aligned under the help text
 * that cli_usage prints at column 29. */
#define CLI_EXAMPLE(cmd) "\n                             e.g. " cmd
/* Continues an option's help on the next line, at the same column. */
#define CLI_CONT "\n                             "

typedef struct cli_spec {
    const char *command;    /* "summary" */
    const char *usage;      /* "TRACE [options]" */
    const char *about;      /* one paragraph */
    const cli_option *opts;
    size_t nopts;
    int min_pos, max_pos;   /* positional arguments */
    int rest;               /* 1: the first positional argument and all after it are a
                               program's command line, not ours (opprof exec) */
} cli_spec;

/* Parses argv[1..] ("--name value", "--name=value", flags) into the struct at
 * out and the positional arguments into pos. Returns 0; 1 after printing
 * --help (exit 0); or -1 after printing the problem and the usage line to
 * stderr (exit CLI_BAD_INPUT). With spec->rest, *npos is instead the index
 * in argv of the first positional argument (argc when there is none). */
int cli_parse(const cli_spec *spec, int argc, char **argv, void *out, const char **pos, int *npos);

/* The two-line usage (full 0) or the whole --help (full 1). */
void cli_usage(const cli_spec *spec, FILE *f, int full);

/* Prints "opprof COMMAND: what" and the two-line usage to stderr; returns
 * CLI_BAD_INPUT. */
int cli_bad_usage(const cli_spec *spec, const char *what);

#endif

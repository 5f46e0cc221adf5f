/* The opprof command's subcommands: each is a main-like function in its own
 * file, using only the public API. */
#ifndef OPPROF_CLI_COMMANDS_H
#define OPPROF_CLI_COMMANDS_H

typedef struct cli_command {
    const char *name;
    const char *summary;
    int (*main)(int argc, char **argv); /* argv[0] is the subcommand's name */
} cli_command;

/* Exit statuses shared by every subcommand. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_BAD_INPUT = 2 };

int cmd_exec(int argc, char **argv);

#endif

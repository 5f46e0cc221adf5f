/* opprof: the command-line front end. It dispatches to subcommands; each
 * lives in its own cli/cmd_*.c file. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "opprof.h"

static const cli_command COMMANDS[] = {
    {"run", "profile a built-in model (ResNet-18, an MLP) and print the table", cmd_run},
    {"summary", "read a trace file (Chrome/Kineto, .gz) and print its key averages", cmd_summary},
    {"diff", "compare two traces: per-operator change in calls and time", cmd_diff},
    {"report", "write a self-contained HTML report (timeline, operators, memory, ...)", cmd_report},
    {"exec", "run a program with opprof preloaded (-finstrument-functions)", cmd_exec},
    {"trigger", "make a running program record now, or dump its flight recorder", cmd_trigger},
    {"merge", "merge the traces of a distributed run's ranks; compare the ranks", cmd_merge},
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: opprof [--version] [--help] COMMAND [ARGS]\n"
            "\n"
            "An operator profiler for C programs.\n"
            "\n"
            "commands:\n");
    for (const cli_command *c = COMMANDS; c->name; c++) fprintf(f, "  %-10s %s\n", c->name, c->summary);
    fprintf(f, "\nRun 'opprof COMMAND --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_BAD_INPUT;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return CLI_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("opprof %d.%d.%d\n", OPPROF_VERSION_MAJOR, OPPROF_VERSION_MINOR, OPPROF_VERSION_PATCH);
        return CLI_OK;
    }
    for (const cli_command *c = COMMANDS; c->name; c++)
        if (!strcmp(argv[1], c->name)) return c->main(argc - 1, argv + 1);
    fprintf(stderr, "opprof: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return CLI_BAD_INPUT;
}

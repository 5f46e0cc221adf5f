/* opprof: the command-line front end. It dispatches to subcommands; each
 * lives in its own cli/cmd_*.c file. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "opprof.h"

static const cli_command COMMANDS[] = {
    {"run", "profile a built-in model (ResNet-18, an MLP) and print the table", cmd_run},
    {"summary", "read a trace file (Chrome/Kineto, .pftrace, .gz) and print its key averages", cmd_summary},
    {"diff", "compare two traces: per-operator change in calls and time", cmd_diff},
    {"report", "write a self-contained HTML report (timeline, operators, memory, ...)", cmd_report},
    {"exec", "run a program with opprof preloaded (-finstrument-functions)", cmd_exec},
    {"trigger", "make a running program record now, or dump its flight recorder", cmd_trigger},
    {"merge", "merge the traces of a distributed run's ranks; compare the ranks", cmd_merge},
    {"convert", "write a trace in another format (.json, .pftrace, .gz), in bounded memory", cmd_convert},
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
    fprintf(f, "\nRun 'opprof COMMAND --help' (or 'opprof help COMMAND') for a command's options.\n");
}

/* A wrong command line: the usage line and where the rest is, as every
 * subcommand answers one. */
static int bad_usage(const char *what, const char *arg)
{
    if (what) fprintf(stderr, "opprof: %s '%s'\n", what, arg);
    fprintf(stderr, "usage: opprof [--version] [--help] COMMAND [ARGS]\n"
                    "Run 'opprof --help' for the commands.\n");
    return CLI_BAD_INPUT;
}

static const cli_command *find(const char *name)
{
    for (const cli_command *c = COMMANDS; c->name; c++)
        if (!strcmp(name, c->name)) return c;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) return bad_usage(NULL, NULL);
    int help = !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help");
    if (help && argc == 2) {
        usage(stdout);
        return CLI_OK;
    }
    if (help) { /* opprof help CMD: exactly opprof CMD --help */
        const cli_command *c = find(argv[2]);
        if (!c) return bad_usage("unknown command", argv[2]);
        if (argc > 3) return bad_usage("help takes one command, not", argv[3]);
        static char help_opt[] = "--help";
        char *args[] = {argv[2], help_opt, NULL};
        return c->main(2, args);
    }
    if (!strcmp(argv[1], "--version")) {
        printf("opprof %d.%d.%d\n", OPPROF_VERSION_MAJOR, OPPROF_VERSION_MINOR, OPPROF_VERSION_PATCH);
        return CLI_OK;
    }
    const cli_command *c = find(argv[1]);
    if (c) return c->main(argc - 1, argv + 1);
    return bad_usage(argv[1][0] == '-' ? "unknown option" : "unknown command", argv[1]);
}

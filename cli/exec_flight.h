/* opprof exec's options for on demand and the flight recorder. */
#ifndef OPPROF_CLI_EXEC_FLIGHT_H
#define OPPROF_CLI_EXEC_FLIGHT_H

/* Checks one option ("--flight", its value) and sets its variable for the
 * program: 0, or -1 after saying what is wrong. */
int exec_flight_option(const char *opt, const char *value);

/* After every option: the flight recorder's details need --flight. */
int exec_flight_check(void);

#define EXEC_FLIGHT_HELP                                                                      \
    "  --on-demand          profiling idle until opprof trigger PID asks for a recording\n"   \
    "  --flight SIZE        flight recorder: the last SIZE (64M) of events per thread, kept\n" \
    "                       all the time; dumped on SIGUSR2, opprof trigger PID --dump, or a\n" \
    "                       slow step\n"                                                        \
    "  --slow-step T        dump when a step (opprof_step) takes longer than T (50ms) or\n"    \
    "                       than a multiple of the running median (1.5x)\n"                    \
    "  --slow RANGE         a step is a range of that name (a function): for programs\n"   \
    "                       that do not call opprof_step\n"                                   \
    "  --flight-file PATH   the dumps' name ({n}: the dump's number, {pid})\n"                 \
    "  --flight-signal N    the signal that dumps (default 12, SIGUSR2; 0 none)\n"

#endif

/* opprof exec's on-demand and flight-recorder options: each checked here
 * with the library's own parsers and handed to the program as the
 * variables libopprof reads when it loads (src/session/autostart.c). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "exec_flight.h"
#include "opprof_trace.h"

static int put(const char *name, const char *value)
{
    if (setenv(name, value, 1) == 0) return 0;
    fprintf(stderr, "opprof exec: cannot set %s: %s\n", name, strerror(errno));
    return -1;
}

int exec_flight_option(const char *opt, const char *value)
{
    size_t bytes;
    int64_t ns;
    double ratio;
    if (!strcmp(opt, "--on-demand")) return put("OPPROF_ON_DEMAND", "1");
    if (!strcmp(opt, "--flight")) {
        if (cli_flight_size("exec", value, &bytes) != 0) return -1;
        return put("OPPROF_FLIGHT", value);
    }
    if (!strcmp(opt, "--slow-step")) {
        if (opprof_parse_slow_step(value, &ns, &ratio) != OPPROF_OK) goto bad;
        return put("OPPROF_FLIGHT_SLOW_STEP", value);
    }
    if (!strcmp(opt, "--flight-file")) return put("OPPROF_FLIGHT_FILE", value);
    if (!strcmp(opt, "--slow")) return put("OPPROF_FLIGHT_SLOW_RANGE", value);
    if (!strcmp(opt, "--flight-signal")) {
        char *end;
        long n = strtol(value, &end, 10);
        if (!*value || *end || n < 0 || n > 64) {
            fprintf(stderr, "opprof exec: --flight-signal: a signal number, 0 for none (not '%s')\n", value);
            return -1;
        }
        /* what sigaction would refuse in the program, refused here */
        if (n == SIGKILL || n == SIGSTOP || (n > 31 && n < SIGRTMIN)) {
            fprintf(stderr, "opprof exec: --flight-signal %ld: %s; give another (default 12, SIGUSR2) or 0 for none\n",
                    n, n == SIGKILL || n == SIGSTOP ? "SIGKILL and SIGSTOP cannot be caught" : "the C library keeps it");
            return -1;
        }
        return put("OPPROF_FLIGHT_SIGNAL", value);
    }
    fprintf(stderr, "opprof exec: %s: not an on-demand option\n", opt);
    return -1;
bad:
    fprintf(stderr, "opprof exec: %s: %s\n", opt, opprof_last_error());
    return -1;
}

int exec_flight_check(void)
{
    const char *f = getenv("OPPROF_FLIGHT");
    if ((getenv("OPPROF_FLIGHT_SLOW_STEP") || getenv("OPPROF_FLIGHT_SLOW_RANGE") || getenv("OPPROF_FLIGHT_FILE") ||
         getenv("OPPROF_FLIGHT_SIGNAL")) &&
        !(f && *f)) {
        fprintf(stderr, "opprof exec: --slow-step, --slow, --flight-file and --flight-signal go with --flight SIZE\n");
        return -1;
    }
    return 0;
}

int cli_flight_size(const char *command, const char *value, size_t *bytes)
{
    size_t n = strlen(value);
    if (n && value[n - 1] >= '0' && value[n - 1] <= '9') {
        fprintf(stderr, "opprof %s: --flight %s: give a unit, e.g. 64M (K, M or G); a bare number would be bytes\n",
                command, value);
        return -1;
    }
    if (opprof_parse_size(value, bytes) == OPPROF_OK) return 0;
    fprintf(stderr, "opprof %s: --flight %s: %s\n", command, value, opprof_last_error());
    return -1;
}

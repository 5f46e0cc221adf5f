/* opprof exec's on-demand and flight-recorder options: each checked here
 * with the library's own parsers and handed to the program as the
 * variables libopprof reads when it loads (src/session/autostart.c). */
#include <errno.h>
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
        if (opprof_parse_size(value, &bytes) != OPPROF_OK) goto bad;
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

/* On demand and the flight recorder from the environment, for a program
 * linked with libopprof_trace.so, or with libopprof.so alone (which loads
 * libopprof_trace.so when these variables are set: session/autoload.c), or
 * run by opprof exec (whose preloaded library loads it): read when the
 * library loads, before main.
 *
 *   OPPROF_ON_DEMAND=1             listen for triggers (opprof trigger PID)
 *   OPPROF_FLIGHT=SIZE             run the flight recorder, SIZE per thread (64M)
 *   OPPROF_FLIGHT_SLOW_STEP=T      dump after a step longer than T (50ms) or than
 *                                  a multiple of the running median (1.5x)
 *   OPPROF_FLIGHT_SLOW_RANGE=NAME  a step is a range of this name (no opprof_step)
 *   OPPROF_FLIGHT_FILE=PATH        the dumps' name ({n}, {pid}); default
 *                                  opprof_flight_{pid}_{n}.json
 *   OPPROF_FLIGHT_SIGNAL=N         dump on signal N (default 12, SIGUSR2; 0 none)
 *
 * The session options (OPPROF_RECORD_SHAPES, OPPROF_WITH_STACK,
 * OPPROF_OUTPUT_TRACE_DIR, ...) are those of opprof_config_from_env. Only
 * the shared library has this file's constructor: a program linked with
 * the static library calls opprof_on_demand_start or opprof_flight_start
 * itself. A bad value is reported on stderr and leaves that part off. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live/flight.h"
#include "opprof_trace.h"

static opprof_env g_env; /* the config points into it */
static int g_flight;

static void complain(const char *var, const char *val)
{
    fprintf(stderr, "opprof: %s=%s: %s; %s stays off\n", var, val, opprof_last_error(),
            strncmp(var, "OPPROF_FLIGHT", 13) ? "on demand" : "the flight recorder");
}

static void start_flight(const char *size, const opprof_config *session)
{
    opprof_flight_config fc;
    opprof_flight_config_init(&fc);
    fc.session = *session;
    fc.session.on_trace_ready = NULL;
    const char *slow = getenv("OPPROF_FLIGHT_SLOW_STEP"), *file = getenv("OPPROF_FLIGHT_FILE"),
               *sig = getenv("OPPROF_FLIGHT_SIGNAL");
    if (opprof_parse_size(size, &fc.ring_bytes) != OPPROF_OK) return complain("OPPROF_FLIGHT", size);
    if (slow && *slow && opprof_parse_slow_step(slow, &fc.slow_step_ns, &fc.slow_step_ratio) != OPPROF_OK)
        return complain("OPPROF_FLIGHT_SLOW_STEP", slow);
    if (file && *file) fc.path = file;
    fc.slow_range = getenv("OPPROF_FLIGHT_SLOW_RANGE");
    if (sig && *sig) {
        char *end;
        long n = strtol(sig, &end, 10);
        if (*end || n < 0 || n >= NSIG) {
            fprintf(stderr, "opprof: OPPROF_FLIGHT_SIGNAL=%s: a signal number (0: none); the flight recorder stays off\n",
                    sig);
            return;
        }
        fc.signal = n == 0 ? -1 : (int)n;
    }
    if (opprof_flight_start(&fc) != OPPROF_OK) return complain("OPPROF_FLIGHT", size);
    g_flight = 1;
}

__attribute__((constructor)) static void autostart(void)
{
    const char *od = getenv("OPPROF_ON_DEMAND"), *fl = getenv("OPPROF_FLIGHT");
    int on_demand = od && !strcmp(od, "1");
    if (!on_demand && !(fl && *fl)) return;
    opprof_config cfg;
    if (opprof_config_from_env(&cfg, &g_env) != OPPROF_OK) return; /* it said what is wrong */
    cfg.on_trace_ready = NULL;
    cfg.user = NULL;
    if (fl && *fl) start_flight(fl, &cfg);
    if (on_demand && opprof_on_demand_start(&cfg) != OPPROF_OK) complain("OPPROF_ON_DEMAND", od);
}

__attribute__((destructor)) static void autostop(void)
{
    if (g_flight) (void)op_flight_stop_at_exit(); /* a dump signal during the exit ends nothing */
    (void)opprof_on_demand_stop();
}

/* opprof run's flight recorder (--flight, --slow-step, --slow, --flight-file) and
 * --inject-delay, the slow step made on purpose that shows it working. */
#ifndef OPPROF_CLI_RUN_FLIGHT_H
#define OPPROF_CLI_RUN_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

#include "opprof_trace.h"

typedef struct run_flight {
    size_t ring;               /* 0: no flight recorder */
    int64_t slow_ns;
    double slow_ratio;
    long delay_step, delay_ms; /* delay_step -1: none */
    const char *range;         /* --slow: a step is this range */
} run_flight;

/* Checks the options (any may be NULL); 0, or -1 after saying what is wrong. */
int run_flight_parse(const char *flight, const char *slow, const char *range, const char *file, const char *inject,
                     run_flight *out);

/* Starts the recorder with cfg's options; dumps go to file (NULL: the
 * default name), each announced on stderr. */
int run_flight_start(const run_flight *f, const opprof_config *cfg, const char *file, const char *dir);

/* Inside profiled step `step` (from 0): sleeps when it is the one to delay. */
void run_flight_delay(const run_flight *f, long step);

/* Stops the recorder after the dumps asked for are written. */
int run_flight_stop(void);

#endif

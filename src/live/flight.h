/* The flight recorder's internals shared between its files. */
#ifndef OPPROF_LIVE_FLIGHT_H
#define OPPROF_LIVE_FLIGHT_H

#include "opprof.h"

/* What the rings hold now, as a finished trace (flight_read.c). */
int op_flight_read(opprof_trace **out);

/* opprof_flight_stop for the process's exit: the dump signal's handler
 * stays installed (and does nothing), so that the signal arriving while
 * the process ends does not take the program's default action. */
int op_flight_stop_at_exit(void);

#endif

/* The flight recorder's internals shared between its files. */
#ifndef OPPROF_LIVE_FLIGHT_H
#define OPPROF_LIVE_FLIGHT_H

#include "opprof.h"

/* What the rings hold now, as a finished trace (flight_read.c). */
int op_flight_read(opprof_trace **out);

#endif

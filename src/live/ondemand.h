/* The listener thread of a process that accepts triggers (ondemand.c) and
 * the hooks between it and the flight recorder (flight.c). */
#ifndef OPPROF_LIVE_ONDEMAND_H
#define OPPROF_LIVE_ONDEMAND_H

#include <stddef.h>

enum { OP_LISTEN_ON_DEMAND = 1, OP_LISTEN_FLIGHT = 2 };

/* Starts the listener (or adds a reason to keep it): 0 or a status. */
int op_listener_acquire(int reason);

/* Drops a reason; the last one stops the listener and removes its socket. */
void op_listener_release(int reason);

/* flight.c: writes a dump now, to path (NULL: the configured name), with
 * the file written copied into written. 0 or a status (with the detail). */
int op_flight_dump_sync(const char *path, const char *reason, char *written, size_t cap);

/* flight.c: 1 while the flight recorder runs. */
int op_flight_running(void);

#endif

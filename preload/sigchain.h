/* SIGINT and SIGTERM while the environment's session runs (autosession.c):
 * the trace recorded so far is written, then the program's own disposition
 * takes the signal as if it had come now (its handler runs; without one the
 * process dies of the signal). See sigchain.c for how. */
#ifndef OPPROF_PRELOAD_SIGCHAIN_H
#define OPPROF_PRELOAD_SIGCHAIN_H

/* Called on the helper thread, never in a signal handler, with the signal
 * that arrived; it writes what the session recorded. */
typedef void (*op_sigchain_fn)(int sig);

/* Starts catching SIGINT and SIGTERM (a signal the program ignores stays
 * ignored). 0, or -1 with errno when the helper thread or its pipe could
 * not be made (then nothing is caught). */
int op_sigchain_install(op_sigchain_fn on_signal);

/* At exit, after the session's own end: gives the program its dispositions
 * back, or, when a signal was caught, waits until the helper has written
 * and passed the signal on. */
void op_sigchain_end(void);

#endif

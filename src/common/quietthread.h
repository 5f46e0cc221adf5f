/* Threads the profiler starts inside someone else's program take none of
 * its signals: each starts with every signal blocked, so that a signal
 * the program expects (a timer, SIGINT, SIGCHLD) goes to one of the
 * program's own threads, as it would without the profiler. */
#ifndef OPPROF_COMMON_QUIETTHREAD_H
#define OPPROF_COMMON_QUIETTHREAD_H

#include <pthread.h>

/* pthread_create with every signal blocked in the new thread; the
 * caller's mask is as it was. pthread_create's return. */
int op_thread_start_quiet(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);

#endif

/* Threads that take no signal (quietthread.h). */
#include <signal.h>

#include "common/quietthread.h"

int op_thread_start_quiet(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved); /* the new thread inherits this mask */
    int rc = pthread_create(th, attr, fn, arg);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    return rc;
}

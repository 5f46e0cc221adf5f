/* pthread_create, interposed (see threads.h): while the session samples, a
 * new thread first joins the sampling, then runs the program's start
 * routine. Otherwise the call goes straight to libc's. */
#define _GNU_SOURCE
#include "threads.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "opprof.h"

#define EXPORT __attribute__((visibility("default"), no_instrument_function))
#define NOINSTR __attribute__((no_instrument_function))

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static _Atomic int g_on;

typedef struct start {
    void *(*fn)(void *);
    void *arg;
} start;

NOINSTR void op_threads_sample(int on)
{
    atomic_store(&g_on, on);
}

static NOINSTR void *trampoline(void *p)
{
    start s = *(start *)p;
    free(p);
    (void)opprof_sample_thread();
    return s.fn(s.arg);
}

EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    static _Atomic(create_fn) real;
    create_fn r = atomic_load(&real);
    if (!r) {
        *(void **)&r = dlsym(RTLD_NEXT, "pthread_create");
        if (!r) return EAGAIN; /* no libc pthread_create to call */
        atomic_store(&real, r);
    }
    start *s = atomic_load(&g_on) ? malloc(sizeof *s) : NULL;
    if (!s) return r(t, attr, fn, arg);
    s->fn = fn;
    s->arg = arg;
    int rc = r(t, attr, trampoline, s);
    if (rc) free(s);
    return rc;
}

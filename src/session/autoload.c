/* The environment's routes for a program that links only libopprof.so:
 * OPPROF_ON_DEMAND=1 and OPPROF_FLIGHT=SIZE are read by the analysis
 * library (src/config/autostart.c), which such a program does not link.
 * When either is set, this constructor loads libopprof_trace.so from the
 * folder libopprof.so was loaded from; its constructors then lend the
 * session its collector and start what the variables ask for. Nothing
 * here calls the analysis library: loading it is all. In a static link
 * nothing refers to this file, so it is left out, as autostart.c is. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session/handle.h"

#ifndef OPPROF_TRACE_SONAME
#define OPPROF_TRACE_SONAME "libopprof_trace.so.1"
#endif

static int wanted(void)
{
    const char *od = getenv("OPPROF_ON_DEMAND"), *fl = getenv("OPPROF_FLIGHT");
    return (od && !strcmp(od, "1")) || (fl && *fl);
}

__attribute__((constructor)) static void autoload(void)
{
    if (!wanted() || op_session_collector()) return; /* already in the process */
    Dl_info self;
    if (!dladdr((void *)autoload, &self) || !self.dli_fname) return;
    const char *slash = strrchr(self.dli_fname, '/');
    size_t dir = slash ? (size_t)(slash - self.dli_fname + 1) : 0;
    char path[4096];
    if (dir + sizeof OPPROF_TRACE_SONAME > sizeof path) return;
    memcpy(path, self.dli_fname, dir);
    memcpy(path + dir, OPPROF_TRACE_SONAME, sizeof OPPROF_TRACE_SONAME);
    if (!dlopen(path, RTLD_NOW | RTLD_GLOBAL) && !dlopen(OPPROF_TRACE_SONAME, RTLD_NOW | RTLD_GLOBAL))
        fprintf(stderr, "opprof: OPPROF_ON_DEMAND/OPPROF_FLIGHT need %s: %s\n", OPPROF_TRACE_SONAME, dlerror());
}

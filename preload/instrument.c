/* libopprof_instrument.so: every function of a program compiled with
 * -finstrument-functions becomes an operator named by its symbol.
 *
 *   cc -finstrument-functions -g app.c -o app
 *   opprof exec -- ./app          (or LD_PRELOAD=libopprof_instrument.so, or
 *                                  link the program with -lopprof_instrument)
 *
 * GCC and Clang call __cyg_profile_func_enter/exit at each instrumented
 * function's entry and exit (glibc's own versions do nothing; these replace
 * them). Each hook is one branch outside a session; inside, a per-thread
 * direct-mapped cache turns the function's address into its site
 * (opprof_function_site, looked up once per function and thread) or into
 * "excluded", then a plain opprof_begin/opprof_end. Measured cost: see
 * bench_instrument (issue 8's target: at most 1.5x a plain begin/end). */
#include <stdint.h>

#include "opprof_trace.h"

#define EXPORT __attribute__((visibility("default"), no_instrument_function))
#define HOOK __attribute__((no_instrument_function))
#define NOINLINE __attribute__((noinline, no_instrument_function))

#define CACHE_SLOTS 1024 /* 16 KiB per thread */

typedef struct cache_slot {
    const void *fn;
    const opprof_site *site; /* NULL: excluded */
} cache_slot;

/* initial-exec: the library is linked or preloaded, never dlopen'd. */
static __thread cache_slot t_cache[CACHE_SLOTS] __attribute__((tls_model("initial-exec")));
static __thread int t_in_lookup __attribute__((tls_model("initial-exec")));

static inline HOOK cache_slot *slot_of(const void *fn)
{
    uintptr_t a = (uintptr_t)fn;
    return &t_cache[((a >> 4) ^ (a >> 14)) & (CACHE_SLOTS - 1)];
}

/* First call of fn on this thread (or its slot was taken by another). A
 * function instrumented inside the lookup itself, or in a signal handler
 * interrupting it, is simply not recorded. */
static NOINLINE const opprof_site *lookup(const void *fn, cache_slot *c)
{
    if (t_in_lookup) return NULL;
    t_in_lookup = 1;
    const opprof_site *s = opprof_function_site(fn);
    t_in_lookup = 0;
    c->fn = fn;
    c->site = s;
    return s;
}

EXPORT void __cyg_profile_func_enter(void *fn, void *call_site)
{
    (void)call_site;
    if (!OPPROF_ACTIVE_()) return;
    cache_slot *c = slot_of(fn);
    const opprof_site *s = c->fn == fn ? c->site : lookup(fn, c);
    if (s) {
        (opprof_begin)(s);
        /* Not a tail call: with with_stack, this hook's frame must stay on
         * the stack, where it marks the instrumented function's prologue for
         * the collector to leave out (the stack starts at the call). */
        __asm__ volatile("" ::: "memory");
    }
}

EXPORT void __cyg_profile_func_exit(void *fn, void *call_site)
{
    (void)call_site;
    if (!OPPROF_ACTIVE_()) return;
    cache_slot *c = slot_of(fn);
    const opprof_site *s = c->fn == fn ? c->site : lookup(fn, c);
    if (s) (opprof_end)(s);
}

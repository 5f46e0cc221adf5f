/* libopprof_malloc.so: feeds malloc, calloc, realloc, free, posix_memalign,
 * aligned_alloc and memalign to opprof's memory profiling, for programs that
 * do not use an instrumented allocator:
 *
 *   LD_PRELOAD=libopprof_malloc.so ./program
 *
 * It calls glibc's own entry points (__libc_malloc and friends) instead of
 * looking the next malloc up with dlsym, which itself allocates: so it is
 * safe from the dynamic linker's first allocation on. A thread-local guard
 * keeps the profiler's own allocations (a thread's first record allocates
 * its state) from being recorded or recursing. Outside a session with
 * profile_memory each call costs one branch on top of glibc's. */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <stddef.h>
#include <stdint.h>

#include "opprof.h"

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void __libc_free(void *p);

#define EXPORT __attribute__((visibility("default")))

static __thread int in_hook __attribute__((tls_model("initial-exec")));

static inline int recording(void)
{
    return __builtin_expect(__atomic_load_n(&opprof_active_, __ATOMIC_RELAXED) != 0, 0) && !in_hook;
}

static inline void *note_alloc(void *p, size_t n)
{
    if (p && recording()) {
        in_hook = 1;
        opprof_record_alloc(p, n);
        in_hook = 0;
    }
    return p;
}

EXPORT void *malloc(size_t n)
{
    return note_alloc(__libc_malloc(n), n);
}

EXPORT void *calloc(size_t n, size_t size)
{
    return note_alloc(__libc_calloc(n, size), n * size);
}

EXPORT void free(void *p)
{
    /* Forget the block before glibc may hand its address to another thread. */
    if (p && recording()) {
        in_hook = 1;
        opprof_record_free(p);
        in_hook = 0;
    }
    __libc_free(p);
}

EXPORT void *realloc(void *p, size_t n)
{
    void *q = __libc_realloc(p, n);
    if (recording() && (q || n == 0)) { /* a failed realloc leaves p as it was */
        in_hook = 1;
        opprof_record_realloc(p, q, q ? n : 0);
        in_hook = 0;
    }
    return q;
}

EXPORT void *memalign(size_t align, size_t n)
{
    return note_alloc(__libc_memalign(align, n), n);
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
    return note_alloc(__libc_memalign(align, n), n);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *) || (align & (align - 1))) return EINVAL;
    void *p = __libc_memalign(align, n);
    if (!p && n) return ENOMEM;
    *out = note_alloc(p, n);
    return 0;
}

/* What the compiler is told beyond C11: branch hints, inlining, the TLS
 * model of the hot path's thread pointer, printf-like arguments checked,
 * the relaxed atomic loads and stores that a word read beside its writer
 * needs (plain moves on x86-64 and aarch64), and what libopprof.so exports
 * to libopprof_trace (OP_SEAM). One home, so that capture and the model's
 * readers of its records spell them alike. */
#ifndef OPPROF_COMMON_COMPILER_H
#define OPPROF_COMMON_COMPILER_H

#if defined(__GNUC__)
#define OP_LIKELY(x) __builtin_expect(!!(x), 1)
#define OP_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* The recording thread's state one load off the thread pointer, with no
 * call to __tls_get_addr on the hot path. */
#define OP_TLS_MODEL __attribute__((tls_model("initial-exec")))
#define OP_NOINLINE __attribute__((noinline))
#define OP_ALWAYS_INLINE inline __attribute__((always_inline))
#define OP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define OP_LIKELY(x) (x)
#define OP_UNLIKELY(x) (x)
#define OP_TLS_MODEL
#define OP_NOINLINE
#define OP_ALWAYS_INLINE inline
#define OP_PRINTF(a, b)
#endif

/* A word another thread may read (or write) at the same time. */
#define OP_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define OP_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
/* A range's end time: a release store (a plain mov on x86), so a reader
 * that sees the end with an acquire load (the spool, a live dump) may then
 * read the whole record and its chunk with plain reads or write(2). */
#define OP_STORE_END(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* The seam between the two libraries (docs/DESIGN.md lists it): libopprof
 * and libopprof_trace are built with hidden visibility; the few internal
 * functions of the client that the analysis library calls are marked
 * OP_SEAM, so that libopprof.so exports them beside the public API. They
 * are not API: their names start with op_, no public header declares them,
 * and they change with the library. Nothing in the client calls the
 * analysis library: what the client needs of it at run time is lent through
 * function pointers (session/handle.h). */
#if defined(__GNUC__)
#define OP_SEAM __attribute__((visibility("default")))
#else
#define OP_SEAM
#endif

#endif

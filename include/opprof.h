/*
 * opprof.h - an operator profiler for C programs: recording.
 *
 * What an instrumented program needs, organised by concept:
 *   1. status codes          4. recording (the hot path)
 *   2. sites and inputs      5. memory events
 *   3. sessions              6. device activity (CUDA, NVTX)
 * Traces and their analysis (the event model, key averages and tables,
 * export, import, configuration from the environment, stacks,
 * distributed runs, on demand and the flight recorder) are in
 * opprof_trace.h, which includes this header.
 *
 * Every function returns 0 (OPPROF_OK) or a negative opprof_status unless it
 * says otherwise; opprof_strerror() explains a status and opprof_last_error()
 * gives the calling thread's detail for its last failure (a path, a byte
 * offset, the valid choices).
 *
 * Recording is process-wide: at most one session is active at a time, and any
 * thread may record into it without locks.
 *
 * Structs that grow: opprof_config, opprof_export_options and
 * opprof_trace_handler begin with struct_size, the struct's size as the
 * program was compiled. Their _init functions, inline in the headers so
 * that the size is the program's, set it; the library reads and writes only
 * that many bytes, so a program built against an older, smaller struct runs
 * with a newer library, the fields it does not have taking their defaults.
 * The library refuses, with OPPROF_E_INVAL and a detail naming the struct,
 * a struct_size of 0 (a struct never set up), one that is no struct's size
 * (not a multiple of sizeof(size_t), or far beyond this library's), and a
 * struct larger than this library's whose extra fields are not zero (a
 * program built against a newer header that uses what this library lacks).
 * Fields are only ever added at the end, with 0 as their default; reserved
 * fields keep the end free of padding.
 */
#ifndef OPPROF_H
#define OPPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OPPROF_VERSION_MAJOR 1
#define OPPROF_VERSION_MINOR 0
#define OPPROF_VERSION_PATCH 0
#define OPPROF_STR2_(x) #x
#define OPPROF_STR_(x) OPPROF_STR2_(x)
#define OPPROF_VERSION_STRING \
    OPPROF_STR_(OPPROF_VERSION_MAJOR) "." OPPROF_STR_(OPPROF_VERSION_MINOR) "." OPPROF_STR_(OPPROF_VERSION_PATCH)

#if defined(__GNUC__) && !defined(OPPROF_STATIC_DEFINE)
#define OPPROF_API __attribute__((visibility("default")))
#else
#define OPPROF_API
#endif

/* ======================================================================
 * 1. Status codes
 * ====================================================================== */

typedef enum opprof_status {
    OPPROF_OK = 0,
    OPPROF_E_INVAL = -1,       /* invalid argument (NULL where one is needed, bad value) */
    OPPROF_E_ACTIVE = -2,      /* a session is already active */
    OPPROF_E_NO_SESSION = -3,  /* no session is active */
    OPPROF_E_NOMEM = -4,       /* out of memory */
    OPPROF_E_UNBALANCED = -5,  /* end without a matching begin on this thread */
    OPPROF_E_IO = -6,          /* a file could not be read or written */
    OPPROF_E_PARSE = -7,       /* malformed input (trace file, configuration string) */
    OPPROF_E_NODEV = -8,       /* the requested device is not present */
    OPPROF_E_UNSUPPORTED = -9, /* not available in this build or on this platform */
    OPPROF_E_NOT_FOUND = -10,  /* no such item (file, key, event) */
    OPPROF_E_RANGE = -11,      /* a value is out of range (index, limit) */
    OPPROF_E_PERM = -12        /* not permitted (another user's process) */
} opprof_status;

/* A static English sentence for a status; never NULL. */
OPPROF_API const char *opprof_strerror(int status);

/* The version of the library the program runs with, "MAJOR.MINOR.PATCH"
 * (OPPROF_VERSION_STRING is the one of the header it was compiled with). */
OPPROF_API const char *opprof_version(void);

/* The calling thread's detail for its last failed call ("" when none). */
OPPROF_API const char *opprof_last_error(void);

/* ======================================================================
 * 2. Sites and inputs
 *
 * An instrumentation point is a static site: its address identifies it, so
 * recording stores one pointer instead of copying a name.
 * ====================================================================== */

typedef enum opprof_category {
    OPPROF_CAT_CPU_OP = 0,          /* an operator ("cpu_op") */
    OPPROF_CAT_USER_ANNOTATION = 1, /* a user range, record_function ("user_annotation") */
    OPPROF_CAT_CUDA_RUNTIME = 2,    /* a CUDA runtime API call */
    OPPROF_CAT_CUDA_DRIVER = 3,     /* a CUDA driver API call */
    OPPROF_CAT_KERNEL = 4,          /* device: a kernel */
    OPPROF_CAT_GPU_MEMCPY = 5,      /* device: a copy */
    OPPROF_CAT_GPU_MEMSET = 6,      /* device: a memset */
    OPPROF_CAT_MEMORY = 7,          /* the "[memory]" pseudo operator */
    OPPROF_CAT_OTHER = 8            /* anything else read from a trace */
} opprof_category;

/* The category's name as traces spell it ("cpu_op", "user_annotation", ...). */
OPPROF_API const char *opprof_category_name(int category);

#define OPPROF_MAX_INPUTS 16
#define OPPROF_MAX_DIMS 8

typedef enum opprof_dtype {
    OPPROF_DTYPE_NONE = 0, /* not a tensor and not a scalar: recorded as "" */
    OPPROF_DTYPE_FLOAT,    /* "float" */
    OPPROF_DTYPE_DOUBLE,   /* "double" */
    OPPROF_DTYPE_HALF,     /* "c10::Half" */
    OPPROF_DTYPE_BFLOAT16, /* "c10::BFloat16" */
    OPPROF_DTYPE_INT8,     /* "signed char" */
    OPPROF_DTYPE_UINT8,    /* "unsigned char" */
    OPPROF_DTYPE_INT16,    /* "short int" */
    OPPROF_DTYPE_INT32,    /* "int" */
    OPPROF_DTYPE_INT64,    /* "long int" */
    OPPROF_DTYPE_BOOL,     /* "bool" */
    OPPROF_DTYPE_SCALAR,   /* a Python-like scalar argument: "Scalar", dims [] */
    OPPROF_DTYPE_COUNT_
} opprof_dtype;

/* The dtype's name as PyTorch writes it in "Input type". */
OPPROF_API const char *opprof_dtype_name(int dtype);

/* One input of an operator: its element type and its dims (ndim 0 is a
 * scalar, written [] as PyTorch does). */
typedef struct opprof_input {
    uint8_t dtype; /* opprof_dtype */
    uint8_t ndim;  /* 0..OPPROF_MAX_DIMS */
    int64_t dims[OPPROF_MAX_DIMS];
} opprof_input;

/* Computes an operator's floating-point operations from its inputs; called
 * after the session, never on the recording path. 0 means "not counted". */
typedef uint64_t (*opprof_flops_fn)(const opprof_input *inputs, unsigned n_inputs);

/* An instrumentation point. Give it static storage duration: the profiler
 * keeps its address. */
typedef struct opprof_site {
    const char *name;
    const char *file;
    uint32_t line;
    uint32_t category;     /* opprof_category */
    opprof_flops_fn flops; /* optional: with_flops counts with it */
} opprof_site;

#if defined(__GNUC__) || defined(__clang__)
#define OPPROF_UNUSED_ __attribute__((unused)) /* a site used only by calls compiled out (OPPROF_DISABLE) */
#else
#define OPPROF_UNUSED_
#endif

#define OPPROF_SITE_INIT(name_, cat_, flops_) {(name_), __FILE__, (uint32_t)__LINE__, (uint32_t)(cat_), (flops_)}

/* Declares `static const opprof_site var` for an operator named `name_`. */
#define OPPROF_SITE(var, name_) \
    static const opprof_site var OPPROF_UNUSED_ = OPPROF_SITE_INIT(name_, OPPROF_CAT_CPU_OP, NULL)

/* A site for a name known only at run time (a user annotation, a symbol).
 * The same (name, category) always gives the same site; sites live until the
 * process exits. Takes a lock: call it once and keep the pointer, not on a
 * hot path. Returns NULL when out of memory or name is NULL. */
OPPROF_API const opprof_site *opprof_intern(const char *name, int category);

/* ======================================================================
 * 3. Sessions
 * ====================================================================== */

enum {
    OPPROF_ACTIVITY_CPU = 1u << 0,
    OPPROF_ACTIVITY_CUDA = 1u << 1
};

/* What a schedule asks of the profiler at a step (torch.profiler.ProfilerAction). */
typedef enum opprof_action {
    OPPROF_ACTION_NONE = 0,
    OPPROF_ACTION_WARMUP = 1,
    OPPROF_ACTION_RECORD = 2,
    OPPROF_ACTION_RECORD_AND_SAVE = 3
} opprof_action;

/* A schedule of one's own: the action for a step (step >= 0). */
typedef opprof_action (*opprof_schedule_fn)(int64_t step, void *ctx);

/* torch.profiler.schedule(skip_first, wait, warmup, active, repeat).
 * enabled = 0 records every step (no schedule). Skip the first skip_first
 * steps, then cycle: wait steps doing nothing, warmup steps recording and
 * throwing away, active steps recording; the last active step of a cycle is
 * RECORD_AND_SAVE and on_trace_ready gets that cycle's events at the next
 * opprof_step (or at opprof_stop). With skip_first_wait the first cycle
 * starts without its wait. With a schedule each step is recorded as a
 * "ProfilerStep#N" user annotation, as torch does. */
typedef struct opprof_schedule {
    int enabled;
    unsigned skip_first;
    unsigned wait;
    unsigned warmup;
    unsigned active;
    unsigned repeat; /* 0: cycle until the session stops */
    int skip_first_wait;
    opprof_schedule_fn fn; /* when set (and enabled): decides each step instead of the numbers above */
    void *fn_ctx;
} opprof_schedule;

/* The action of step `step` (torch's schedule_fn): NONE before skip_first,
 * then by the cycle; RECORD for every step when the schedule is not enabled,
 * NONE for a negative step. A pure function: tests compare it with torch. */
OPPROF_API opprof_action opprof_schedule_action(const opprof_schedule *s, int64_t step);

/* OPPROF_OK when torch.profiler.schedule would accept s (active > 0);
 * else OPPROF_E_INVAL with a detail. opprof_start checks it too. */
OPPROF_API int opprof_schedule_check(const opprof_schedule *s);

/* Parses "skip_first=10,wait=5,warmup=1,active=3,repeat=2" (any order,
 * skip_first_wait=0|1 too; absent keys are 0, active is required) into *out,
 * enabled. OPPROF_E_PARSE with a detail naming the key or value and the valid
 * choices; *out is then left disabled. */
OPPROF_API int opprof_schedule_parse(const char *text, opprof_schedule *out);

/* Writes s in the form opprof_schedule_parse reads ("" when not enabled);
 * returns the length it needed, as snprintf does. */
OPPROF_API int opprof_schedule_format(const opprof_schedule *s, char *buf, size_t size);

typedef struct opprof_trace opprof_trace;

/* Called each time a trace is ready (end of an active cycle, or at stop).
 * The trace belongs to the profiler and is valid only during the call. */
typedef void (*opprof_trace_ready_fn)(const opprof_trace *trace, void *user);

/* Reads time in nanoseconds; for tests and simulations (opprof_config.clock). */
typedef int64_t (*opprof_clock_fn)(void *ctx);

typedef struct opprof_config {
    size_t struct_size;     /* sizeof(opprof_config) in the program: set by opprof_config_init */
    uint32_t activities;    /* OPPROF_ACTIVITY_* bits; 0 means CPU */
    int record_shapes;      /* keep the inputs given to opprof_begin_inputs */
    int profile_memory;     /* keep memory events (section 5) */
    int with_stack;         /* capture call stacks at begin (libunwind, loaded by opprof_start) */
    int with_flops;         /* count FLOPs through site hooks and opprof_end_flops */
    opprof_schedule schedule;
    opprof_trace_ready_fn on_trace_ready;
    void *user;             /* passed to on_trace_ready */
    const char *output_dir; /* where handlers write traces; NULL: current directory */
    uint64_t max_events;    /* cap on recorded events; 0: OPPROF_DEFAULT_MAX_EVENTS */
    unsigned max_stack_depth; /* frames per stack with with_stack; 0: 32 */
    opprof_clock_fn clock;  /* NULL: the built-in clock (rdtsc where invariant) */
    void *clock_ctx;
    /* Tables only: each thread sums its ranges by name (and input shapes
     * with record_shapes) as they end: count, total and self time, FLOPs
     * with with_flops, memory with profile_memory. No events are kept, so
     * memory stays that of the distinct keys for any length of run, no cap
     * applies and nothing is dropped. The trace then has no events
     * (opprof_trace_aggregated says how many ranges it summed): key averages
     * and their tables work (not top_level_only); exports, memory timelines
     * and event access find nothing. With with_stack the keys also hold
     * the call stack, so group_by_stack_n works. OPPROF_AGGREGATE_PATHS
     * (without with_stack): the keys also hold the call path (the names of
     * the enclosing ranges), so that opprof_write_stacks with
     * OPPROF_STACKS_OPERATORS writes the call tree's folded stacks from the
     * sums, and group_by_stack_n splits rows by the enclosing names; a
     * streamed session (stream_trace) sums that way too. Ignored, events
     * kept, with CUDA activity. */
    int aggregate;
    int reserved_; /* 0 */
    /* Streams the trace to this file while the session records: Chrome JSON
     * (.json, .json.gz compressed) or Perfetto's protobuf (.pftrace,
     * .pftrace.gz): a background thread copies each thread's full chunks
     * of records to a spool file beside it as they fill (no thread ever
     * waits for it), so memory stays a few MiB per thread, no cap applies
     * and nothing is dropped, for any length of run; the file is decoded
     * and written from the spool when the session stops. The file is
     * whole once the session stops (opprof_stop, or opprof_stop_incomplete
     * from a signal handler's helper). The trace handed out then holds sums,
     * as with aggregate (opprof_trace_streamed says so): tables, not events.
     * With with_stack each distinct stack is symbolized once, by the
     * writer. NULL: no streaming. opprof_start refuses it with a schedule or
     * CUDA activity. */
    const char *stream_trace;
    /* Overhead compensation (as TAU does it): what one recorded call of
     * the program's instrumentation costs that its clock reads cannot leave
     * out, in nanoseconds, taken out of the sums of a session that sums
     * (aggregate, or stream_trace's tables). overhead_inside_ns is the part
     * between a range's own two clock reads: each range's duration loses
     * it. overhead_outside_ns is the part around them, which the enclosing
     * range pays: each range loses the whole call's cost (inside + outside)
     * for every range recorded within it, so that a caller's self time
     * loses the outside part per child. A range's figure never goes below
     * 0. opprof_calibrate_overhead (opprof_trace.h) measures both; opprof
     * exec applies them by default. 0, 0 (the default): nothing is taken
     * out, and API sessions' tables stay PyTorch's. Tables of a session
     * that keeps events are not compensated; the trace says whether they
     * were (opprof_trace_overhead_compensation) and the table's footer. */
    double overhead_inside_ns;
    double overhead_outside_ns;
    /* Filters of a streamed trace (stream_trace), as uftrace's
     * --time-filter and --depth: a range shorter than trace_min_duration_ns,
     * or deeper than trace_max_depth on its thread (1: top level only), is
     * left out of the file (and so are the ranges inside it), while the
     * tables still count every call. The file says what was filtered: its
     * "opprofFiltered" (Chrome JSON) or the metadata instant's annotations
     * (.pftrace). 0: no filter; opprof_start refuses either without
     * stream_trace, and negative values. */
    int64_t trace_min_duration_ns;
    int trace_max_depth;
    int reserved2_; /* 0 */
    /* Samples each thread's stack sample_hz times per second of the CPU
     * time it uses (a timer on its CPU clock; 0: no sampling), so programs
     * nobody instrumented are profiled too, and ranges get their on-CPU
     * time. Threads join when they first record a range, when they call
     * opprof_sample_thread, or (opprof exec, libopprof_instrument.so) when
     * they start; the thread that calls opprof_start joins there. The
     * signal is a real-time one the program has no handler for at start
     * (the highest free, or OPPROF_SAMPLE_SIGNAL); a program that installs
     * a handler on it later ends sampling (opprof_trace_sample_note says
     * so). Stacks are max_stack_depth frames deep (0: 64). Not with the
     * flight recorder. */
    unsigned sample_hz;
    unsigned sample_unwind; /* OPPROF_UNWIND_*: how the sampler walks stacks */
} opprof_config;

/* opprof_config.sample_unwind */
enum {
    OPPROF_UNWIND_AUTO = 0,     /* libunwind (DWARF CFI, any code) when it loads, else frame pointers */
    OPPROF_UNWIND_FP = 1,       /* frame pointers only: cheapest, for code built with them */
    OPPROF_UNWIND_LIBUNWIND = 2 /* libunwind, or opprof_start fails */
};

/* opprof_config.sample_hz when the program has no better figure: 1 kHz. */
#define OPPROF_DEFAULT_SAMPLE_HZ 1000u

#define OPPROF_DEFAULT_MAX_EVENTS (16u * 1024u * 1024u)

/* opprof_config.aggregate: sums by key and call path (see there). */
#define OPPROF_AGGREGATE_PATHS 2

/* Fills the first struct_size bytes of *cfg with defaults and sets
 * cfg->struct_size; OPPROF_E_INVAL for a size no opprof_config has. Call it
 * through opprof_config_init, which passes the program's sizeof. */
OPPROF_API int opprof_config_init_size(opprof_config *cfg, size_t struct_size);

/* Fills *cfg with defaults: CPU activity, no options, no schedule. */
static inline void opprof_config_init(opprof_config *cfg)
{
    (void)opprof_config_init_size(cfg, sizeof *cfg);
}

/* Starts the process-wide session. OPPROF_E_INVAL for a NULL config or
 * one that was not set up (struct_size, at the top), OPPROF_E_ACTIVE when
 * one is already running (the running one is kept), OPPROF_E_UNSUPPORTED
 * when with_stack is asked and libunwind cannot be loaded. */
OPPROF_API int opprof_start(const opprof_config *cfg);

/* The calling thread joins the running session's sampling (sample_hz), for
 * threads that record no range of their own (a pool's workers); a thread
 * that records joins by itself. OPPROF_OK also when no session samples. */
OPPROF_API int opprof_sample_thread(void);

/* Stops the session. Ranges still open are closed at this instant and
 * flagged OPPROF_EVENT_FORCED_END. When out is not NULL it receives the
 * recorded trace (free it with opprof_trace_free); with a schedule it receives
 * the events of the cycle in progress, or NULL when nothing was being
 * recorded. OPPROF_E_NO_SESSION when none is active. */
OPPROF_API int opprof_stop(opprof_trace **out);

/* opprof_stop for a session cut short (a signal, a deadline, a preemption
 * notice): the trace it hands out, to out and to on_trace_ready, is marked
 * incomplete ("incomplete": 1 in an exported trace; opprof_trace_incomplete
 * says so, also for a trace read back from the file). */
OPPROF_API int opprof_stop_incomplete(opprof_trace **out);

/* Frees a trace (NULL is ignored). Reading one takes opprof_trace.h and
 * libopprof_trace; a program that only records can still free what it is
 * handed. */
OPPROF_API void opprof_trace_free(opprof_trace *t);

/* Marks a step boundary (torch.profiler.profile.step()): closes the current
 * ProfilerStep#N range, advances the schedule, opens ProfilerStep#N+1. */
OPPROF_API int opprof_step(void);

/* 1 when a session is active, else 0. */
OPPROF_API int opprof_is_active(void);

/* The step counter of the active session (the N of ProfilerStep#N). */
OPPROF_API int64_t opprof_step_num(void);

/* ======================================================================
 * 4. Recording (the hot path)
 *
 * Outside a session each call is one load and one predictable branch.
 * begin and end must pair on the same thread with the same site. A NULL
 * site is refused where it is given: begin records nothing and sets
 * opprof_last_error, end returns OPPROF_E_INVAL.
 * ====================================================================== */

OPPROF_API void opprof_begin(const opprof_site *site);

/* begin, and when record_shapes is on, record each input's dtype and dims
 * (at most OPPROF_MAX_INPUTS inputs; extra ones are ignored). */
OPPROF_API void opprof_begin_inputs(const opprof_site *site, const opprof_input *inputs, unsigned n_inputs);

/* Closes the innermost open range. If the innermost range has another site
 * but `site` is open further out, the ranges inside it are closed too and
 * flagged OPPROF_EVENT_FORCED_END. OPPROF_E_UNBALANCED when `site` is not
 * open on this thread (nothing changes then). 0 outside a session. */
OPPROF_API int opprof_end(const opprof_site *site);

/* end, giving the range's FLOPs (used when with_flops is on; overrides the
 * site's hook). */
OPPROF_API int opprof_end_flops(const opprof_site *site, uint64_t flops);

/* User annotations (PyTorch's record_function): a dynamic name interned on
 * first use. Returns the site to pass to opprof_end, NULL when the name could
 * not be interned. */
OPPROF_API const opprof_site *opprof_annotation_begin(const char *name);

/* Extra arguments of a range, written into its trace event's "args" (the
 * way PyTorch gives its collectives "Collective name", "In msg nelems",
 * "Group size", "dtype", ...) and kept in opprof_event.args. Recorded in
 * every session, whatever its options. Keys and string values are kept by
 * address, never copied: give them static storage, or intern a dynamic
 * string once (opprof_intern(s, OPPROF_CAT_OTHER)->name) and pass that. */
#define OPPROF_MAX_ARGS 16

typedef enum opprof_arg_type {
    OPPROF_ARG_INT = 0,    /* v.i, written as a JSON integer */
    OPPROF_ARG_DOUBLE = 1, /* v.d, a JSON number (null when not finite) */
    OPPROF_ARG_STR = 2     /* v.s, a JSON string (NULL is "") */
} opprof_arg_type;

typedef struct opprof_arg {
    const char *key;
    int type; /* opprof_arg_type */
    union {
        int64_t i;
        double d;
        const char *s;
    } v;
} opprof_arg;

static inline opprof_arg opprof_arg_int(const char *key, int64_t v)
{
    opprof_arg a;
    a.key = key;
    a.type = OPPROF_ARG_INT;
    a.v.i = v;
    return a;
}

static inline opprof_arg opprof_arg_double(const char *key, double v)
{
    opprof_arg a;
    a.key = key;
    a.type = OPPROF_ARG_DOUBLE;
    a.v.d = v;
    return a;
}

static inline opprof_arg opprof_arg_str(const char *key, const char *v)
{
    opprof_arg a;
    a.key = key;
    a.type = OPPROF_ARG_STR;
    a.v.s = v;
    return a;
}

/* begin with args (at most OPPROF_MAX_ARGS; extra ones are ignored). */
OPPROF_API void opprof_begin_args(const opprof_site *site, const opprof_arg *args, unsigned n_args);

/* begin with inputs (kept when record_shapes is on) and args. */
OPPROF_API void opprof_begin_inputs_args(const opprof_site *site, const opprof_input *inputs, unsigned n_inputs,
                                         const opprof_arg *args, unsigned n_args);

/* end, first replacing the values of args given at begin: each arg here
 * whose key (compared by address) and type match one of the range's own
 * takes its place, e.g. the source an MPI_Recv from MPI_ANY_SOURCE got.
 * Others are ignored. Returns what opprof_end returns. */
OPPROF_API int opprof_end_args(const opprof_site *site, const opprof_arg *args, unsigned n_args);

/* Nonzero while a session records. Not for direct use: the inline wrappers
 * below read it so that code outside a session makes no call at all. */
OPPROF_API extern uint64_t opprof_active_;

#if (defined(__GNUC__) || defined(__clang__)) && !defined(OPPROF_BUILDING_LIBRARY) && !defined(OPPROF_NO_INLINE)
#define OPPROF_ACTIVE_() __builtin_expect(__atomic_load_n(&opprof_active_, __ATOMIC_RELAXED) != 0, 0)
/* Always inlined, even without optimization: then the begin call is made
 * from the caller's own frame, where with_stack's stacks start. */
#define OPPROF_INLINE_ static inline __attribute__((always_inline))
OPPROF_INLINE_ void opprof_begin_inline_(const opprof_site *s)
{
    if (OPPROF_ACTIVE_()) (opprof_begin)(s);
}
OPPROF_INLINE_ void opprof_begin_inputs_inline_(const opprof_site *s, const opprof_input *in, unsigned n)
{
    if (OPPROF_ACTIVE_()) (opprof_begin_inputs)(s, in, n);
}
static inline int opprof_end_inline_(const opprof_site *s)
{
    return OPPROF_ACTIVE_() ? (opprof_end)(s) : 0;
}
static inline int opprof_end_flops_inline_(const opprof_site *s, uint64_t flops)
{
    return OPPROF_ACTIVE_() ? (opprof_end_flops)(s, flops) : 0;
}
OPPROF_INLINE_ void opprof_begin_args_inline_(const opprof_site *s, const opprof_arg *a, unsigned n)
{
    if (OPPROF_ACTIVE_()) (opprof_begin_args)(s, a, n);
}
OPPROF_INLINE_ void opprof_begin_inputs_args_inline_(const opprof_site *s, const opprof_input *in, unsigned nin,
                                                     const opprof_arg *a, unsigned n)
{
    if (OPPROF_ACTIVE_()) (opprof_begin_inputs_args)(s, in, nin, a, n);
}
static inline int opprof_end_args_inline_(const opprof_site *s, const opprof_arg *a, unsigned n)
{
    return OPPROF_ACTIVE_() ? (opprof_end_args)(s, a, n) : 0;
}
/* The exported functions stay callable as (opprof_begin)(s), e.g. through FFI. */
#define opprof_begin(s) opprof_begin_inline_(s)
#define opprof_begin_inputs(s, in, n) opprof_begin_inputs_inline_(s, in, n)
#define opprof_end(s) opprof_end_inline_(s)
#define opprof_end_flops(s, f) opprof_end_flops_inline_(s, f)
#define opprof_begin_args(s, a, n) opprof_begin_args_inline_(s, a, n)
#define opprof_begin_inputs_args(s, in, nin, a, n) opprof_begin_inputs_args_inline_(s, in, nin, a, n)
#define opprof_end_args(s, a, n) opprof_end_args_inline_(s, a, n)
#endif

#if defined(__GNUC__) || defined(__clang__)
/* A range that ends when the enclosing block is left, even by an early
 * return:   { OPPROF_SCOPE("my_op"); ... }  */
static inline void opprof_scope_end_(const opprof_site *const *s) { opprof_end(*s); }
#if defined(OPPROF_INLINE_)
OPPROF_INLINE_ const opprof_site *opprof_scope_begin_(const opprof_site *s) { opprof_begin(s); return s; }
#else
static inline const opprof_site *opprof_scope_begin_(const opprof_site *s) { opprof_begin(s); return s; }
#endif
#define OPPROF_CAT2_(a, b) a##b
#define OPPROF_CAT_(a, b) OPPROF_CAT2_(a, b)
#define OPPROF_SCOPE(name_)                                                                      \
    static const opprof_site OPPROF_CAT_(opprof_scope_site_, __LINE__) =                         \
        OPPROF_SITE_INIT(name_, OPPROF_CAT_CPU_OP, NULL);                                        \
    __attribute__((cleanup(opprof_scope_end_), unused)) const opprof_site *const OPPROF_CAT_(    \
        opprof_scope_, __LINE__) = opprof_scope_begin_(&OPPROF_CAT_(opprof_scope_site_, __LINE__))
#endif

/* ======================================================================
 * 5. Memory events
 *
 * With profile_memory, allocators report what they do, and each event counts
 * for the innermost operator open on the reporting thread (and, inclusively,
 * its ancestors). Two ways to report:
 *   - opprof_record_alloc / _free / _realloc: the profiler keeps the size of
 *     every live block, so a free needs only the address (what a malloc
 *     interposer has). Frees of unknown blocks and double frees are counted,
 *     never recorded with a guessed size.
 *   - opprof_record_memory: the caller gives the signed size itself (an
 *     allocator that knows its block sizes); nothing is tracked.
 * Sizes no allocation has (above INT64_MAX; INT64_MIN for record_memory)
 * are refused, not recorded, and set opprof_last_error.
 * Outside a session with profile_memory these calls cost one branch.
 * ====================================================================== */

OPPROF_API void opprof_record_memory(const void *addr, int64_t bytes);
OPPROF_API void opprof_record_alloc(const void *addr, uint64_t bytes);
OPPROF_API void opprof_record_free(const void *addr);
/* A realloc that moved (or resized) old_addr to new_addr of new_bytes: the
 * old block's size is freed and the new size allocated. old_addr NULL is an
 * alloc; new_bytes 0 with new_addr NULL is a free. */
OPPROF_API void opprof_record_realloc(const void *old_addr, const void *new_addr, uint64_t new_bytes);

#if defined(OPPROF_ACTIVE_)
static inline void opprof_record_memory_inline_(const void *addr, int64_t bytes)
{
    if (OPPROF_ACTIVE_()) (opprof_record_memory)(addr, bytes);
}
static inline void opprof_record_alloc_inline_(const void *addr, uint64_t bytes)
{
    if (OPPROF_ACTIVE_()) (opprof_record_alloc)(addr, bytes);
}
static inline void opprof_record_free_inline_(const void *addr)
{
    if (OPPROF_ACTIVE_()) (opprof_record_free)(addr);
}
#define opprof_record_memory(a, b) opprof_record_memory_inline_(a, b)
#define opprof_record_alloc(a, b) opprof_record_alloc_inline_(a, b)
#define opprof_record_free(a) opprof_record_free_inline_(a)
#endif

/* ======================================================================
 * 6. Device activity
 *
 * With OPPROF_ACTIVITY_CUDA a session also records, through CUPTI, the
 * kernels (name, grid, block, registers, shared memory), memory copies and
 * memsets of every CUDA device, on a process per device (pid = device index)
 * and a thread per stream (tid = stream id), and the CUDA runtime and
 * driver calls that launched them, on the calling thread. Each activity is
 * linked to the operator open on the launching thread (its "External id"),
 * whose device time it counts (Self CUDA). Activity CUPTI had to drop is
 * counted in opprof_trace_dropped. CUDA and CUPTI are loaded at run time:
 * without them, or without a device, opprof_start prints one line
 * "opprof: no CUDA device: ..." on stderr and records CPU activity only.
 *
 * NVTX: libopprof.so is an NVTX injection library. Run a program that
 * links libopprof.so with NVTX_INJECTION64_PATH=/path/to/libopprof.so and
 * the NVTX ranges it or its libraries open (nvtxRangePush/Pop,
 * nvtxRangeStart/End, domain ranges) become user annotations of the
 * active session.
 * ====================================================================== */

/* The number of CUDA devices activity can be recorded on (> 0), or
 * OPPROF_E_NODEV / OPPROF_E_UNSUPPORTED with the reason in
 * opprof_last_error() ("no CUDA device: ..."). Loads CUDA on first use. */
OPPROF_API int opprof_cuda_device_count(void);

/* ----------------------------------------------------------------------
 * Compiled out: with OPPROF_DISABLE defined, every function of this header
 * and of opprof_trace.h has an empty form (opprof_disabled.h): recording
 * calls are empty expressions, a session never starts (opprof_start gives
 * OPPROF_E_UNSUPPORTED, opprof_stop hands out NULL), OPPROF_SCOPE is
 * nothing and what reads a trace finds none, so a program instrumented for
 * opprof builds and links without the library and pays nothing, as
 * TRACY_ENABLE does for Tracy.
 * ---------------------------------------------------------------------- */
#if defined(OPPROF_DISABLE) && !defined(OPPROF_BUILDING_LIBRARY)
#include "opprof_disabled.h"
#endif

#ifdef __cplusplus
}
#endif

#endif /* OPPROF_H */

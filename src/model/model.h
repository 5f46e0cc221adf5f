/* The event model: one list of events that every consumer reads, whether it
 * came from a live session (capture) or from a trace file (import).
 *
 * Producers add threads, events and memory events with the builder calls,
 * then call op_trace_finish(), which sorts, builds the call tree per thread,
 * computes self time, attributes memory and charges device time. */
#ifndef OPPROF_MODEL_MODEL_H
#define OPPROF_MODEL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "model/strtab.h"
#include "opprof_trace.h"
#include "session/handle.h"

typedef struct op_thread {
    int64_t pid, tid;
    uint32_t name;     /* strtab id: thread name ("" when unknown) */
    uint32_t pid_name; /* strtab id: the pid as the file spelled it when not a number */
    int32_t device;    /* -1 for host threads; device index for device streams */
} op_thread;

/* An event is a hot part of 40 bytes that every event has (times, name,
 * place in the call tree, thread, category, flags) and, only for the events
 * that have any, a cold part (op_evx) beside it: shapes, args, stacks, FLOPs,
 * ids, memory and device sums. Most events of a large run have none, so the
 * store costs 40 bytes an event. Read the cold part with op_evx_of(); a
 * producer that sets one asks op_evx_add() for it. */
typedef struct op_event {
    int64_t start_ns, dur_ns;
    int64_t self_ns;          /* computed */
    int32_t parent;           /* computed: index, -1 top level */
    uint32_t name;            /* strtab id */
    uint32_t x;               /* index into the trace's evx + 1, 0 none */
    uint32_t thread : 20;     /* index into threads (op_trace_thread keeps it below OP_MAX_THREADS) */
    uint32_t cat : 4;         /* opprof_category */
    uint32_t flags : 8;       /* OPPROF_EVENT_* and OP_EV_* */
} op_event;

#define OP_MAX_THREADS (1u << 20)

typedef struct op_evx {
    int64_t mem_total;        /* computed: bytes, children included */
    int64_t mem_self;         /* computed */
    int64_t dev_total_ns;     /* computed: device time charged, children included */
    int64_t dev_self_ns;      /* computed */
    int64_t correlation;      /* runtime <-> device link; 0 none */
    int64_t external_id;      /* "External id"; 0 none */
    uint64_t flops;           /* 0 none */
    uint32_t shapes;          /* strtab ids: "[[1, 2], []]", 0 none */
    uint32_t types;           /* "['float', '']", 0 none */
    uint32_t args;            /* extra args as JSON members `"k": v, ...`, 0 none */
    uint32_t stack;           /* index into stacks + 1, 0 none */
    int64_t oncpu_total_ns;   /* computed: CPU time of the samples inside it, children included */
    int64_t oncpu_self_ns;    /* computed: ... of those whose innermost range it is */
} op_evx;

/* Internal event flags, beside the public OPPROF_EVENT_* bits. */
enum {
    OP_EV_OPEN = 1u << 3,     /* still open when a live session was read (a flight recorder's dump):
                                 its duration runs to the read, and a trace writes it as begun only */
    OP_EV_HAS_CORR = 1u << 4, /* correlation is set */
    OP_EV_HAS_EXT = 1u << 5,  /* external_id is set */
    OP_EV_OPENING = 1u << 6,  /* a streamed range's begin: its end comes as a second, complete event */
    OP_EV_BATCH_KEPT = 1u << 7 /* op_trace_batch_out's own mark while it runs */
};

/* In a streamed batch's order (model/stream.h): the item is a memory
 * event's index, not an event's. */
#define OP_ORDER_MEM (1u << 31)

static inline int op_cat_is_launch(int cat)
{
    return cat == OPPROF_CAT_CUDA_RUNTIME || cat == OPPROF_CAT_CUDA_DRIVER;
}

/* op_mem_event.enclosing when the producer does not know it. */
#define OP_MEM_FIND INT32_MIN

typedef struct op_mem_event {
    int64_t ts_ns;
    uint64_t addr;
    int64_t bytes;            /* + allocation, - free */
    int64_t total_allocated;  /* live bytes after it, computed when the producer gives 0 and has none */
    uint32_t thread;
    int32_t op;               /* computed: innermost event open on its thread, -1 none */
    int32_t enclosing;        /* given by a producer that knows it: the event (index when added) open
                               * around it, -1 none; OP_MEM_FIND: the model finds it from the times */
    int8_t device_type;       /* 0 CPU, 1 CUDA (Kineto's values) */
    int8_t device_id;         /* -1 for CPU */
} op_mem_event;

typedef struct op_stack {
    uint32_t *frames;         /* strtab ids, innermost first */
    uint32_t nframes;
} op_stack;

/* The sums of one site on one thread in an aggregating session: what key
 * averages by name need of its events. */
typedef struct op_aggrow {
    uint32_t name;      /* strtab id */
    uint32_t shapes;    /* strtab id of the input shapes (record_shapes), 0 none */
    uint32_t stack;     /* the begins' stack (with_stack), or the enclosing call path (OP_TRACE_PATHS):
                         * index + 1 into stacks, 0 none */
    uint8_t cat;
    uint64_t count;
    int64_t total_ns, self_ns;
    int64_t first_start_ns, first_end_ns; /* the first range: the order of the rows */
    uint64_t first_seq; /* ... its place in the file among the ranges begun (a .pftrace's fold), for ties */
    uint64_t flops;
    int64_t mem, self_mem;
} op_aggrow;

/* A sample of a sampling session (opprof_config.sample_hz): when, on which
 * thread, and the stack it found (leaf first; the leaf frame is the
 * interrupted instruction). */
typedef struct op_sample {
    int64_t ts_ns;
    uint32_t thread;    /* index into threads */
    uint32_t stack;     /* index + 1 into stacks, 0 when every frame was the profiler's */
    uint64_t weight;    /* sampling periods it stands for (>= 1) */
    int64_t cpu_ns;     /* the CPU time it stands for (op_sample_ns) */
    int32_t ev;         /* computed: the innermost range of its thread open then, -1 none */
} op_sample;

/* The CPU time sample s stands for: its thread's CPU clock since the
 * thread's previous sample when the sampler read it, else its periods. */
static inline int64_t op_sample_ns(const op_sample *s, int64_t period_ns)
{
    return s->cpu_ns > 0 ? s->cpu_ns : (int64_t)s->weight * period_ns;
}

/* A trace: the handle the client hands out (session/handle.h) and, behind
 * it, the model that every reader of opprof_trace.h asks for through
 * op_trace_model. */
struct opprof_trace {
    op_trace_head head;       /* first: head.free frees the model */
    op_strtab str;
    op_thread *threads;
    size_t nthreads, cap_threads;
    op_event *ev;
    size_t nev, cap_ev;
    op_evx *evx;              /* the cold parts, in the order producers asked for them */
    size_t nevx, cap_evx;
    op_mem_event *mem;
    size_t nmem, cap_mem;
    op_stack *stacks;
    size_t nstacks, cap_stacks;
    int64_t base_time_ns;     /* wall clock of start_ns == 0 */
    int64_t duration_ns;      /* session length; 0 when unknown */
    int64_t step_num;         /* -1 none */
    double comp_inside_ns;    /* overhead compensation taken out of the sums (0 0: none) */
    double comp_outside_ns;
    uint32_t output_dir;      /* strtab id: the live session's output_dir, where handlers write; 0 none */
    uint64_t dropped;         /* events the capture could not keep */
    /* A streamed trace's filters (opprof_config.trace_min_duration_ns,
     * trace_max_depth): slices kept out of the file, counted in the sums;
     * written into the file when either is set. */
    int64_t filter_min_ns;    /* 0: none */
    uint32_t filter_max_depth; /* 0: none */
    uint64_t filtered;        /* slices left out */
    uint64_t attempted;       /* events the capture was asked for (0 when unknown) */
    op_aggrow *agg;           /* sums of an aggregating session (no events), by thread and site */
    size_t nagg, cap_agg;
    uint64_t agg_free_count;  /* ... memory events outside every range: the [memory] row */
    int64_t agg_free_bytes, agg_free_first_ns;
    uint64_t *dropped_calls;  /* strtab id -> dropped begins of that name (live sessions); NULL none */
    size_t ndropped_calls;    /* entries of dropped_calls */
    uint64_t mem_unknown_frees, mem_double_frees, mem_reallocs; /* live sessions only */
    uint32_t options;         /* OP_TRACE_* */
    uint32_t device_props;    /* strtab id: the devices' "deviceProperties" objects, comma-separated; 0 none */
    /* distributedInfo; dist_rank -1 when the trace has none */
    uint32_t dist_backend;    /* strtab id, 0 none */
    int64_t dist_rank, dist_world;
    opprof_clock_sync clock_start, clock_end;
    op_sample *samples;       /* in time order per thread */
    size_t nsamples, cap_samples;
    int64_t sample_period_ns; /* CPU time a sample stands for; 0: the trace was not sampled */
    uint64_t samples_dropped; /* samples the sampler's buffers could not keep */
    int sample_signal_lost;   /* the signal that sampling used, when the program took it over (sampling
                               * stopped there); 0 */
    uint64_t samples_skipped; /* a file read: its sample events read past (Chrome "ProfileChunk"s,
                               * Perfetto PerfSamples), which the model does not keep */
    int mem_totals_given;     /* the producer set total_allocated (imported traces) */
    int finished;
};

enum {
    OP_TRACE_SHAPES = 1u << 0,   /* input shapes were recorded */
    OP_TRACE_MEMORY = 1u << 1,   /* memory was profiled */
    OP_TRACE_FLOPS = 1u << 2,    /* FLOPs were counted */
    OP_TRACE_STACK = 1u << 3,    /* stacks were recorded */
    OP_TRACE_DEVICE = 1u << 4,   /* device activity exists */
    OP_TRACE_INCOMPLETE = 1u << 5, /* written after a signal, or truncated */
    OP_TRACE_SATURATED = 1u << 6,  /* a sum passed the 64-bit range and is shown at its limit */
    OP_TRACE_STREAMED = 1u << 7,   /* its events went to a streamed file as recorded (model/stream.h) */
    OP_TRACE_PATHS = 1u << 8,      /* its sums' stacks are call paths (enclosing names), not captured stacks */
    OP_TRACE_SAMPLED = 1u << 9     /* its ranges have on-CPU times from samples (op_evx.oncpu_*) */
};

opprof_trace *op_trace_new(void);

/* The collector the analysis library lends the session (session/handle.h,
 * handle.c): every generation a session keeps becomes a model. gate.c
 * lends it, from the file every reader of a trace calls first. */
const op_collector *op_model_collector(void);

/* The model behind a handle: t itself once it holds one; NULL for NULL and
 * for a bare handle (recorded before the analysis library was in the
 * process). Every function of opprof_trace.h that reads a trace asks for
 * it first (gate.c). */
const opprof_trace *op_trace_model(const opprof_trace *t);

/* The same for a function that reports a status: OPPROF_OK for a model
 * and for NULL (which the caller reports in its own words), else fails
 * with OPPROF_E_INVAL naming `who`. */
int op_trace_check(const opprof_trace *t, const char *who);

/* Adds a thread (or finds the one with that pid/tid); returns its index or
 * -1 when out of memory or past OP_MAX_THREADS threads (the reason is set
 * with op_fail). */
int64_t op_trace_thread(opprof_trace *t, int64_t pid, int64_t tid);

/* Room for n events in one block, so that adding them moves nothing: a
 * live session reserves an upper bound from its records (a large block is
 * mapped lazily, so pages not written cost nothing resident), then
 * op_trace_fit_events gives back the address space not used. -1 when out of
 * memory (the trace is unchanged). A trace's first reservation takes the
 * event store's block when it is free (capture/evstore.h: pages written
 * before, by the last trace or the keeper); that block is never shrunk,
 * and an array that outgrows it moves to malloc. */
int op_trace_reserve_events(opprof_trace *t, size_t n);
void op_trace_fit_events(opprof_trace *t);

/* Frees an event array: back to the event store when it is its block. */
void op_trace_free_events(op_event *ev);

/* Appends a zeroed event with the given name and returns it (NULL when out
 * of memory). The pointer is valid until the next append. */
op_event *op_trace_add_event(opprof_trace *t, uint32_t thread, uint32_t name, int cat, int64_t start_ns,
                             int64_t dur_ns);

/* The cold part of e: all zero when it has none. */
static inline const op_evx *op_evx_of(const opprof_trace *t, const op_event *e)
{
    static const op_evx none;
    return e->x ? &t->evx[e->x - 1] : &none;
}

/* The cold part of e for writing, added zeroed when e has none; NULL when
 * out of memory. Valid until the next op_evx_add. */
op_evx *op_evx_add(opprof_trace *t, op_event *e);

/* e's depth in its thread's call tree (0 top level), counted along parents
 * up to UINT16_MAX; the model does not store it. */
uint32_t op_event_depth(const opprof_trace *t, const op_event *e);

/* Appends a zeroed row of sums; NULL when out of memory. */
op_aggrow *op_trace_add_agg(opprof_trace *t);

op_mem_event *op_trace_add_mem(opprof_trace *t, uint32_t thread, int64_t ts_ns, uint64_t addr, int64_t bytes);

/* Adds a stack of frames (strtab ids, innermost first); returns its index + 1
 * for op_event.stack, 0 when out of memory. */
uint32_t op_trace_add_stack(opprof_trace *t, const uint32_t *frames, uint32_t nframes);

/* Adds a copy of stack k of `from` (its frames interned in t); returns its
 * index + 1 in t, 0 when out of memory. */
uint32_t op_trace_copy_stack(opprof_trace *t, const opprof_trace *from, size_t k);

/* Brings m's strings, threads and stacks up to src's, under the same ids
 * (m holds nothing src does not), and copies the fields a trace's writer
 * reads besides the events (options, base time, filters, distributedInfo):
 * m's events may then be written as src's would be. For a writer on another
 * thread than src's producer (export/stream_enc.c). OPPROF_OK,
 * OPPROF_E_NOMEM (m keeps what it had copied), or OPPROF_E_INVAL when m
 * has more strings, threads or stacks than src. */
int op_trace_mirror(opprof_trace *m, const opprof_trace *src);

static inline uint32_t op_trace_intern(opprof_trace *t, const char *s, size_t len)
{
    return op_strtab_intern(&t->str, s, len);
}

/* Sorts events by (start, -end), builds the call tree of each thread and
 * computes every derived field. Call once, after the last add. */
int op_trace_finish(opprof_trace *t);

/* A reader in batches (batch.c): hands fn the trace with every event but
 * the nopen ones *open[k] points to (ranges begun and not yet ended) and
 * every memory event, raw as read (not finished); then leaves in t only
 * those open ones, as events 0..nopen-1 in the order of open, and sets
 * *open[k] = k. Strings, threads and stacks stay. fn returns OPPROF_OK or
 * a failure it has recorded (op_fail), which is returned; OPPROF_E_NOMEM
 * when out of memory. */
typedef int (*op_batch_fn)(opprof_trace *t, void *ctx);
int op_trace_batch_out(opprof_trace *t, uint32_t *const *open, size_t nopen, op_batch_fn fn, void *ctx);

/* Puts t's events in the model's order (by start, the longer first, so
 * that parents precede their children; equal ones in the order they were
 * added) and moves the producer's memory event links (op_mem_event.enclosing)
 * with them (order.c). 0, or -1 when out of memory (the events are left as
 * they were). */
int op_order_events(opprof_trace *t);

/* True for categories that form the host call tree (rows with CPU time).
 * OPPROF_CAT_OTHER events are kept for timelines but are not operators. */
static inline int op_cat_is_host(int cat)
{
    return cat == OPPROF_CAT_CPU_OP || cat == OPPROF_CAT_USER_ANNOTATION || cat == OPPROF_CAT_CUDA_RUNTIME ||
           cat == OPPROF_CAT_CUDA_DRIVER;
}

static inline int op_cat_is_device(int cat)
{
    return cat == OPPROF_CAT_KERNEL || cat == OPPROF_CAT_GPU_MEMCPY || cat == OPPROF_CAT_GPU_MEMSET;
}

#endif

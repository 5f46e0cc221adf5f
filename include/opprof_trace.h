/*
 * opprof_trace.h - an operator profiler for C programs: traces and analysis.
 *
 * What a finished trace offers, organised by concept (sections 1-6, the
 * recording API, are in opprof.h, included here):
 *   7. the event model (a finished trace)  11. configuration from the environment
 *   8. key averages and tables             12. report
 *   9. export                              13. stacks and instrumented functions
 *  10. import                              14. distributed runs
 *                                          15. on demand and the flight recorder
 *
 * Errors as in opprof.h: 0 (OPPROF_OK) or a negative opprof_status, with
 * opprof_last_error() for the detail.
 */
#ifndef OPPROF_TRACE_H
#define OPPROF_TRACE_H

#include "opprof.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================
 * 7. The event model: a finished trace
 *
 * A live session and a trace file on disk give the same model. Events are
 * ordered by (start, -end); parent, depth and self time come from the call
 * tree of each thread.
 * ====================================================================== */

enum {
    OPPROF_EVENT_FORCED_END = 1u << 0, /* closed by stop, or by the end of an outer range */
    OPPROF_EVENT_DEVICE = 1u << 1,     /* a device activity (kernel, memcpy, memset) */
    OPPROF_EVENT_CAPPED = 1u << 2      /* open when the event cap was reached and closed then (with
                                          FORCED_END): what its thread did afterwards was dropped */
};

typedef struct opprof_event {
    const char *name;
    int category;           /* opprof_category */
    uint32_t flags;         /* OPPROF_EVENT_* */
    int64_t pid;
    int64_t tid;
    int64_t start_ns;       /* from the trace's start */
    int64_t dur_ns;
    int64_t self_ns;        /* dur minus the direct children's dur */
    int64_t parent;         /* index of the enclosing event, -1 at top level */
    uint32_t depth;         /* 0 at top level */
    const char *input_shapes; /* "[[5, 3, 224, 224], [64, 3, 7, 7]]", "" without shapes */
    const char *input_types;  /* a JSON array: ["float", "float", ""]; "" without shapes */
    uint64_t flops;           /* 0 when not counted */
    int64_t cpu_memory_usage;      /* bytes allocated minus freed inside, children included */
    int64_t self_cpu_memory_usage; /* the same without children */
    int64_t device_time_ns;        /* device time charged, children included */
    int64_t self_device_time_ns;
    const char *args;              /* other args as JSON object members, `"k": v, ...`: those
                                      given to opprof_begin_args, or read from a trace; "" none */
} opprof_event;

OPPROF_API size_t opprof_trace_event_count(const opprof_trace *t);

/* Fills *out with event i (0 <= i < count). Strings live as long as t. */
OPPROF_API int opprof_trace_event(const opprof_trace *t, size_t i, opprof_event *out);

/* Ranges summed without events (opprof_config.aggregate), 0 for a trace
 * of events. */
OPPROF_API uint64_t opprof_trace_aggregated(const opprof_trace *t);

/* 1 when the session wrote this trace's events to its stream_trace file
 * as it recorded (opprof_config.stream_trace): the trace holds sums, as an
 * aggregated one does. Else 0. */
OPPROF_API int opprof_trace_streamed(const opprof_trace *t);

/* 1 when the trace's sums had the instrumentation's cost taken out
 * (opprof_config.overhead_inside_ns and overhead_outside_ns), with the
 * figures applied in *inside_ns and *outside_ns (either may be NULL); else
 * 0 and zeros. */
OPPROF_API int opprof_trace_overhead_compensation(const opprof_trace *t, double *inside_ns, double *outside_ns);

/* Events that were attempted but not recorded (cap reached). */
OPPROF_API uint64_t opprof_trace_dropped(const opprof_trace *t);

/* The names with the most calls, recorded and dropped together (a live
 * session counts its dropped begins by name), most first: fills up to n
 * names (valid as long as t) and their calls; returns how many. Ties go
 * to the name first seen. For saying what to leave out when the cap was
 * reached. */
OPPROF_API size_t opprof_trace_top_calls(const opprof_trace *t, size_t n, const char **names, uint64_t *calls);

/* When t dropped events, writes a note to f, each line prefixed "who: ":
 * how many were dropped, the five names with the most calls, then
 * max_option (e.g. "--max-events") as the way to raise the cap and, when
 * exclude_option is not NULL, that option with the five names as shell-quoted
 * opprof_function_exclude patterns that leave them out. Writes nothing when
 * nothing was dropped. 0, or OPPROF_E_IO. */
OPPROF_API int opprof_trace_drop_note(const opprof_trace *t, const char *who, const char *max_option,
                                      const char *exclude_option, FILE *f);

/* Samples (opprof_config.sample_hz): how many the trace holds, and the
 * CPU time each stands for in ns (0: the trace was not sampled). */
OPPROF_API size_t opprof_trace_sample_count(const opprof_trace *t);
OPPROF_API int64_t opprof_trace_sample_period_ns(const opprof_trace *t);

/* The samples of t as a trace of sums by function, for key averages,
 * tables and folded stacks (OPPROF_STACKS_CALLS) as any trace of sums:
 * a row per function and call stack (its callers, as function names;
 * inlined functions are functions of their own), whose total time is the
 * samples with the function on the stack and self time those with it at
 * the leaf, each sample counted as the sampling periods it stands for (1
 * and the timer's overruns: a CPU-time timer fires at the kernel's tick);
 * "calls" are those periods. threads: NULL or "" for every thread, else comma-separated
 * thread ids or shell patterns on thread names. within: NULL for every
 * sample, else only those taken inside a range of that name (at any depth):
 * what inside an operator is hot. OPPROF_E_INVAL when t holds
 * no samples' sampling (sample_hz was 0). Free *out with opprof_trace_free. */
OPPROF_API int opprof_trace_functions(const opprof_trace *t, const char *threads, const char *within,
                                      opprof_trace **out);

/* When the samples are not the whole story, a line to f prefixed "who: ":
 * samples the sampler's buffers could not keep, or the program that took
 * the sampling signal over (sampling stopped there). 0, or OPPROF_E_IO. */
OPPROF_API int opprof_trace_sample_note(const opprof_trace *t, const char *who, FILE *f);

/* 1 when the trace was cut short (opprof_stop_incomplete, e.g. written on a
 * signal; or read from a file that says "incomplete"), else 0. */
OPPROF_API int opprof_trace_incomplete(const opprof_trace *t);

/* Wall-clock time of the trace's start, nanoseconds since the Unix epoch. */
OPPROF_API int64_t opprof_trace_base_time_ns(const opprof_trace *t);

/* The step number the trace was made at (on_trace_ready), -1 when none. */
OPPROF_API int64_t opprof_trace_step_num(const opprof_trace *t);

/* opprof_trace_free is in opprof.h: a program that only records frees traces too. */

/* What a session saw of memory (opprof_trace_memory_stats). */
typedef struct opprof_memory_stats {
    uint64_t allocations;     /* memory events with a positive size */
    uint64_t frees;           /* memory events with a negative size */
    int64_t bytes_allocated;
    int64_t bytes_freed;      /* positive */
    int64_t peak_bytes;       /* highest live total, relative to the session's start */
    int64_t peak_time_ns;     /* when it was reached */
    const char *peak_op;      /* the operator the peak allocation counted for, "[memory]" outside any */
    int64_t final_bytes;      /* live total at the end */
    uint64_t unknown_frees;   /* frees of blocks not allocated in the session */
    uint64_t double_frees;    /* frees of blocks already freed */
    uint64_t reallocs;
} opprof_memory_stats;

OPPROF_API int opprof_trace_memory_stats(const opprof_trace *t, opprof_memory_stats *out);

enum { OPPROF_FORMAT_CSV = 0, OPPROF_FORMAT_JSON = 1 };

/* Live bytes over time (the analogue of PyTorch's export_memory_timeline):
 * one row per memory event with its time, address, size, the live total
 * after it, its thread and the operator it counted for. */
OPPROF_API int opprof_memory_timeline_write(const opprof_trace *t, FILE *f, int format);

/* ======================================================================
 * 8. Key averages and tables
 * ====================================================================== */

/* Events grouped by name (ProfilerStep#N as "ProfilerStep*"), as PyTorch's
 * key_averages() does: one row per group with its count and summed times,
 * memory and FLOPs. Device activities (kernels, copies) are rows of their
 * own with CPU times 0; memory events that fall inside no operator form a
 * "[memory]" row. Rows come in the order of each group's first event, until
 * sorted. A key averages object owns its strings: it may outlive the trace. */
typedef struct opprof_key_averages opprof_key_averages;

typedef struct opprof_avg_options {
    int group_by_input_shape; /* also split groups by input shapes */
    int group_by_stack_n;     /* also split by the top N stack frames; 0: no */
    int top_level_only;       /* only events without a parent */
} opprof_avg_options;

typedef struct opprof_avg_row {
    const char *name;
    const char *input_shapes; /* "[[5, 3], []]" when grouped by shape ("[]" for none), else "" */
    const char *stack;        /* the top N frames, innermost first, one per line; "" when none */
    uint64_t count;
    int64_t self_cpu_time_total_ns, cpu_time_total_ns;
    int64_t self_device_time_total_ns, device_time_total_ns;
    int64_t cpu_memory_usage, self_cpu_memory_usage; /* bytes: allocated minus freed */
    uint64_t flops;
} opprof_avg_row;

/* Groups the events of a finished trace into *out (free it with
 * opprof_key_averages_free). opt NULL: group by name only.
 * C gives a typedef and a function one namespace, so the function is
 * opprof_key_averages_new and the macro keeps the call spelled
 * opprof_key_averages(t, opt, &ka) beside the type opprof_key_averages. */
OPPROF_API int opprof_key_averages_new(const opprof_trace *t, const opprof_avg_options *opt,
                                       opprof_key_averages **out);
#define opprof_key_averages(t, opt, out) opprof_key_averages_new((t), (opt), (out))

/* Sorts the rows by a key, largest first, keeping the order of equal rows
 * (Python's sorted(reverse=True)). Keys: cpu_time (average), cpu_time_total,
 * self_cpu_time_total, cpu_memory_usage, self_cpu_memory_usage, flops, count,
 * cuda_time, cuda_time_total, self_cuda_time_total, and device_time,
 * device_time_total, self_device_time_total for the same three. An unknown
 * key is OPPROF_E_INVAL; opprof_last_error() lists the valid ones. */
OPPROF_API int opprof_key_averages_sort(opprof_key_averages *ka, const char *sort_by);

OPPROF_API size_t opprof_key_averages_count(const opprof_key_averages *ka);

/* Fills *out with row i; its strings live as long as ka. */
OPPROF_API int opprof_key_averages_row(const opprof_key_averages *ka, size_t i, opprof_avg_row *out);

OPPROF_API void opprof_key_averages_free(opprof_key_averages *ka);

/* Names are user data: a trace can name an operator with ESC sequences, line
 * breaks or bidi overrides. Tables and CSV show control characters as \n \r
 * \t or \xNN (a NUL read from a trace's \u0000 as \x00), the C1 controls
 * U+0080-009F and U+202A-202E, U+2066-2069 as \uXXXX; other text,
 * backslashes included, is shown as it is. opprof_escape_name writes that form of name into out (cap bytes,
 * NUL-terminated, cut between characters) and returns the length the whole
 * of it needs, as snprintf does. */
OPPROF_API size_t opprof_escape_name(const char *name, char *out, size_t cap);

/* One CSV field (escaped as above, quoted when it holds a comma or a quote)
 * and one JSON string (quotes included; control characters and a NUL as
 * \u00XX), written to f: 0, or -1 on a stream error. */
OPPROF_API int opprof_write_csv_field(FILE *f, const char *s);
OPPROF_API int opprof_write_json_string(FILE *f, const char *s);

/* The text of PyTorch 1.13's key_averages().table(sort_by=..., row_limit=...),
 * byte for byte: sort_by NULL keeps the rows' order, row_limit -1 prints all.
 * The rows of ka are not reordered. When the trace dropped events, one line
 * after the footer says how many. */
OPPROF_API int opprof_table_write(const opprof_key_averages *ka, const char *sort_by, int row_limit, FILE *f);

/* opprof_table_write with more columns than PyTorch's (OPPROF_COLUMNS_*
 * bits; 0 writes exactly opprof_table_write's table). */
enum {
    /* A sampled trace's (opprof_config.sample_hz) ranges: "Self On-CPU" and
     * "On-CPU total", the CPU time of the samples inside the operator's
     * ranges (the innermost range, or any), and "Wait total", its wall time
     * (CPU total) less its on-CPU time, after "CPU time avg". Sort keys
     * self_oncpu_time_total, oncpu_time_total, wait_time_total. */
    OPPROF_COLUMNS_ONCPU = 1
};
OPPROF_API int opprof_table_write_columns(const opprof_key_averages *ka, const char *sort_by, int row_limit,
                                          unsigned columns, FILE *f);

/* Row i's on-CPU times (OPPROF_COLUMNS_ONCPU): 0 for a trace not sampled. */
OPPROF_API int opprof_key_averages_oncpu(const opprof_key_averages *ka, size_t i, int64_t *oncpu_total_ns,
                                         int64_t *self_oncpu_ns);

/* The same text in a NUL-terminated string to free(). */
OPPROF_API int opprof_table_string(const opprof_key_averages *ka, const char *sort_by, int row_limit, char **out);

/* The rows in their current order as CSV (a header line, RFC 4180 quoting)
 * or as a JSON array of objects, with the fields name, count,
 * self_cpu_time_total_us, cpu_time_total_us, self_device_time_total_us,
 * device_time_total_us (microseconds, 3 decimals), cpu_memory_usage,
 * self_cpu_memory_usage (bytes), flops, input_shapes (as opprof_avg_row
 * has it: the shapes when grouped by them, else ""), and, when grouped by
 * stack, stack (the top N frames, innermost first, one per line), so that
 * rows of one name stay apart. */
OPPROF_API int opprof_key_averages_write_csv(const opprof_key_averages *ka, FILE *f);
OPPROF_API int opprof_key_averages_write_json(const opprof_key_averages *ka, FILE *f);

/* ======================================================================
 * 9. Export
 *
 * Chrome trace JSON in Kineto's dialect, as torch.profiler writes it, so
 * chrome://tracing, Perfetto, speedscope, TensorBoard and HTA open it: "X"
 * events (cat "cpu_op", "user_annotation", ...) with ts and dur in
 * microseconds to the nanosecond, numeric pid and tid, args "External id",
 * "Ev Idx", and "Input Dims" / "Input type" / "flops" when recorded;
 * "[memory]" instant events; process and thread names; and at top level
 * "droppedEvents", the events the profiler could not keep.
 *
 * Files are replaced atomically: the text goes to a temporary file in the
 * same directory, which is synced and renamed over the target. On failure
 * (unwritable directory, full disk, file size limit) the call returns
 * OPPROF_E_IO with a detail naming the path and the system's reason; the
 * previous file is untouched and no temporary file is left.
 * ====================================================================== */

typedef struct opprof_export_options { /* a struct that grows (opprof.h, at the top) */
    size_t struct_size; /* sizeof(opprof_export_options) in the program: set by opprof_export_options_init */
    int gzip;           /* -1 (default): when the path ends in ".gz"; 0: never; 1: always */
    int gzip_level;     /* 1 (default: fastest) .. 9; also the zstd (or zlib) level of a .pftrace's batches */
    int fsync;          /* 1 (default): on disk before it replaces the old file */
    int64_t rank;       /* "distributedInfo" rank; -1 (default): RANK, OMPI_COMM_WORLD_RANK or
                           PMI_RANK from the environment, no distributedInfo when none is set */
    int64_t world_size; /* -1 (default): WORLD_SIZE, OMPI_COMM_WORLD_SIZE or PMI_SIZE */
} opprof_export_options;

/* Defaults in the first struct_size bytes; opprof_export_options_init passes the program's sizeof. */
OPPROF_API int opprof_export_options_init_size(opprof_export_options *o, size_t struct_size);
static inline void opprof_export_options_init(opprof_export_options *o)
{
    opprof_export_options_init_size(o, sizeof *o);
}

/* Writes t to path (gzip-compressed when it ends in ".gz"). A path ending
 * in ".pftrace" or ".pftrace.gz" gets Perfetto's native protobuf format
 * instead (perfetto.protos.Trace): a track per process and thread, slices
 * as begin/end TrackEvents with interned names and delta timestamps on one
 * sequence per thread, shapes, types, FLOPs and ids as debug annotations,
 * "[memory]" instants and a "Total Allocated" counter track, flows from
 * launches to device activity, packed in compressed batches
 * (TracePacket.zstd_compressed_packets, zstd frames, as Perfetto's own
 * service writes them; zlib streams in compressed_packets, which
 * trace processors older than zstd's field read, when the environment has
 * OPPROF_PFTRACE_COMPRESS=zlib; plain packets when it has
 * OPPROF_PFTRACE_COMPRESS=0, and
 * inside a .pftrace.gz). opprof_trace_load reads it back with the same key
 * averages as the JSON. The same holds for the _ex form and for
 * the trace handler's file names. */
OPPROF_API int opprof_export_chrome_trace(const opprof_trace *t, const char *path);

/* The same with options (NULL: defaults; OPPROF_E_INVAL for options not
 * set up with opprof_export_options_init). */
OPPROF_API int opprof_export_chrome_trace_ex(const opprof_trace *t, const char *path, const opprof_export_options *o);

/* To an open stream (stdout, a pipe): not atomic; gzip only when o->gzip is 1. */
OPPROF_API int opprof_export_chrome_trace_stream(const opprof_trace *t, FILE *f, const opprof_export_options *o);

/* Reads the trace at in ("-": standard input; any format opprof_trace_load
 * reads) and writes it to out in the format out's name says (.json,
 * .json.gz, .pftrace, .pftrace.gz), atomically as the exports above; o as
 * theirs (NULL: defaults). Streamed: events are written in batches of about
 * a million as they are read, so memory holds one batch, the ranges still
 * open and each distinct name, thread and stack, whatever the file's size.
 * Events keep their times (the file's own origin and baseTimeNanoseconds),
 * names, categories, shapes, types, args, FLOPs, ids and stacks; memory
 * events, thread names, droppedEvents, incomplete and distributedInfo come
 * along. A "B"/"E" pair is written as one complete event. Errors as the
 * reader's and the export's; out is untouched on failure. A .pftrace of a
 * file that gives baseTimeNanoseconds only after more than a batch of
 * events (Kineto writes it at the end) keeps the file's own time origin. */
OPPROF_API int opprof_trace_convert(const char *in, const char *out, const opprof_export_options *o);

/* Writes a file atomically with any of the stdio writers (a table, CSV or
 * JSON rows, the memory timeline, folded stacks): write_fn writes into f, a
 * temporary file in path's directory, which replaces path only when
 * write_fn returned OPPROF_OK and everything reached the disk. A failure
 * leaves the previous file untouched and no temporary file, and returns
 * write_fn's status or OPPROF_E_IO with a detail naming the path and the
 * system's reason.
 *
 *     static int timeline(FILE *f, void *t) { return opprof_memory_timeline_write(t, f, OPPROF_FORMAT_CSV); }
 *     opprof_write_file("memory.csv", timeline, trace);                          */
typedef int (*opprof_write_fn)(FILE *f, void *ctx);
OPPROF_API int opprof_write_file(const char *path, opprof_write_fn write_fn, void *ctx);

/* The built-in on_trace_ready handler, torch.profiler.tensorboard_trace_handler:
 * each ready trace goes to dir as "{worker}.{time_ns}.pt.trace.json[.gz]",
 * worker defaulting to "{hostname}_{pid}"; the directory is made when
 * missing. Optionally it prints the trace's key-averages table.
 *
 *     opprof_trace_handler h;
 *     opprof_trace_handler_init(&h, "log", NULL, 0);
 *     cfg.on_trace_ready = opprof_trace_handler_ready;
 *     cfg.user = &h;
 *
 * The struct (one that grows: opprof.h, at the top) holds what the caller
 * sets. A failure cannot be returned through the callback: it is printed on
 * stderr and kept for the functions below, which report what it did. */
typedef struct opprof_trace_handler {
    size_t struct_size;   /* sizeof(opprof_trace_handler) in the program: set by opprof_trace_handler_init */
    uint64_t state_[384]; /* the library's: its results and worker name, kept between traces */
    char dir[1024];       /* "": the session's output_dir, else "." */
    char worker[256];     /* "": {hostname}_{pid}, fixed at the first trace */
    char file_name[256];  /* when set: this name instead, replaced at each trace unless it has
                             {step} (the trace's opprof_trace_step_num) or {time} (ns since the
                             epoch), which give each trace a file of its own */
    int use_gzip;         /* append ".gz" and compress */
    int table_only;       /* write no file, only print the table */
    int print_table;      /* also print the trace's table */
    char sort_by[64];     /* its sort key ("": the table's default) */
    int row_limit;        /* its rows, -1 all (default 100, as torch) */
    FILE *table_out;      /* NULL: stdout */
    const opprof_export_options *export_options; /* NULL: the defaults; else it must outlive the handler */
} opprof_trace_handler;

/* Sets h up: dir (NULL or "": the session's output_dir), worker (NULL: the
 * default), gzip. OPPROF_E_INVAL when a name does not fit. The _size form
 * sets up the first struct_size bytes (the inline one passes sizeof). */
OPPROF_API int opprof_trace_handler_init_size(opprof_trace_handler *h, size_t struct_size, const char *dir,
                                              const char *worker, int use_gzip);
static inline int opprof_trace_handler_init(opprof_trace_handler *h, const char *dir, const char *worker, int gz)
{
    return opprof_trace_handler_init_size(h, sizeof *h, dir, worker, gz);
}

/* The callback itself: pass it as on_trace_ready with user = the handler. */
OPPROF_API void opprof_trace_handler_ready(const opprof_trace *trace, void *handler);

/* What it did: the status of its last trace (0, or the failure; OPPROF_E_INVAL
 * for a handler not set up), that failure's detail ("" after a success), the
 * file written or attempted last, the traces written (not table_only ones).
 * The strings stay valid until its next trace. */
OPPROF_API int opprof_trace_handler_status(const opprof_trace_handler *h);
OPPROF_API const char *opprof_trace_handler_last_error(const opprof_trace_handler *h);
OPPROF_API const char *opprof_trace_handler_last_path(const opprof_trace_handler *h);
OPPROF_API unsigned opprof_trace_handler_traces_written(const opprof_trace_handler *h);

/* ======================================================================
 * 10. Import
 *
 * Chrome trace files (ours, PyTorch's legacy and Kineto traces, any tool's)
 * become the same event model a live session gives, so every table and
 * export works on them. The input is a JSON array of events or an object
 * with "traceEvents"; gzip is recognised by its magic bytes. Perfetto's
 * protobuf traces (opprof's .pftrace, or any with TrackEvent slices on
 * thread tracks) are read too: by the name (.pftrace, .pftrace.gz) or, for
 * stdin and buffers, by their first bytes; their errors have the same form,
 * OFFSET counting in the uncompressed protobuf. It is read in
 * chunks: memory grows with the events kept, not with the file.
 *
 * Rows follow PyTorch: complete ("X") events of cat cpu_op,
 * user_annotation, cuda_runtime, cuda_driver (or no cat) are host events;
 * kernel, gpu_memcpy, gpu_memset are device events, charged to the operator
 * that launched them (args.correlation, else args["External id"]);
 * "[memory]" instant events give memory; args "Input Dims", "Input type" and
 * "flops" give shapes, types and FLOPs. Other events are skipped.
 * String pids and tids get numbers no numeric id in the file uses. Times are
 * rebased so the earliest kept event starts at 0; opprof_trace_base_time_ns()
 * is then baseTimeNanoseconds (0 when absent) plus that earliest ts.
 *
 * Malformed input of any kind fails with OPPROF_E_PARSE (a corrupt or
 * truncated gzip stream too) and opprof_last_error() says
 * "PATH: byte OFFSET: what is wrong", OFFSET counting from 0 in the JSON
 * text (in the compressed bytes for a gzip error). It never crashes, and
 * nesting is bounded (256 levels). A single string or number longer than
 * 256 MiB (the most the reader holds of one token, however much a file or a
 * gzip stream claims) is refused with OPPROF_E_RANGE. A member given twice
 * counts once, the last, as in Python's json ("args" too, whole), but a
 * second "traceEvents" array is refused; a negative duration is an empty
 * range. opprof's own "droppedEvents" and "incomplete" are read back
 * (opprof_trace_dropped, opprof_trace_incomplete).
 * ====================================================================== */

/* Reads the trace at path ("-": standard input) into *out (free it with
 * opprof_trace_free). OPPROF_E_NOT_FOUND / OPPROF_E_IO when it cannot be
 * read, OPPROF_E_PARSE when it is not a trace. *out is NULL on failure. */
OPPROF_API int opprof_trace_load(const char *path, opprof_trace **out);

/* The same from memory (len bytes, gzip'd or not); messages name it
 * "<buffer>". */
OPPROF_API int opprof_trace_load_buffer(const void *buf, size_t len, opprof_trace **out);

/* opprof_trace_load that refuses a trace with more than max_events events
 * (operators, device activity and memory events together; 0: no limit)
 * with OPPROF_E_RANGE as soon as the reader meets event max_events + 1, so
 * an oversized input is never held whole. */
OPPROF_API int opprof_trace_load_max(const char *path, uint64_t max_events, opprof_trace **out);

/* opprof_trace_load_max keeping only what opprof_key_averages(t, opt)
 * needs, which then gives the same table to the byte. A .pftrace (by its
 * name, not stdin) is folded into sums by name (and input shapes) as it is
 * read, in memory bounded by its distinct names and its deepest nesting,
 * not by its slices: t then holds no events (opprof_trace_aggregated
 * counts its calls), only the sums and what the file's metadata says
 * (opprof_trace_dropped, opprof_trace_incomplete). Where the sums need the
 * whole model (JSON, stdin, memory events, device activity, a thread's
 * slices on two tracks, times that go back on a track, top_level_only,
 * group_by_stack_n) it is the model, read as opprof_trace_load_max reads
 * it; errors and max_events are the same either way. OPPROF_READ_FOLD=0
 * in the environment always reads the model. */
OPPROF_API int opprof_trace_load_table(const char *path, uint64_t max_events, const opprof_avg_options *opt,
                                       opprof_trace **out);

/* ======================================================================
 * 11. Configuration from the environment
 *
 * Profiling without code changes, as Accelerate's ProfileKwargs: a program
 * calls opprof_config_from_env once and starts a session when it says so.
 * libopprof_instrument.so, preloaded or linked, does it for any program: its
 * session's traces are written at exit, and on SIGINT or SIGTERM (marked
 * incomplete) before the program's own handling of the signal
 * (preload/autosession.c). Variables (booleans take 1/0, true/false,
 * yes/no, on/off):
 *
 *   OPPROF_ENABLE            on or off outright; by default profiling is on
 *                            when any variable below is set
 *   OPPROF_ACTIVITIES        cpu | cuda | cpu,cuda
 *   OPPROF_SCHEDULE          skip_first=10,wait=5,warmup=1,active=3,repeat=2
 *                            (and skip_first_wait=1)
 *   OPPROF_RECORD_SHAPES     record input shapes
 *   OPPROF_PROFILE_MEMORY    record allocations
 *   OPPROF_WITH_STACK        record call stacks
 *   OPPROF_WITH_FLOPS        count FLOPs
 *   OPPROF_OUTPUT_TRACE_DIR  the trace is written there as profile_{rank}.json;
 *                            with a schedule each cycle's as
 *                            profile_{rank}.step{N}.{time_ns}.pt.trace.json
 *                            (N: the step it was handed out at, the one
 *                            after its last: opprof_trace_step_num)
 *   OPPROF_USE_GZIP          write them .gz
 *   OPPROF_ROW_LIMIT         print the key-averages table of each ready trace
 *                            (at exit without a schedule) with this many rows,
 *                            -1 for all (default 10)
 *   OPPROF_SORT_BY           its sort key (default cpu_time_total; setting
 *                            either prints the table)
 *   OPPROF_MAX_EVENTS        cap on recorded events per trace
 *   OPPROF_MAX_STACK_DEPTH   frames per stack with OPPROF_WITH_STACK (1..128)
 *   OPPROF_SAMPLE            sample stacks: on (1 kHz) or samples per second
 *                            of CPU time (opprof_config.sample_hz)
 *   OPPROF_SAMPLE_UNWIND     auto, fp or libunwind (opprof_config.sample_unwind)
 *   OPPROF_INLINE            0: stacks without inlined frames
 *                            (opprof_stack_inline)
 *   OPPROF_SEPARATE_DEBUGINFO  1: lines and inlined frames also from
 *                            separate debug files
 *                            (opprof_stack_separate_debuginfo)
 *   OPPROF_CONFIG            all of them in one string, keys in lower case
 *                            without the prefix, separated by ';':
 *                            "record_shapes=1;schedule=wait=1,warmup=1,active=2;
 *                             output_trace_dir=traces"
 *                            (a variable of its own wins over the same key here)
 *
 * The rank is RANK, else OMPI_COMM_WORLD_RANK, else PMI_RANK, else the pid.
 * An invalid value is reported on stderr and in the detail, naming the
 * variable, the value and the valid choices; profiling then stays off.
 * ====================================================================== */

typedef struct opprof_env {
    int enabled;                 /* 1: start a session with the config */
    int64_t rank;
    opprof_trace_handler handler; /* the config's on_trace_ready when it has work; stays last: it grows */
} opprof_env;

/* Sets up *cfg and *env from the environment (the _size forms: their first
 * cfg_size and env_size bytes; the inline ones pass sizeof). OPPROF_OK
 * (env->enabled says whether to profile), or OPPROF_E_INVAL for an invalid
 * value, with env->enabled 0 and *cfg at its defaults. env must outlive the
 * session: cfg->user points to it. */
OPPROF_API int opprof_config_from_env_size(opprof_config *cfg, size_t cfg_size, opprof_env *env, size_t env_size);

/* The same from a string in OPPROF_CONFIG's form, ignoring the environment
 * (but for the rank). */
OPPROF_API int opprof_config_from_string_size(opprof_config *cfg, size_t cfg_size, opprof_env *env, size_t env_size,
                                              const char *settings);
/* Measures what one instrumented call costs, for overhead compensation
 * (opprof_config.overhead_inside_ns and overhead_outside_ns): call(ctx)
 * must make one recorded call the way the program's are made (e.g. the
 * -finstrument-functions hooks around an empty function), and bare(ctx)
 * the same call without the instrumentation. Short sessions of cfg's kind
 * (sums when cfg->aggregate, else records; no outputs) time blocks of
 * calls against blocks of bare calls, and read the recorded duration of
 * the calls: the fastest block of several gives each figure. OPPROF_OK
 * with both figures set (each at least 0), OPPROF_E_ACTIVE while a session
 * is active, or the failure of a session or of the table (e.g. call
 * recorded nothing: OPPROF_E_INVAL). */
OPPROF_API int opprof_calibrate_overhead(const opprof_config *cfg, void (*call)(void *ctx), void (*bare)(void *ctx),
                                         void *ctx, double *inside_ns, double *outside_ns);

static inline int opprof_config_from_env(opprof_config *cfg, opprof_env *env)
{
    return opprof_config_from_env_size(cfg, sizeof *cfg, env, sizeof *env);
}
static inline int opprof_config_from_string(opprof_config *cfg, opprof_env *env, const char *settings)
{
    return opprof_config_from_string_size(cfg, sizeof *cfg, env, sizeof *env, settings);
}

/* ======================================================================
 * 12. Report
 *
 * One self-contained HTML file per run: data, script and style inline, no
 * network, opens from file://. Views: overview, operators (key averages),
 * timeline (flame chart of every thread and device stream), memory, devices,
 * and, with two traces, the per-operator diff.
 * ====================================================================== */

typedef struct opprof_report_options {
    const char *title;           /* the page's title; NULL: "opprof report" */
    const char *label_a;         /* how the page names trace a (e.g. its file); NULL: "trace" ("base" with b) */
    const char *label_b;         /* trace b; NULL: "test" */
    const char *const *config;   /* the run's configuration for the overview: key, value, key, value, ...,
                                    NULL; NULL for none */
} opprof_report_options;

/* Writes the report of trace a to path (atomically: a temporary file beside
 * it, then a rename). With b not NULL the page compares b against a. opt may
 * be NULL. Names and arguments are user data: the page shows them as text
 * and never runs them. */
OPPROF_API int opprof_report_write(const opprof_trace *a, const opprof_trace *b, const opprof_report_options *opt,
                                   const char *path);

/* ======================================================================
 * 13. Stacks and instrumented functions
 *
 * With with_stack, the call stack of each operator is taken when it begins
 * (libunwind; the cost is about one clock read per frame), kept once per
 * distinct stack, and turned into names after the session (libdw). A frame
 * reads "FILE(LINE): FUNC", the form PyTorch gives Python frames, with one
 * frame per function inlined at a call; without line information it is
 * "MODULE: FUNC", without a symbol "MODULE(+0xOFFSET): ??". Frames of
 * opprof's own API are left out; max_stack_depth counts the frames taken
 * (at most 128).
 * ====================================================================== */

/* The frames of event i's stack (0 when it has none). */
OPPROF_API unsigned opprof_trace_event_stack_depth(const opprof_trace *t, size_t i);

/* Frame k of event i's stack, 0 innermost; NULL past the end. The string
 * lives as long as t. */
OPPROF_API const char *opprof_trace_event_frame(const opprof_trace *t, size_t i, unsigned k);

/* Where a folded line's frames come from. */
enum {
    OPPROF_STACKS_CALLS = 0,    /* the captured call stack (events without one are left out) */
    OPPROF_STACKS_OPERATORS = 1 /* the enclosing operators: the operator call tree */
};

/* PyTorch's export_stacks(path, metric): flame-graph input in the folded
 * format that FlameGraph (flamegraph.pl) and speedscope read, one line per
 * distinct stack, in order of first appearance:
 * "root;...;innermost;OP_NAME VALUE". Frames are root first and the
 * operator's name comes last (PyTorch stops at the calling line); ' ', ';',
 * tab and newline in a frame become '_'; VALUE is the exact nanoseconds of
 * the stack's events added up, then truncated to microseconds (PyTorch
 * truncates each event, so sub-microsecond leaves vanish), and lines whose
 * value is 0 are left out. metric: "self_cpu_time_total" (NULL), or "self_cuda_time_total"
 * / "self_device_time_total" for device time. The file is replaced
 * atomically, as by opprof_write_file. */
OPPROF_API int opprof_export_stacks(const opprof_trace *t, const char *path, const char *metric);

/* The same to a stream, with the frames of OPPROF_STACKS_CALLS or
 * OPPROF_STACKS_OPERATORS (for instrumented functions, whose call tree is
 * the operator tree, no stack capture is needed). */
OPPROF_API int opprof_write_stacks(const opprof_trace *t, FILE *f, const char *metric, int frames);

/* The site of the function whose entry address is fn: what the hooks of
 * -finstrument-functions (libopprof_instrument) record each function under.
 * Named by its symbol, with its source file and line where debug information
 * exists; made on first use (a lock and a symbol lookup, a few microseconds)
 * and kept for the life of the process: cache the pointer. NULL when the
 * function is excluded (opprof_function_exclude), and for a NULL fn. */
OPPROF_API const opprof_site *opprof_function_site(const void *fn);

/* Functions to leave out: a comma-separated list of shell patterns matched
 * against the function's name ("tiny_*,vec_add"), or, prefixed with
 * "file:", against its source file's path or base name ("file:*.h" leaves
 * out every function defined in a header). Replaces the list. Decisions are
 * made once per function and kept, so set the list before the first
 * instrumented call; until it is set, OPPROF_EXCLUDE in the environment
 * gives it. */
OPPROF_API int opprof_function_exclude(const char *patterns);

/* Whether stacks (samples, with_stack) show each function inlined at an
 * address as a frame of its own (1, the default: "FILE(LINE): FUNC" of the
 * inlined function, then its caller at the call site) or only the function
 * the machine code belongs to, its symbol (0: what perf report shows, for
 * comparing with it). Process-wide, for stacks symbolized from then on;
 * until it is called, OPPROF_INLINE=0 in the environment gives 0. */
OPPROF_API int opprof_stack_inline(int on);

/* Whether source lines and inlined frames are also read from a module's
 * separate debug file (a -dbg/-dbgsym package under /usr/lib/debug, a
 * .gnu_debuglink beside it). Off by default: such a module is named from
 * its symbol table, since opening separate, compressed DWARF inflates all of
 * it at once (libc6-dbg: 70-100 ms of CPU, more than a sampled run's sampling
 * costs), and names then do not depend on the -dbg packages a machine has.
 * A module with DWARF in its own file always gets lines and inlined frames.
 * Process-wide, for modules first named from then on; until it is called,
 * OPPROF_SEPARATE_DEBUGINFO=1 in the environment gives 1. */
OPPROF_API int opprof_stack_separate_debuginfo(int on);

/* ======================================================================
 * 14. Distributed runs
 *
 * A job on many ranks (processes, possibly on many machines) gives one trace
 * per rank. Each carries distributedInfo: the backend, its rank and the
 * world size, and the offset of its clock to rank 0's, measured when the
 * session starts and again when it ends (so that drift is known), each with
 * its uncertainty. libopprof_mpi (mpi/, built when MPI is found) fills it in
 * over MPI and records MPI calls as operators; any other launcher may set it
 * with opprof_set_distributed_info.
 *
 * opprof_ranks_merge puts the ranks' traces on rank 0's clock in one trace,
 * one process per rank (pid = rank); opprof_ranks_report compares them:
 * operators across ranks, time waiting in collectives, the rank that arrived
 * last at each collective (the straggler), and how much communication
 * overlapped computation. Collectives are matched across ranks by their
 * args "Process Group Name" and "Seq", as Kineto writes them.
 * ====================================================================== */

/* One clock comparison with rank 0, by round trips (the NTP estimate of the
 * fastest of several exchanges). */
typedef struct opprof_clock_sync {
    int valid;              /* 0: not measured */
    int64_t at_ns;          /* when: this rank's wall clock, ns since the epoch */
    int64_t offset_ns;      /* rank 0's clock minus this rank's, then */
    int64_t uncertainty_ns; /* the true offset lies within offset_ns +- this (half the round trip) */
} opprof_clock_sync;

typedef struct opprof_distributed_info {
    const char *backend;    /* "mpi", "nccl", ...; NULL or "" when unknown */
    int64_t rank;           /* -1: not part of a distributed run */
    int64_t world_size;     /* -1 when unknown */
    opprof_clock_sync clock_start, clock_end;
} opprof_distributed_info;

/* Not distributed: rank and world size -1, no clock measurements. */
OPPROF_API void opprof_distributed_info_init(opprof_distributed_info *d);

/* Process-wide: every trace a session makes from now on carries a copy of
 * *d (the backend string is copied). NULL forgets it. */
OPPROF_API int opprof_set_distributed_info(const opprof_distributed_info *d);

/* What the process-wide setting is now. */
OPPROF_API int opprof_get_distributed_info(opprof_distributed_info *out);

/* The trace's distributedInfo (from its session, or read from its file;
 * strings live as long as t). OPPROF_E_NOT_FOUND, with *out initialised,
 * when it has none. */
OPPROF_API int opprof_trace_distributed_info(const opprof_trace *t, opprof_distributed_info *out);

/* Rank 0's clock minus this rank's at wall time wall_ns of this rank:
 * interpolated (and extrapolated) between the two measurements, the one
 * that exists when only one does, 0 when none. */
OPPROF_API int64_t opprof_clock_offset_at(const opprof_distributed_info *d, int64_t wall_ns);

/* The ranks' traces (in any order) in one: rank r's threads in process r
 * (pid = r, named "rank r"), times on rank 0's clock, from the earliest
 * rank's start. A trace's rank is its distributedInfo's, or its position in
 * traces when it has none; OPPROF_E_INVAL when two traces are one rank,
 * OPPROF_E_RANGE when their times on rank 0's clock (base times and clock
 * offsets applied) span more than 2^61 ns, the bound of times read from files
 * (so does opprof_ranks_report_new). */
OPPROF_API int opprof_ranks_merge(const opprof_trace *const *traces, size_t n, opprof_trace **out);

/* The cross-rank comparison of the same traces. */
typedef struct opprof_ranks_report opprof_ranks_report;

OPPROF_API int opprof_ranks_report_new(const opprof_trace *const *traces, size_t n, opprof_ranks_report **out);
OPPROF_API void opprof_ranks_report_free(opprof_ranks_report *r);

/* One rank. Communication is the time in communication events (those with
 * a "Collective name" arg) and, for non-blocking ones, from the post to the
 * end of the call that completed it; computation is the time in other
 * operators (cpu_op) outside communication calls on the same thread. */
typedef struct opprof_rank_stats {
    int64_t rank;
    int64_t span_ns;          /* first event start to last event end */
    int64_t comm_ns;          /* communication (union over threads) */
    int64_t compute_ns;       /* computation (union over threads) */
    int64_t overlap_ns;       /* communication during computation */
    int64_t wait_ns;          /* in collectives, waiting for the last rank to arrive */
    uint64_t collectives;     /* collectives matched on the other ranks */
    uint64_t straggler_count; /* ... at which this rank arrived last */
    int64_t clock_offset_ns;  /* its offset to rank 0 at its start, and the uncertainty */
    int64_t clock_uncertainty_ns;
} opprof_rank_stats;

OPPROF_API size_t opprof_ranks_report_rank_count(const opprof_ranks_report *r);
OPPROF_API int opprof_ranks_report_rank(const opprof_ranks_report *r, size_t i, opprof_rank_stats *out);

/* One collective instance, matched across ranks by its communicator
 * ("Process Group Name") and its place on it ("Seq"). A rank arrives when
 * its call begins (the post, for a non-blocking one); the straggler is the
 * rank that arrived last, and every other rank waits for it: inside the
 * blocking call, or in the calls completing a non-blocking one, up to the
 * straggler's arrival. */
typedef struct opprof_collective_stats {
    const char *name;       /* the operator of the first rank: "MPI_Allreduce" */
    const char *collective; /* "Collective name": "allreduce" */
    const char *group;      /* "Process Group Name" */
    int64_t seq;
    int64_t bytes;          /* the largest "In msg bytes" */
    unsigned ranks;         /* ranks whose trace holds it */
    int64_t straggler;      /* the rank that arrived last */
    int64_t first_arrival_ns, last_arrival_ns; /* on the merged trace's clock */
    int64_t wait_ns;        /* summed over ranks */
} opprof_collective_stats;

OPPROF_API size_t opprof_ranks_report_collective_count(const opprof_ranks_report *r);
OPPROF_API int opprof_ranks_report_collective(const opprof_ranks_report *r, size_t i, opprof_collective_stats *out);

/* Rank index k's (0..rank_count-1) wait at collective i; -1 when the rank
 * has no part in it. */
OPPROF_API int64_t opprof_ranks_report_wait_ns(const opprof_ranks_report *r, size_t i, size_t k);

/* One operator across ranks: its total time (cpu_time_total) on each rank
 * that ran it. */
typedef struct opprof_rank_op_stats {
    const char *name;
    unsigned ranks;          /* ranks that ran it */
    uint64_t calls;          /* summed over ranks */
    int64_t mean_ns, min_ns, max_ns;
    int64_t min_rank, max_rank;
} opprof_rank_op_stats;

OPPROF_API size_t opprof_ranks_report_op_count(const opprof_ranks_report *r);
OPPROF_API int opprof_ranks_report_op(const opprof_ranks_report *r, size_t i, opprof_rank_op_stats *out);

/* The report as text tables (OPPROF_FORMAT_TEXT: operators, ranks, the
 * row_limit collectives with the largest arrival spread, -1 all) or as one
 * JSON object with everything (OPPROF_FORMAT_JSON). */
enum { OPPROF_FORMAT_TEXT = 2 };
OPPROF_API int opprof_ranks_report_write(const opprof_ranks_report *r, FILE *f, int format, int row_limit);

/* ======================================================================
 * 15. On demand and the flight recorder
 *
 * On demand: a long job runs with profiling idle (no session, the cost of
 * an idle profiler) and a listener thread waits on a Unix socket of its own,
 * $XDG_RUNTIME_DIR/opprof/PID.sock or /tmp/opprof-UID/PID.sock, in a folder
 * only its user may enter; the listener also checks each caller's user
 * (SO_PEERCRED: the same user, or root). opprof_trigger, from another
 * process (`opprof trigger PID`), asks it to record for a while and write
 * the results, while the program keeps running. OPPROF_ON_DEMAND=1 in the
 * environment of a program linked with libopprof.so starts the listener
 * when the library loads (opprof exec --on-demand sets it), with the
 * session options of the other OPPROF_* variables.
 *
 * The flight recorder: a session that records all the time into fixed
 * per-thread rings of 1 MiB chunks, the oldest chunk reused when the ring
 * is full, so that memory stays bounded and the last events are there when
 * something goes wrong. A dump writes what the rings hold (a Chrome trace)
 * on a writer thread of its own, while the program records on: no
 * recording thread waits for it. A range whose begin was overwritten is
 * left out, not cut. Dumps come from opprof_flight_dump, from a signal
 * (SIGUSR2 by default, then passed on to the program's own handler), from a
 * trigger (`opprof trigger PID --dump`), or from a slow step: an
 * opprof_step interval longer than a fixed time or than a multiple of the
 * running median of the last 64 steps (or a range of a given name, for a
 * program that does not call opprof_step). With the recorder on, each step is a
 * "ProfilerStep#N" range, as with a schedule. OPPROF_FLIGHT=SIZE (with
 * OPPROF_FLIGHT_SLOW_STEP=50ms|1.5x, OPPROF_FLIGHT_SLOW_RANGE=NAME, OPPROF_FLIGHT_FILE=PATH,
 * OPPROF_FLIGHT_SIGNAL=N|0) starts it when libopprof.so loads.
 * ====================================================================== */

/* Starts the listener of this process with cfg as the options of the
 * sessions triggers start (NULL: defaults; schedule and on_trace_ready are
 * not used). OPPROF_E_ACTIVE when it is already listening; OPPROF_E_IO with
 * the path when the socket cannot be made. */
OPPROF_API int opprof_on_demand_start(const opprof_config *cfg);

/* Stops listening and removes the socket; a recording in progress is cut
 * short and still written. 0 when not listening. */
OPPROF_API int opprof_on_demand_stop(void);

typedef struct opprof_trigger_request {
    int64_t duration_ns;  /* record this long (when steps is 0; 0: 5 s) */
    int64_t steps;        /* or this many whole steps (opprof_step): the one under way is not
                             counted, the next are ProfilerStep#1..N; ends early when the program
                             exits (what was recorded, marked cut short), or when the caller goes */
    int64_t timeout_ns;   /* with steps: give up after this long (0: 10 minutes) */
    const char *trace;    /* Chrome trace to write (.gz: compressed); "{n}" is the trigger's number */
    const char *table;    /* key-averages table to write; "-": into the caller's out stream */
    const char *sort_by;  /* its sort key; NULL: self_cpu_time_total */
    int row_limit;        /* its rows; 0: 100, -1 all */
    int record_shapes;    /* the recording also keeps input shapes */
    int dump;             /* dump the flight recorder instead of recording */
} opprof_trigger_request;

/* Zeroes *r: 5 s of recording, a trace of default name. */
OPPROF_API void opprof_trigger_request_init(opprof_trigger_request *r);

/* Asks process pid to record (or dump) as r says and waits until it has
 * written; relative paths are taken from the caller's working directory.
 * With neither trace nor table the trace is opprof_trigger_PID_N.json in
 * the caller's working directory. What the program reports (the files it
 * wrote, the table with table "-") goes to out (NULL: nothing). Errors:
 * OPPROF_E_NOT_FOUND when there is no such process or it does not accept
 * triggers, OPPROF_E_PERM when it is another user's or its socket is not
 * the process's own (checked before anything is sent: the folder's owner
 * and mode 0700, the peer's pid and uid), OPPROF_E_ACTIVE when it is
 * already recording or its own session runs, OPPROF_E_IO when the program
 * could not write or does not answer within 5 s (stopped); the detail says
 * which. What the program sends is shown with control characters escaped. */
OPPROF_API int opprof_trigger(int64_t pid, const opprof_trigger_request *r, FILE *out);

/* Writes one line per process of this user that accepts triggers
 * ("PID MODE STATE COMMAND") to out and removes the sockets of processes
 * that are gone. Returns how many it listed (>= 0), or a negative status. */
OPPROF_API int opprof_trigger_list(FILE *out);

/* Called after each dump with the file written and why ("signal 12",
 * "trigger", "step 512 took 61.2 ms > 50 ms", "opprof_flight_dump"); on the
 * writer thread. */
typedef void (*opprof_flight_dump_fn)(const char *path, const char *reason, void *user);

typedef struct opprof_flight_config { /* session comes last: it grows (opprof.h, at the top) */
    size_t ring_bytes;          /* per thread, rounded up to whole 1 MiB chunks (at least 2); 0: 64 MiB */
    const char *path;           /* dump file; "{n}" the dump's number, "{pid}" the process;
                                   NULL: opprof_flight_{pid}_{n}.json in session.output_dir */
    int64_t slow_step_ns;       /* dump when a step takes longer; 0 off */
    double slow_step_ratio;     /* dump when a step takes longer than this times the running median
                                   (after 8 steps); 0 off. Both set: a step must be slower than both.
                                   A step that ran while a dump was written is not judged (the
                                   dump's own cost); a slow step not dumped is said on stderr */
    const char *slow_range;     /* a step is a range of this name instead of an opprof_step interval
                                   (every end then takes the recorder's slower path); NULL: steps */
    unsigned max_slow_dumps;    /* slow-step dumps kept (0: 10): once spent, a slower step's dump
                                   replaces (removes) the least slow one's; also the signal dumps
                                   at most, which come a second apart at least (signals between
                                   share one) */
    int signal;                 /* dump on this signal; 0: SIGUSR2, -1 none */
    opprof_flight_dump_fn on_dump; /* NULL: one line on stderr per dump */
    void *user;
    opprof_config session;      /* the recording's options (schedule and on_trace_ready are not used) */
} opprof_flight_config;

/* Defaults: 64 MiB rings, SIGUSR2, no slow-step threshold (the _size form:
 * in the first struct_size bytes, the session getting what is left). */
OPPROF_API int opprof_flight_config_init_size(opprof_flight_config *c, size_t struct_size);
static inline void opprof_flight_config_init(opprof_flight_config *c) { opprof_flight_config_init_size(c, sizeof *c); }

/* Starts the flight recorder (a session: OPPROF_E_ACTIVE when one runs). */
OPPROF_API int opprof_flight_start(const opprof_flight_config *c);

/* Writes what the rings hold now to path (NULL: the configured name) and
 * returns when it is written; any thread, not in a signal handler. */
OPPROF_API int opprof_flight_dump(const char *path);

/* Asks the writer thread for a dump and returns at once (async-signal-safe). */
OPPROF_API int opprof_flight_dump_async(void);

/* Dumps written so far. */
OPPROF_API uint64_t opprof_flight_dumps(void);

/* Stops the recorder: waits for a dump being written, ends the session.
 * OPPROF_E_NO_SESSION when it is not running. */
OPPROF_API int opprof_flight_stop(void);

/* Parses "64M", "512K", "1G", "1048576" (bytes) into *bytes. */
OPPROF_API int opprof_parse_size(const char *text, size_t *bytes);

/* Parses a slow-step threshold: a time ("50ms", "2s", "300us") into
 * *ns, or a ratio ("1.5x") into *ratio, the other set to 0; or both
 * ("1.5x,20ms": slower than 1.5 times the median and than 20 ms). */
OPPROF_API int opprof_parse_slow_step(const char *text, int64_t *ns, double *ratio);

/* Parses a duration ("5s", "250ms", "2m", "1h", "100us") into *ns. */
OPPROF_API int opprof_parse_duration(const char *text, int64_t *ns);

#ifdef __cplusplus
}
#endif

#if defined(OPPROF_DISABLE) && !defined(OPPROF_BUILDING_LIBRARY)
#define OPPROF_DISABLED_TRACE_PART_ /* every function above compiled out (opprof_disabled.h) */
#include "opprof_disabled.h"
#endif

#endif /* OPPROF_TRACE_H */

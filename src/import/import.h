/* The trace reader's state while it reads one file, shared by the document
 * walk (load.c) and the mapping of events into the model (map.c). */
#ifndef OPPROF_IMPORT_IMPORT_H
#define OPPROF_IMPORT_IMPORT_H

#include <stdint.h>

#include "common/vec.h"
#include "import/event.h"
#include "import/json.h"
#include "import/source.h"
#include "import/threads.h"
#include "model/model.h"

#define OP_IMPORT_CHUNK ((size_t)256 << 10)

/* A duration event ("B") whose "E" has not come: a thread's open ones are
 * a stack, linked through prev from the thread's top. */
typedef struct op_open_range {
    uint32_t ev;   /* its event, UINT32_MAX for one the reader skips (kept to pair with its end) */
    uint32_t prev; /* the thread's next one down, + 1; 0 none */
} op_open_range;

/* A reader that hands out its events in batches (opprof convert): fn gets
 * the events read so far (raw, not finished) whenever they reach max, and
 * the last ones at the end; see op_trace_batch_out. */
typedef struct op_import_batch { /* a struct tag: pftrace.h names it too */
    size_t max;
    op_batch_fn fn;
    void *ctx;
} op_import_batch;

typedef struct op_importer {
    opprof_trace *t;
    op_json j;
    op_raw_event ev;
    op_thread_map threads;
    int64_t t_min, t_max; /* earliest start and latest end kept, ns */
    int any_time;
    uint64_t mem_totals;  /* memory events that gave "Total Allocated" */
    uint64_t max_events;  /* refuse more events than this; 0 no limit */
    op_map call_stacks;   /* "Call stack" texts read (import/callstack.h) */
    OP_VEC(op_open_range) open; /* "B" events not yet ended; free slots chained from free_open */
    uint32_t free_open;   /* + 1; 0 none */
    uint32_t *open_top;   /* per thread: its innermost open range, + 1; 0 none */
    size_t cap_top;
    size_t nopen;         /* ranges open now */
    const op_import_batch *batch; /* NULL: the whole trace at once */
    int64_t base_ns;      /* baseTimeNanoseconds, 0 until read */
    int batch_failed;     /* the failure in j is the batch's writer's, in its own words */
} op_importer;

/* The ranges still open at the end last to the trace's last time, as in a
 * .pftrace (map.c). */
void op_import_close_open(op_importer *im);

/* Hands the events read so far to im->batch (map.c); 0 or -1 with the
 * failure recorded in im->j. */
int op_import_flush(op_importer *im);

/* Adds the event in im->ev to the model when it is one the reader keeps.
 * 0, or -1 with the failure recorded in im->j. */
int op_import_event(op_importer *im);

/* Reads a whole trace from src (owned and closed) into a finished model.
 * label names the input in messages; chunk is the first read size. */
int op_import_source(op_source *src, const char *label, size_t chunk, opprof_trace **out);

/* op_import_source that fails with OPPROF_E_RANGE once the model holds more
 * than max_events events and memory events (0: no limit). */
int op_import_source_max(op_source *src, const char *label, size_t chunk, uint64_t max_events, opprof_trace **out);

/* Reads the trace at path ("-": stdin), JSON or Perfetto, handing its
 * events to b as it goes (nothing rebased or finished: times as the file
 * gives them, base_time_ns its baseTimeNanoseconds). *out gets what is left
 * for the end: threads, strings, stacks, dropped, incomplete, distributedInfo.
 * OPPROF_OK, or a failure with the reader's message (or fn's). */
int op_import_batches(const char *path, const op_import_batch *b, opprof_trace **out);

#endif

/* The trace reader's state while it reads one file, shared by the document
 * walk (load.c) and the mapping of events into the model (map.c). */
#ifndef OPPROF_IMPORT_IMPORT_H
#define OPPROF_IMPORT_IMPORT_H

#include <stdint.h>

#include "import/event.h"
#include "import/json.h"
#include "import/source.h"
#include "import/threads.h"
#include "model/model.h"

#define OP_IMPORT_CHUNK ((size_t)256 << 10)

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
} op_importer;

/* Adds the event in im->ev to the model when it is one the reader keeps.
 * 0, or -1 with the failure recorded in im->j. */
int op_import_event(op_importer *im);

/* Reads a whole trace from src (owned and closed) into a finished model.
 * label names the input in messages; chunk is the first read size. */
int op_import_source(op_source *src, const char *label, size_t chunk, opprof_trace **out);

/* op_import_source that fails with OPPROF_E_RANGE once the model holds more
 * than max_events events and memory events (0: no limit). */
int op_import_source_max(op_source *src, const char *label, size_t chunk, uint64_t max_events, opprof_trace **out);

#endif

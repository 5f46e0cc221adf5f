/* A sampled trace's samples in its trace files (samples.c): Chrome/V8 CPU
 * profile events in a Chrome trace, PerfSample packets in a .pftrace
 * (pftrace_samples.c). Both writers read a frame's text as the symbolizer
 * made it and a thread's samples in time order, from here. */
#ifndef OPPROF_EXPORT_SAMPLES_H
#define OPPROF_EXPORT_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "export/jsonw.h"
#include "model/model.h"

/* A frame's text, "FILE(LINE): FUNC", "MODULE: FUNC" or
 * "MODULE(+0xOFF): ??" (stacks/symbolize.h), in parts that point into it. */
typedef struct op_frame_text {
    const char *fn, *where; /* the function ("??" unknown); the file or module, "" none */
    size_t fn_len, where_len;
    int line;               /* > 0 when where is a source file */
} op_frame_text;

void op_frame_text_parse(const char *s, size_t n, op_frame_text *f);

/* t's samples by thread: thread k's are idx[first[k]] .. idx[first[k + 1] - 1],
 * in time order (stable). 0, or -1 out of memory (nothing to free). */
int op_samples_by_thread(const opprof_trace *t, uint32_t **idx, size_t **first);

/* Writes t's samples into a Chrome trace's traceEvents as one V8 CPU profile
 * per thread ("Profile", then "ProfileChunk"s of nodes, samples and
 * timeDeltas), each event after ",\n  " (after "\n  " while *first, which
 * it clears). names: a thread_name metadata event for each thread sampled
 * too (a streamed trace's samples come from another trace than its
 * events'). 0 or -1 (out of memory); w's status is w's. */
int op_chrome_write_samples(op_jw *w, const opprof_trace *t, int *first, int names);

#endif

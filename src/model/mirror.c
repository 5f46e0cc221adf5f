/* A trace that mirrors another's tables (model.h: op_trace_mirror). The
 * streamed trace's end reads records into one trace while another thread
 * writes the batch before from a second one (export/stream_enc.c): the
 * writer's trace gets the reader's strings, threads and stacks under the
 * same ids, so its events' ids mean what they meant in the reader's. */
#include "common/error.h"
#include "common/vec.h"
#include "model/model.h"

/* Strings, threads and stacks of src past those m has, appended in order:
 * both intern the same strings in the same order from the same start, so
 * an id is the same in both (checked). */
static int tables(opprof_trace *m, const opprof_trace *src)
{
    for (uint32_t id = m->str.count; id < src->str.count; id++)
        if (op_trace_intern(m, op_strtab_get(&src->str, id), op_strtab_len(&src->str, id)) != id) return -1;
    if (m->str.count != src->str.count) return -1; /* src held a string twice: not a trace's table */
    for (size_t i = m->nthreads; i < src->nthreads; i++) {
        if (op_grow(&m->threads, &m->cap_threads, i + 1, sizeof *m->threads) != 0) return -1;
        m->threads[i] = src->threads[i];
        m->nthreads = i + 1;
    }
    for (size_t k = m->nstacks; k < src->nstacks; k++)
        if (op_trace_add_stack(m, src->stacks[k].frames, src->stacks[k].nframes) != k + 1) return -1;
    return 0;
}

int op_trace_mirror(opprof_trace *m, const opprof_trace *src)
{
    if (m->str.count > src->str.count || m->nthreads > src->nthreads || m->nstacks > src->nstacks)
        return op_fail(OPPROF_E_INVAL, "a mirror of a trace holds more than the trace");
    if (tables(m, src) != 0) return op_fail(OPPROF_E_NOMEM, "out of memory copying the trace's strings");
    /* What a writer reads of the trace besides its events */
    m->options = src->options;
    m->base_time_ns = src->base_time_ns;
    m->duration_ns = src->duration_ns;
    m->step_num = src->step_num;
    m->filter_min_ns = src->filter_min_ns;
    m->filter_max_depth = src->filter_max_depth;
    m->filtered = src->filtered;
    m->dropped = src->dropped;
    m->dist_backend = src->dist_backend;
    m->dist_rank = src->dist_rank;
    m->dist_world = src->dist_world;
    m->device_props = src->device_props;
    m->clock_start = src->clock_start;
    m->clock_end = src->clock_end;
    return OPPROF_OK;
}

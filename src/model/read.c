/* What opprof_trace.h reads of a trace's events and counts. Each asks for
 * the model first (op_trace_model, gate.c): a bare handle reads as empty. */
#include "common/error.h"
#include "model/model.h"

size_t opprof_trace_event_count(const opprof_trace *t)
{
    t = op_trace_model(t);
    return t ? t->nev : 0;
}

int opprof_trace_event(const opprof_trace *t, size_t i, opprof_event *out)
{
    t = op_trace_model(t);
    if (!t || !out) return op_fail(OPPROF_E_INVAL, "opprof_trace_event: NULL argument");
    if (i >= t->nev) return op_fail(OPPROF_E_RANGE, "event %zu of %zu", i, t->nev);
    const op_event *e = &t->ev[i];
    const op_thread *th = &t->threads[e->thread];
    out->name = op_strtab_get(&t->str, e->name);
    out->category = e->cat;
    out->flags = e->flags & (OPPROF_EVENT_FORCED_END | OPPROF_EVENT_DEVICE | OPPROF_EVENT_CAPPED);
    out->pid = th->pid;
    out->tid = th->tid;
    out->start_ns = e->start_ns;
    out->dur_ns = e->dur_ns;
    out->self_ns = e->self_ns;
    out->parent = e->parent;
    out->depth = op_event_depth(t, e);
    const op_evx *x = op_evx_of(t, e);
    out->input_shapes = op_strtab_get(&t->str, x->shapes);
    out->input_types = op_strtab_get(&t->str, x->types);
    out->flops = x->flops;
    out->cpu_memory_usage = x->mem_total;
    out->self_cpu_memory_usage = x->mem_self;
    out->device_time_ns = x->dev_total_ns;
    out->self_device_time_ns = x->dev_self_ns;
    out->args = op_strtab_get(&t->str, x->args);
    return OPPROF_OK;
}

unsigned opprof_trace_event_stack_depth(const opprof_trace *t, size_t i)
{
    t = op_trace_model(t);
    if (!t || i >= t->nev) return 0;
    uint32_t s = op_evx_of(t, &t->ev[i])->stack;
    return s && s <= t->nstacks ? t->stacks[s - 1].nframes : 0;
}

const char *opprof_trace_event_frame(const opprof_trace *t, size_t i, unsigned k)
{
    if (k >= opprof_trace_event_stack_depth(t, i)) return NULL;
    return op_strtab_get(&t->str, t->stacks[op_evx_of(t, &t->ev[i])->stack - 1].frames[k]);
}

uint64_t opprof_trace_aggregated(const opprof_trace *t)
{
    t = op_trace_model(t);
    uint64_t n = 0;
    for (size_t i = 0; t && i < t->nagg; i++) n += t->agg[i].count;
    return n;
}

int opprof_trace_overhead_compensation(const opprof_trace *t, double *inside_ns, double *outside_ns)
{
    t = op_trace_model(t);
    double in = t ? t->comp_inside_ns : 0, out = t ? t->comp_outside_ns : 0;
    if (inside_ns) *inside_ns = in;
    if (outside_ns) *outside_ns = out;
    return in > 0 || out > 0;
}

uint64_t opprof_trace_dropped(const opprof_trace *t)
{
    t = op_trace_model(t);
    return t ? t->dropped : 0;
}

int opprof_trace_incomplete(const opprof_trace *t)
{
    t = op_trace_model(t);
    return t && (t->options & OP_TRACE_INCOMPLETE) ? 1 : 0;
}

int64_t opprof_trace_base_time_ns(const opprof_trace *t)
{
    t = op_trace_model(t);
    return t ? t->base_time_ns : 0;
}

int64_t opprof_trace_step_num(const opprof_trace *t)
{
    t = op_trace_model(t);
    return t ? t->step_num : -1;
}

int opprof_trace_distributed_info(const opprof_trace *t, opprof_distributed_info *out)
{
    if (op_trace_check(t, "opprof_trace_distributed_info")) return OPPROF_E_INVAL;
    if (!out) return op_fail(OPPROF_E_INVAL, "opprof_trace_distributed_info: NULL out");
    opprof_distributed_info_init(out);
    if (!t) return op_fail(OPPROF_E_INVAL, "opprof_trace_distributed_info: NULL trace");
    if (t->dist_rank < 0) return op_fail(OPPROF_E_NOT_FOUND, "the trace has no distributedInfo");
    out->backend = op_strtab_get(&t->str, t->dist_backend);
    out->rank = t->dist_rank;
    out->world_size = t->dist_world;
    out->clock_start = t->clock_start;
    out->clock_end = t->clock_end;
    return OPPROF_OK;
}

/* The small JSON parts of a trace's meta object: threads, steps, and the
 * memory columns (live bytes per device over time). */
#include <string.h>

#include "report/rep.h"

/* A memory series is one device (CPU, or a GPU by index): live bytes are
 * counted per device, as Kineto's "Total Allocated" is. */
static uint32_t mem_series(const op_mem_event *m)
{
    return m->device_type == 0 ? 0 : 1u + (uint8_t)m->device_id;
}

int rep_memory_build(rep_trace *r)
{
    const opprof_trace *t = r->t;
    static const rep_col cols[4] = {
        {"ts", "d", "f64", 0, 0}, {"total", "d", "f64", 0, 0}, {"op", "u", "u32", 0, 0}, {"series", "u", "u16", 0, 0}};
    for (int f = 0; f < 4; f++) {
        rep_col *c = &r->mem_cols[r->mem_ncols++];
        *c = cols[f];
        c->off = r->mem.n;
        int64_t prev = 0;
        for (size_t i = 0; i < t->nmem; i++) {
            const op_mem_event *m = &t->mem[i];
            switch (f) {
            case 0: rep_buf_sv(&r->mem, m->ts_ns - prev); prev = m->ts_ns; break;
            case 1: rep_buf_sv(&r->mem, m->total_allocated - prev); prev = m->total_allocated; break;
            case 2: rep_buf_uv(&r->mem, m->op < 0 ? 0 : (uint64_t)r->pos[m->op] + 1); break;
            default: rep_buf_uv(&r->mem, mem_series(m)); break;
            }
        }
        c->len = r->mem.n - c->off;
    }
    return r->mem.failed ? -1 : 0;
}

void rep_memory_json(rep_out *o, const rep_trace *r)
{
    const opprof_trace *t = r->t;
    rep_printf(o, ",\"memProfiled\":%d,\"memory\":", (t->options & OP_TRACE_MEMORY) || t->nmem ? 1 : 0);
    rep_cols_json(o, t->nmem, r->mem_cols, r->mem_ncols);
}

void rep_threads_json(rep_out *o, const rep_trace *r)
{
    const opprof_trace *t = r->t;
    rep_puts(o, ",\"threads\":[");
    for (size_t i = 0; i < t->nthreads; i++) {
        const op_thread *th = &t->threads[i];
        rep_printf(o, "%s[%lld,%lld,%u,%u,%d]", i ? "," : "", (long long)th->pid, (long long)th->tid,
                   rep_sid(r, th->name), rep_sid(r, th->pid_name), (int)th->device);
    }
    rep_puts(o, "]");
}

/* ProfilerStep#N annotations, by page position, in time order. */
void rep_steps_json(rep_out *o, const rep_trace *r)
{
    const opprof_trace *t = r->t;
    rep_puts(o, ",\"steps\":[");
    int first = 1;
    for (size_t i = 0; i < t->nev; i++) {
        const char *name = op_strtab_get(&t->str, t->ev[i].name);
        if (strncmp(name, "ProfilerStep#", 13) != 0) continue;
        rep_printf(o, "%s%u", first ? "" : ",", r->pos[i]);
        first = 0;
    }
    rep_puts(o, "]");
}

/* opprof_ranks_merge: the ranks' traces in one, one process per rank
 * (pid = rank, named "rank R"), every time on rank 0's clock. Strings are
 * interned afresh in the merged trace; correlation and External ids get the
 * rank in their high bits, so that a rank's launches still find its own
 * kernels. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "ranks/ranks.h"

/* A string of src interned into dst; 0 stays 0. */
static uint32_t copy_str(opprof_trace *dst, const opprof_trace *src, uint32_t id)
{
    if (!id) return 0;
    return op_trace_intern(dst, op_strtab_get(&src->str, id), op_strtab_len(&src->str, id));
}

static int64_t rank_id(int64_t rank, int64_t id)
{
    return id ? (int64_t)((uint64_t)rank << 40) + id : 0;
}

static int add_rank(opprof_trace *out, const op_rank_trace *r, int64_t origin)
{
    const opprof_trace *t = r->t;
    uint32_t *thread_of = malloc((t->nthreads ? t->nthreads : 1) * sizeof *thread_of);
    uint32_t *stack_of = calloc(t->nstacks ? t->nstacks : 1, sizeof *stack_of);
    int rc = thread_of && stack_of ? 0 : -1;
    char label[48];
    snprintf(label, sizeof label, "rank %lld", (long long)r->rank);
    uint32_t pid_name = op_trace_intern(out, label, strlen(label));
    if (pid_name == UINT32_MAX) rc = -1;
    for (size_t i = 0; i < t->nthreads && rc == 0; i++) {
        const op_thread *th = &t->threads[i];
        int64_t ti = op_trace_thread(out, r->rank, th->tid);
        if (ti < 0) {
            rc = -1;
            break;
        }
        out->threads[ti].name = copy_str(out, t, th->name);
        out->threads[ti].pid_name = pid_name;
        out->threads[ti].device = th->device;
        if (out->threads[ti].name == UINT32_MAX) rc = -1;
        thread_of[i] = (uint32_t)ti;
    }
    for (size_t i = 0; i < t->nstacks && rc == 0; i++)
        if (!(stack_of[i] = op_trace_copy_stack(out, t, i))) rc = -1;
    for (size_t i = 0; i < t->nev && rc == 0; i++) {
        const op_event *e = &t->ev[i];
        int64_t start = op_rank_time(r, e->start_ns) - origin;
        op_event *n = op_trace_add_event(out, thread_of[e->thread], copy_str(out, t, e->name), e->cat, start,
                                         e->dur_ns);
        if (!n) {
            rc = -1;
            break;
        }
        n->flags = e->flags;
        if (n->name == UINT32_MAX) rc = -1;
        if (!e->x || rc) continue;
        const op_evx *ex = op_evx_of(t, e);
        op_evx *nx = op_evx_add(out, n);
        if (!nx) {
            rc = -1;
            break;
        }
        nx->shapes = copy_str(out, t, ex->shapes);
        nx->types = copy_str(out, t, ex->types);
        nx->args = copy_str(out, t, ex->args);
        if (nx->shapes == UINT32_MAX || nx->types == UINT32_MAX || nx->args == UINT32_MAX) rc = -1;
        nx->flops = ex->flops;
        nx->correlation = rank_id(r->rank, ex->correlation);
        nx->external_id = rank_id(r->rank, ex->external_id);
        nx->stack = ex->stack && ex->stack <= t->nstacks ? stack_of[ex->stack - 1] : 0;
    }
    for (size_t i = 0; i < t->nmem && rc == 0; i++) {
        const op_mem_event *m = &t->mem[i];
        op_mem_event *n = op_trace_add_mem(out, thread_of[m->thread], op_rank_time(r, m->ts_ns) - origin, m->addr,
                                           m->bytes);
        if (!n) {
            rc = -1;
            break;
        }
        n->total_allocated = m->total_allocated;
        n->device_type = m->device_type;
        n->device_id = m->device_id;
    }
    out->options |= t->options;
    out->dropped += t->dropped;
    out->attempted += t->attempted;
    out->mem_totals_given |= t->mem_totals_given;
    int64_t end = op_rank_time(r, t->duration_ns) - origin;
    if (end > out->duration_ns) out->duration_ns = end;
    free(thread_of);
    free(stack_of);
    return rc;
}

int opprof_ranks_merge(const opprof_trace *const *traces, size_t n, opprof_trace **out)
{
    if (!out) return op_fail(OPPROF_E_INVAL, "opprof_ranks_merge: NULL out");
    *out = NULL;
    op_rank_trace *r;
    int rc = op_ranks_order(traces, n, &r);
    if (rc != OPPROF_OK) return rc;
    opprof_trace *m = op_trace_new();
    if (!m) {
        free(r);
        return op_fail(OPPROF_E_NOMEM, "out of memory merging %zu traces", n);
    }
    int64_t origin = op_ranks_origin(r, n);
    m->base_time_ns = origin;
    for (size_t i = 0; i < n && rc == OPPROF_OK; i++)
        if (add_rank(m, &r[i], origin) != 0) rc = op_fail(OPPROF_E_NOMEM, "out of memory merging %zu traces", n);
    free(r);
    if (rc == OPPROF_OK) rc = op_trace_finish(m);
    if (rc != OPPROF_OK) {
        opprof_trace_free(m);
        return rc;
    }
    *out = m;
    return OPPROF_OK;
}

/* Building a trace: the producers' appends (readers: read.c). */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capture/evstore.h"
#include "common/error.h"
#include "common/pages.h"
#include "common/vec.h"
#include "model/model.h"

static void trace_free(opprof_trace *t);

opprof_trace *op_trace_new(void)
{
    opprof_trace *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->head.free = trace_free;
    if (op_strtab_init(&t->str) != 0) {
        free(t);
        return NULL;
    }
    t->step_num = -1;
    t->dist_rank = -1;
    t->dist_world = -1;
    return t;
}

/* The model's half of opprof_trace_free (session/handle.c). */
static void trace_free(opprof_trace *t)
{
    op_strtab_free(&t->str);
    for (size_t i = 0; i < t->nstacks; i++) free(t->stacks[i].frames);
    free(t->stacks);
    free(t->threads);
    op_trace_free_events(t->ev);
    free(t->evx);
    free(t->mem);
    free(t->dropped_calls);
    free(t->agg);
    free(t->samples);
    free(t);
}

int64_t op_trace_thread(opprof_trace *t, int64_t pid, int64_t tid)
{
    for (size_t i = 0; i < t->nthreads; i++)
        if (t->threads[i].pid == pid && t->threads[i].tid == tid) return (int64_t)i;
    if (t->nthreads >= OP_MAX_THREADS) return op_fail(OPPROF_E_RANGE, "more than %u threads", OP_MAX_THREADS), -1;
    if (op_grow(&t->threads, &t->cap_threads, t->nthreads + 1, sizeof *t->threads))
        return op_fail(OPPROF_E_NOMEM, "out of memory"), -1;
    op_thread *th = &t->threads[t->nthreads];
    memset(th, 0, sizeof *th);
    th->pid = pid;
    th->tid = tid;
    th->device = -1;
    return (int64_t)t->nthreads++;
}

_Static_assert(sizeof(op_event) == OP_EVSTORE_EVENT_BYTES, "capture/evstore.h writes ahead for this size");

void op_trace_free_events(op_event *ev)
{
    if (op_evstore_give(ev) != 0) free(ev);
}

/* t's events moved from the store's block to malloc, with room for n. */
static int events_to_malloc(opprof_trace *t, size_t n)
{
    size_t cap = t->cap_ev * 2 > n ? t->cap_ev * 2 : n;
    if (cap > SIZE_MAX / sizeof *t->ev) return -1;
    op_event *ev = malloc(cap * sizeof *ev);
    if (!ev) return -1;
    memcpy(ev, t->ev, t->nev * sizeof *ev);
    op_advise_huge(ev, cap * sizeof *ev);
    op_trace_free_events(t->ev);
    t->ev = ev;
    t->cap_ev = cap;
    return 0;
}

int op_trace_reserve_events(opprof_trace *t, size_t n)
{
    if (n <= t->cap_ev) return 0;
    if (n > SIZE_MAX / sizeof *t->ev) return -1;
    if (!t->ev) {
        size_t got;
        op_event *ev = op_evstore_take(n * sizeof *ev, &got);
        if (ev) {
            t->ev = ev;
            t->cap_ev = got / sizeof *ev;
            return 0;
        }
    } else if (op_evstore_owns(t->ev)) {
        return events_to_malloc(t, n);
    }
    op_event *ev = realloc(t->ev, n * sizeof *ev);
    if (!ev) return -1;
    t->ev = ev;
    t->cap_ev = n;
    op_advise_huge(ev, n * sizeof *ev);
    return 0;
}

void op_trace_fit_events(opprof_trace *t)
{
    if (t->cap_ev <= t->nev || !t->nev || op_evstore_owns(t->ev)) return; /* the block stays whole, kept */
    op_event *ev = realloc(t->ev, t->nev * sizeof *ev);
    if (!ev) return; /* the larger block stays: nothing lost */
    t->ev = ev;
    t->cap_ev = t->nev;
}

op_event *op_trace_add_event(opprof_trace *t, uint32_t thread, uint32_t name, int cat, int64_t start_ns,
                             int64_t dur_ns)
{
    if (thread >= OP_MAX_THREADS) return NULL; /* op_trace_thread never gives one */
    size_t cap = t->cap_ev;
    if (t->nev == cap && op_evstore_owns(t->ev) && events_to_malloc(t, t->nev + 1) != 0) return NULL;
    if (op_grow(&t->ev, &t->cap_ev, t->nev + 1, sizeof *t->ev)) return NULL;
    if (t->cap_ev != cap) op_advise_huge(t->ev, t->cap_ev * sizeof *t->ev);
    op_event *e = &t->ev[t->nev++];
    memset(e, 0, sizeof *e);
    e->thread = thread;
    e->name = name;
    e->cat = (unsigned)cat & 15u;
    e->start_ns = start_ns;
    e->dur_ns = dur_ns < 0 ? 0 : dur_ns;
    e->parent = -1;
    return e;
}

op_evx *op_evx_add(opprof_trace *t, op_event *e)
{
    if (e->x) return &t->evx[e->x - 1];
    size_t cap = t->cap_evx;
    if (t->nevx >= UINT32_MAX - 1 || op_grow(&t->evx, &t->cap_evx, t->nevx + 1, sizeof *t->evx)) return NULL;
    if (t->cap_evx != cap) op_advise_huge(t->evx, t->cap_evx * sizeof *t->evx);
    op_evx *x = &t->evx[t->nevx++];
    memset(x, 0, sizeof *x);
    e->x = (uint32_t)t->nevx;
    return x;
}

uint32_t op_event_depth(const opprof_trace *t, const op_event *e)
{
    uint32_t d = 0;
    for (int32_t p = e->parent; p >= 0 && d < UINT16_MAX; p = t->ev[p].parent) d++;
    return d;
}

op_mem_event *op_trace_add_mem(opprof_trace *t, uint32_t thread, int64_t ts_ns, uint64_t addr, int64_t bytes)
{
    if (op_grow(&t->mem, &t->cap_mem, t->nmem + 1, sizeof *t->mem)) return NULL;
    op_mem_event *m = &t->mem[t->nmem++];
    memset(m, 0, sizeof *m);
    m->thread = thread;
    m->ts_ns = ts_ns;
    m->addr = addr;
    m->bytes = bytes;
    m->op = -1;
    m->enclosing = OP_MEM_FIND;
    m->device_id = -1;
    return m;
}

uint32_t op_trace_add_stack(opprof_trace *t, const uint32_t *frames, uint32_t nframes)
{
    if (op_grow(&t->stacks, &t->cap_stacks, t->nstacks + 1, sizeof *t->stacks)) return 0;
    uint32_t *copy = malloc((nframes ? nframes : 1) * sizeof *copy);
    if (!copy) return 0;
    if (nframes) memcpy(copy, frames, nframes * sizeof *copy);
    t->stacks[t->nstacks].frames = copy;
    t->stacks[t->nstacks].nframes = nframes;
    return (uint32_t)++t->nstacks;
}

uint32_t op_trace_copy_stack(opprof_trace *t, const opprof_trace *from, size_t k)
{
    const op_stack *st = &from->stacks[k];
    uint32_t *frames = malloc((st->nframes ? st->nframes : 1) * sizeof *frames);
    if (!frames) return 0;
    uint32_t r = 1;
    for (uint32_t i = 0; i < st->nframes && r; i++) {
        uint32_t id = st->frames[i];
        frames[i] = id ? op_trace_intern(t, op_strtab_get(&from->str, id), op_strtab_len(&from->str, id)) : 0;
        if (frames[i] == UINT32_MAX) r = 0;
    }
    if (r) r = op_trace_add_stack(t, frames, st->nframes);
    free(frames);
    return r;
}

op_aggrow *op_trace_add_agg(opprof_trace *t)
{
    if (op_grow(&t->agg, &t->cap_agg, t->nagg + 1, sizeof *t->agg)) return NULL;
    op_aggrow *r = &t->agg[t->nagg++];
    memset(r, 0, sizeof *r);
    return r;
}

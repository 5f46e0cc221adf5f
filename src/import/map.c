/* Which trace events become rows of the model, and how: the definition of
 * docs/DESIGN.md, "Reading a trace".
 *   "X" with cat cpu_op, user_annotation, cuda_runtime, cuda_driver, or no
 *       cat (legacy PyTorch)          -> host events, forming call trees
 *   "X" with cat kernel, gpu_memcpy, gpu_memset -> device events
 *   "B" ... "E" on one pid and tid    -> the same, as one complete event (each
 *       "E" ends the thread's innermost open "B", as in Chrome; its args join
 *       the begin's; a "B" never ended lasts to the trace's last time)
 *   "i"/"I" named "[memory]"         -> memory events
 *   "M" thread_name                  -> thread names
 *   "P" ProfileChunk                 -> counted (samples_skipped), not kept
 * Everything else (flows, other metadata, gpu_user_annotation,
 * python_function, the Trace span, cuda_sync) is not a row and is skipped:
 * keeping it would cost memory for nothing a table shows. */
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "import/callstack.h"
#include "import/import.h"

#define F(f) (1u << (f))

/* The first field, in field order, that is missing from `need` or unusable
 * among `use`, as the error of this event; 0 when there is none. */
static int check(op_importer *im, uint32_t need, uint32_t use)
{
    const op_raw_event *ev = &im->ev;
    for (int f = 0; f < OP_F_COUNT_; f++) {
        if ((ev->bad & (need | use)) & F(f))
            return op_json_fail(&im->j, OPPROF_E_PARSE, ev->bad_off[f], "event field \"%s\" %s", op_field_name(f),
                                ev->bad_what[f]),
                   -1;
        if ((need & F(f)) && !(ev->has & F(f)))
            return op_json_fail(&im->j, OPPROF_E_PARSE, ev->off, "event has no \"%s\"", op_field_name(f)), -1;
    }
    return 0;
}

static int64_t thread_of(op_importer *im)
{
    op_raw_event *ev = &im->ev;
    op_thread_key k = {0};
    const op_raw_id *ids[2] = {&ev->pid, &ev->tid};
    for (int i = 0; i < 2; i++) {
        int64_t v = ids[i]->num;
        if (ids[i]->is_str) {
            uint32_t id = op_trace_intern(im->t, op_raw_str(ev, ids[i]->str), ids[i]->str.len);
            if (id == UINT32_MAX) return -1;
            v = id;
        }
        if (i == 0) {
            k.pid = v;
            k.pid_str = (uint8_t)ids[i]->is_str;
        } else {
            k.tid = v;
            k.tid_str = (uint8_t)ids[i]->is_str;
        }
    }
    return op_thread_map_get(&im->threads, im->t, &k);
}

static int nomem(op_importer *im)
{
    if (im->t->nthreads >= OP_MAX_THREADS) /* why thread_of() failed */
        return op_json_fail(&im->j, OPPROF_E_RANGE, im->ev.off, "more than %u threads", OP_MAX_THREADS), -1;
    return op_json_fail(&im->j, OPPROF_E_NOMEM, im->ev.off, "out of memory"), -1;
}

static void see_time(op_importer *im, int64_t start, int64_t end)
{
    if (!im->any_time || start < im->t_min) im->t_min = start;
    if (!im->any_time || end > im->t_max) im->t_max = end;
    im->any_time = 1;
}

static int add_complete(op_importer *im)
{
    op_raw_event *ev = &im->ev;
    opprof_trace *t = im->t;
    int cat = ev->cat == OP_RCAT_NONE ? OPPROF_CAT_CPU_OP : ev->cat;
    if (check(im, F(OP_F_NAME) | F(OP_F_TS) | F(OP_F_PID) | F(OP_F_TID),
              F(OP_F_DUR) | F(OP_F_ARGS) | F(OP_F_CORR) | F(OP_F_EXT) | F(OP_F_SHAPES) | F(OP_F_TYPES) |
                  F(OP_F_FLOPS) | F(OP_F_DEVICE) | F(OP_F_STACK)) != 0)
        return -1;
    int64_t dur = op_raw_has(ev, OP_F_DUR) ? ev->dur_ns : 0;
    if (dur < 0) dur = 0; /* the model's rule: a negative duration is an empty range */
    if (ev->ts_ns > INT64_MAX - dur)
        return op_json_fail(&im->j, OPPROF_E_PARSE, ev->off, "event ends past the largest time"), -1;
    if (t->nev >= (size_t)INT32_MAX)
        return op_json_fail(&im->j, OPPROF_E_RANGE, ev->off, "more than %d events", INT32_MAX), -1;
    int64_t th = thread_of(im);
    uint32_t name = op_trace_intern(t, op_raw_str(ev, ev->name), ev->name.len);
    if (th < 0 || name == UINT32_MAX) return nomem(im);
    op_event *e = op_trace_add_event(t, (uint32_t)th, name, cat, ev->ts_ns, dur);
    if (!e) return nomem(im);
    /* Only an event with ids, shapes, args or FLOPs has a cold part. */
    const uint32_t cold = F(OP_F_CORR) | F(OP_F_EXT) | F(OP_F_SHAPES) | F(OP_F_TYPES) | F(OP_F_FLOPS) | F(OP_F_STACK);
    if ((ev->has & cold) || ev->extra.n) {
        op_evx *x = op_evx_add(t, e);
        if (!x) return nomem(im);
        if (op_raw_has(ev, OP_F_CORR)) {
            x->correlation = ev->corr;
            e->flags |= OP_EV_HAS_CORR;
        }
        if (op_raw_has(ev, OP_F_EXT)) {
            x->external_id = ev->ext;
            e->flags |= OP_EV_HAS_EXT;
        }
        if (op_raw_has(ev, OP_F_SHAPES)) {
            x->shapes = op_trace_intern(t, op_raw_str(ev, ev->shapes), ev->shapes.len);
            t->options |= OP_TRACE_SHAPES;
        }
        if (op_raw_has(ev, OP_F_TYPES)) x->types = op_trace_intern(t, op_raw_str(ev, ev->types), ev->types.len);
        if (ev->extra.n) x->args = op_trace_intern(t, ev->extra.p, ev->extra.n);
        if (op_raw_has(ev, OP_F_STACK))
            x->stack = op_import_call_stack(t, &im->call_stacks, op_raw_str(ev, ev->stack), ev->stack.len);
        if (x->stack == UINT32_MAX) return nomem(im);
        if (x->shapes == UINT32_MAX || x->types == UINT32_MAX || x->args == UINT32_MAX) return nomem(im);
        if (op_raw_has(ev, OP_F_FLOPS)) {
            x->flops = ev->flops;
            t->options |= OP_TRACE_FLOPS;
        }
    }
    if (op_cat_is_device(cat)) {
        op_thread *thr = &t->threads[th];
        int64_t dev = op_raw_has(ev, OP_F_DEVICE) ? ev->device : ev->pid.is_str ? 0 : ev->pid.num;
        if (thr->device < 0 && dev >= 0 && dev <= INT32_MAX) thr->device = (int32_t)dev;
    }
    see_time(im, ev->ts_ns, ev->ts_ns + dur);
    return 0;
}

/* A "B": the event now, with no duration yet, on top of its thread's
 * open ranges (skipped is one the reader does not keep, there to pair). */
static int push_open(op_importer *im, uint32_t th, int skipped)
{
    opprof_trace *t = im->t;
    uint32_t slot;
    if (im->free_open) {
        slot = im->free_open - 1;
        im->free_open = im->open.v[slot].prev;
    } else {
        if (im->open.n >= UINT32_MAX - 1 || op_vec_reserve(&im->open, 1) != 0) return nomem(im);
        slot = (uint32_t)im->open.n++;
    }
    im->open.v[slot].ev = skipped ? UINT32_MAX : (uint32_t)(t->nev - 1);
    im->open.v[slot].prev = im->open_top[th];
    im->open_top[th] = slot + 1;
    im->nopen++;
    return 0;
}

static int add_begin(op_importer *im)
{
    int skipped = im->ev.cat == OP_RCAT_SKIP;
    size_t nthreads = im->t->nthreads;
    if (check(im, F(OP_F_PID) | F(OP_F_TID), 0) != 0) return -1;
    int64_t th = skipped ? thread_of(im) : 0;
    if (!skipped) {
        if (add_complete(im) != 0) return -1;
        th = im->t->ev[im->t->nev - 1].thread;
    }
    if (th < 0) return nomem(im);
    /* threads added since: no range open on them yet */
    if (op_grow(&im->open_top, &im->cap_top, im->t->nthreads, sizeof *im->open_top) != 0) return nomem(im);
    for (size_t i = nthreads; i < im->t->nthreads; i++) im->open_top[i] = 0;
    return push_open(im, (uint32_t)th, skipped);
}

/* An "E": ends the innermost open "B" of its thread; one without a "B" is
 * ignored, as Chrome does. */
static int add_end(op_importer *im)
{
    op_raw_event *ev = &im->ev;
    opprof_trace *t = im->t;
    if (check(im, F(OP_F_TS) | F(OP_F_PID) | F(OP_F_TID), F(OP_F_ARGS)) != 0) return -1;
    size_t nthreads = t->nthreads;
    int64_t th = thread_of(im);
    if (th < 0) return nomem(im);
    if ((size_t)th >= nthreads || (size_t)th >= im->cap_top || !im->open_top[th]) return 0;
    uint32_t slot = im->open_top[th] - 1;
    op_open_range *o = &im->open.v[slot];
    uint32_t ended = o->ev;
    im->open_top[th] = o->prev;
    o->ev = UINT32_MAX; /* free: nothing of the trace's */
    o->prev = im->free_open;
    im->free_open = slot + 1;
    im->nopen--;
    if (ended == UINT32_MAX) return 0;
    op_event *e = &t->ev[ended];
    e->dur_ns = ev->ts_ns > e->start_ns ? ev->ts_ns - e->start_ns : 0;
    see_time(im, e->start_ns, e->start_ns + e->dur_ns);
    if (!ev->extra.n) return 0;
    op_evx *x = op_evx_add(t, e);
    if (!x) return nomem(im);
    uint32_t args = x->args;
    if (args && op_strtab_len(&t->str, args)) { /* the begin's, then the end's */
        op_buf b = {0};
        op_buf_put(&b, op_strtab_get(&t->str, args), op_strtab_len(&t->str, args));
        op_buf_put(&b, ", ", 2);
        op_buf_put(&b, ev->extra.p, ev->extra.n);
        args = b.failed ? UINT32_MAX : op_trace_intern(t, b.p, b.n);
        op_buf_free(&b);
    } else {
        args = op_trace_intern(t, ev->extra.p, ev->extra.n);
    }
    if (args == UINT32_MAX) return nomem(im);
    x->args = args;
    return 0;
}

void op_import_close_open(op_importer *im)
{
    opprof_trace *t = im->t;
    for (size_t i = 0; i < im->open.n; i++) {
        op_open_range *o = &im->open.v[i];
        if (o->ev == UINT32_MAX || o->ev >= t->nev) continue; /* free, or one the reader skips */
        op_event *e = &t->ev[o->ev];
        e->dur_ns = im->t_max > e->start_ns ? im->t_max - e->start_ns : 0;
        o->ev = UINT32_MAX; /* done: a last batch writes it */
    }
}

static int add_memory(op_importer *im)
{
    op_raw_event *ev = &im->ev;
    if (check(im, F(OP_F_TS) | F(OP_F_PID) | F(OP_F_TID) | F(OP_F_BYTES),
              F(OP_F_ARGS) | F(OP_F_ADDR) | F(OP_F_TOTAL) | F(OP_F_DEV_TYPE) | F(OP_F_DEV_ID)) != 0)
        return -1;
    int64_t th = thread_of(im);
    if (th < 0) return nomem(im);
    op_mem_event *m = op_trace_add_mem(im->t, (uint32_t)th, ev->ts_ns, op_raw_has(ev, OP_F_ADDR) ? ev->addr : 0,
                                       ev->bytes);
    if (!m) return nomem(im);
    if (op_raw_has(ev, OP_F_TOTAL)) {
        m->total_allocated = ev->total;
        im->mem_totals++;
    }
    if (op_raw_has(ev, OP_F_DEV_TYPE) && ev->dev_type >= INT8_MIN && ev->dev_type <= INT8_MAX)
        m->device_type = (int8_t)ev->dev_type;
    if (op_raw_has(ev, OP_F_DEV_ID) && ev->dev_id >= INT8_MIN && ev->dev_id <= INT8_MAX)
        m->device_id = (int8_t)ev->dev_id;
    im->t->options |= OP_TRACE_MEMORY;
    see_time(im, ev->ts_ns, ev->ts_ns);
    return 0;
}

/* thread_name metadata names a thread; anything unusable is just skipped,
 * since names only decorate. */
static int add_thread_name(op_importer *im)
{
    op_raw_event *ev = &im->ev;
    uint32_t need = F(OP_F_PID) | F(OP_F_TID) | F(OP_F_ARG_NAME);
    if ((ev->has & need) != need) return 0;
    int64_t th = thread_of(im);
    uint32_t name = op_trace_intern(im->t, op_raw_str(ev, ev->arg_name), ev->arg_name.len);
    if (th < 0 || name == UINT32_MAX) return nomem(im);
    im->t->threads[th].name = name;
    return 0;
}

static int name_is(const op_raw_event *ev, const char *lit)
{
    size_t n = strlen(lit);
    return op_raw_has(ev, OP_F_NAME) && ev->name.len == n && memcmp(op_raw_str(ev, ev->name), lit, n) == 0;
}

int op_import_event(op_importer *im)
{
    op_raw_event *ev = &im->ev;
    switch (ev->ph) {
    case 'X': return ev->cat == OP_RCAT_SKIP ? 0 : add_complete(im);
    case 'B': return add_begin(im);
    case 'E': return add_end(im);
    case 'i':
    case 'I': return name_is(ev, "[memory]") ? add_memory(im) : 0;
    case 'M': return name_is(ev, "thread_name") ? add_thread_name(im) : 0;
    case 'P': /* a sampled CPU profile's stacks (opprof exec --sample): counted, not kept */
        if (name_is(ev, "ProfileChunk")) im->t->samples_skipped++;
        return 0;
    default: return 0;
    }
}

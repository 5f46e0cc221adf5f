/* From capture buffers to the event model: decode every thread's records of
 * one session generation into a trace. Runs at stop (or at the end of a
 * schedule cycle), never on the hot path. */
#include <stdlib.h>
#include <string.h>

#include "capture/memtrack.h"
#include "capture/pool.h"
#include "capture/thread.h"
#include "common/error.h"
#include "common/vec.h"
#include "model/collect.h"
#include "model/collect_agg.h"
#include "model/gaps.h"
#include "model/model.h"
#include "model/recnames.h"
#include "model/stacks.h"

#define LOAD(p) OP_LOAD(p)

typedef struct collector {
    opprof_trace *tr;
    const op_timebase *tb;
    uint32_t opts;
    op_recnames names;
    op_stack_map stacks;
    op_gaps gaps; /* the current thread's gap records */
    /* The current thread's input tuples recorded in full, in order: their
     * payloads' raw ids in names, for the records that refer back
     * (capture/format.h: OP_EXT_INPUTS_REF). */
    uint32_t *tuples;
    size_t ntuples, cap_tuples;
    uint64_t recorded;
    /* The current thread's events still open at the record being decoded,
     * with their end ticks: a memory record belongs to the innermost. Ticks,
     * not nanoseconds: a free a few ticks after an end can round to the
     * same nanosecond, and only the ticks keep the order. */
    struct open_ev {
        int32_t ev;
        uint64_t end;
    } * open;
    size_t nopen, cap_open;
    unsigned chunks_decoded; /* full-size chunks, for op_chunk_decoded */
    int live;        /* a live read (a flight recorder's dump): the generation records on */
    int thread_open; /* the current thread records on: its ranges not ended are open, not ended by a stop */
} collector;

/* Nanoseconds of a tick of the current thread, its gaps taken out. */
static int64_t ns_of(collector *cl, uint64_t ticks)
{
    return op_timebase_ns(cl->tb, op_gaps_map(&cl->gaps, ticks));
}

/* Pops the events of the current thread that ended before tick t. */
static void open_pop_before(collector *cl, uint64_t t)
{
    while (cl->nopen && cl->open[cl->nopen - 1].end < t) cl->nopen--;
}

static int open_push(collector *cl, int32_t ev, uint64_t end)
{
    if (op_grow(&cl->open, &cl->cap_open, cl->nopen + 1, sizeof *cl->open)) return -1;
    cl->open[cl->nopen].ev = ev;
    cl->open[cl->nopen++].end = end;
    return 0;
}

static int tuple_push(collector *cl, uint32_t raw)
{
    if (op_grow(&cl->tuples, &cl->cap_tuples, cl->ntuples + 1, sizeof *cl->tuples)) return -1;
    cl->tuples[cl->ntuples++] = raw;
    return 0;
}

/* Decodes one record at p (within [p, end)); returns its length in words,
 * 0 when it is cut short (a record still being written). */
static size_t decode_record(collector *cl, uint32_t thread, const op_word *p, const op_word *end, uint64_t close_ticks,
                            uint64_t cap_ticks)
{
    size_t len = op_rec_len(p, end);
    if (!len) return 0;
    uint64_t w0 = LOAD(&p[0]);
    if (w0 == OP_REC_GAP) return len; /* read by the first pass */
    if (w0 == OP_REC_MEM) {
        uint64_t ticks = LOAD(&p[1]);
        op_mem_event *m = op_trace_add_mem(cl->tr, thread, ns_of(cl, ticks), LOAD(&p[2]),
                                           (int64_t)LOAD(&p[3]));
        if (!m) return SIZE_MAX;
        open_pop_before(cl, ticks);
        m->enclosing = cl->nopen ? cl->open[cl->nopen - 1].ev : -1;
        cl->recorded++;
        return len;
    }
    uint64_t hdr = (w0 & OP_REC_EXT) ? LOAD(&p[3]) : 0;
    const opprof_site *site = op_rec_site(w0);
    uint64_t t0 = LOAD(&p[1]), t1 = LOAD(&p[2]);
    int forced = (w0 & OP_REC_FORCED) != 0;
    int still_open = 0;
    if (t1 == OP_OPEN) {
        t1 = close_ticks;
        forced = 1;
        still_open = cl->thread_open;
    }
    uint32_t name = op_recnames_site(&cl->names, cl->tr, site);
    if (name == UINT32_MAX) return SIZE_MAX;
    int64_t s = ns_of(cl, t0), e = ns_of(cl, t1);
    op_event *ev = op_trace_add_event(cl->tr, thread, name, (int)site->category, s, e - s);
    if (!ev) return SIZE_MAX;
    if (forced) ev->flags |= OPPROF_EVENT_FORCED_END;
    if (still_open) ev->flags |= OP_EV_OPEN;
    if (forced && cap_ticks && t1 == cap_ticks) ev->flags |= OPPROF_EVENT_CAPPED;
    open_pop_before(cl, t0);
    if (open_push(cl, (int32_t)(cl->tr->nev - 1), t1) != 0) return SIZE_MAX;
    cl->recorded++;
    if (hdr) {
        op_evx *x = op_evx_add(cl->tr, ev); /* the record's extension: the event's cold part */
        if (!x) return SIZE_MAX;
        uint64_t flops = (hdr & OP_EXT_HAS_FLOPS) ? LOAD(&p[OP_EXT_FLOPS_AT]) : UINT64_MAX;
        if (hdr & OP_EXT_HAS_STACK) {
            uint32_t st = op_stack_map_get(&cl->stacks, cl->tr, LOAD(&p[op_ext_stack_at(hdr)]));
            if (st == UINT32_MAX) return SIZE_MAX;
            x->stack = st;
        }
        const op_word *q = p + op_ext_args_at(hdr);
        if (hdr & OP_EXT_HAS_ARGS) {
            uint32_t w = op_recnames_args(&cl->names, cl->tr, q, (size_t)(p + len - q), &x->args);
            if (w == UINT32_MAX) return SIZE_MAX;
            if (w == 0) { /* malformed: keep the event without its args; its tuple keeps its number */
                if (OP_EXT_NINPUTS(hdr) && !(hdr & OP_EXT_INPUTS_REF) && (cl->opts & OP_OPT_SHAPES) &&
                    tuple_push(cl, UINT32_MAX) != 0)
                    return SIZE_MAX;
                return len;
            }
            q += w;
        }
        unsigned n = OP_EXT_NINPUTS(hdr);
        uint32_t payload = (uint32_t)(p + len - q);
        uint32_t raw = UINT32_MAX; /* a reference's tuple; UINT32_MAX: none known */
        if (n && (hdr & OP_EXT_INPUTS_REF)) {
            uint32_t ord = OP_EXT_REF(hdr);
            if (ord < cl->ntuples && cl->tuples[ord] != UINT32_MAX) {
                raw = cl->tuples[ord];
                op_recnames_raw_strings(&cl->names, raw, &x->shapes, &x->types);
            }
        } else if (n && (cl->opts & OP_OPT_SHAPES)) {
            if (op_recnames_inputs(&cl->names, cl->tr, q, n, payload, &x->shapes, &x->types, &raw) != 0) return SIZE_MAX;
            if (tuple_push(cl, raw) != 0) return SIZE_MAX;
        }
        if (cl->opts & OP_OPT_FLOPS) {
            if (flops != UINT64_MAX) {
                x->flops = flops;
            } else if (site->flops) {
                opprof_input in[OPPROF_MAX_INPUTS];
                unsigned got = !(hdr & OP_EXT_INPUTS_REF) ? op_recnames_decode_inputs(q, n, in)
                               : raw != UINT32_MAX        ? op_recnames_raw_inputs(&cl->names, raw, in)
                                                          : 0;
                x->flops = site->flops(in, got);
            }
        }
    }
    return len;
}

/* The shapes of an aggregating session's slot, through the same cache as
 * the records' (op_shapes_fn). */
static uint32_t agg_shapes(void *ctx, const uint64_t *enc, unsigned n, uint32_t nwords)
{
    collector *cl = ctx;
    uint32_t shapes, types;
    return op_recnames_inputs(&cl->names, cl->tr, enc, n, nwords, &shapes, &types, NULL) == 0 ? shapes : UINT32_MAX;
}

/* The model stack of an aggregating session's slot, through the same map
 * as the records' (op_stack_fn). */
static uint32_t agg_stack(void *ctx, uint64_t entry)
{
    collector *cl = ctx;
    return op_stack_map_get(&cl->stacks, cl->tr, entry);
}

/* The first pass over a thread that wrote gap records: collects them, so
 * that every timestamp of the second can be corrected, ends included. */
static int read_gaps(collector *cl, op_tstate *t)
{
    for (op_chunk *c = t->head; c;) {
        op_chunk *next;
        const op_word *end = op_chunk_data(t, c, &next);
        if (!end) continue;
        for (const op_word *p = c->words; p < end;) {
            size_t len = op_rec_len(p, end);
            if (!len) break;
            if (LOAD(&p[0]) == OP_REC_GAP && op_gaps_add(&cl->gaps, LOAD(&p[1]), LOAD(&p[2])) != 0) return -1;
            p += len;
        }
        c = next;
    }
    return 0;
}

/* A thread's dropped begins, added to the trace's counts by name. */
static int count_drops(collector *cl, const op_dropsite *tab)
{
    opprof_trace *tr = cl->tr;
    for (size_t i = 0; i < OP_DROP_SLOTS; i++) {
        const opprof_site *site = OP_LOAD(&tab[i].site);
        if (!site) continue;
        uint32_t name = op_recnames_site(&cl->names, tr, site);
        if (name == UINT32_MAX) return -1;
        if (name >= tr->ndropped_calls) { /* by name id: the new ones 0 */
            size_t n = tr->ndropped_calls;
            if (op_grow(&tr->dropped_calls, &n, (size_t)name + 1, sizeof *tr->dropped_calls)) return -1;
            memset(tr->dropped_calls + tr->ndropped_calls, 0, (n - tr->ndropped_calls) * sizeof *tr->dropped_calls);
            tr->ndropped_calls = n;
        }
        tr->dropped_calls[name] += OP_LOAD(&tab[i].n);
    }
    return 0;
}

static int collect_thread(collector *cl, op_tstate *t, uint64_t stop_ticks)
{
    int64_t ti = op_trace_thread(cl->tr, t->pid, t->tid);
    if (ti < 0) return -1;
    if (t->name[0]) cl->tr->threads[ti].name = op_trace_intern(cl->tr, t->name, strlen(t->name));
    int dead = atomic_load_explicit(&t->dead, memory_order_acquire);
    uint64_t close_ticks = dead ? t->exit_ticks : stop_ticks;
    cl->thread_open = cl->live && !dead;
    if (cl->opts & OP_OPT_AGG) {
        cl->tr->dropped += atomic_load_explicit(&t->dropped, memory_order_relaxed);
        return op_collect_agg_thread(cl->tr, t, cl->tb, close_ticks, agg_shapes, agg_stack, cl);
    }
    cl->nopen = 0;
    cl->gaps.n = 0;
    cl->ntuples = 0;
    if (OP_LOAD(&t->has_gaps) && read_gaps(cl, t) != 0) return -1;
    const op_word *until = t->ring_until; /* a frozen ring is read up to where it was at the freeze */
    /* A closed generation's chunks are not written again: their pages can go as they are decoded. */
    int closed = !until && t->gen != op_gen_load_acquire();
    for (op_chunk *c = t->head; c;) {
        op_chunk *next;
        const op_word *end;
        int last = until && until >= c->words && until <= c->words + c->nwords;
        if (last) {
            next = atomic_load_explicit(&c->next, memory_order_acquire);
            end = until;
        } else if (!(end = op_chunk_data(t, c, &next))) {
            continue; /* the writer moved on meanwhile: next and end are set now */
        }
        for (const op_word *p = c->words; p < end;) {
            size_t len = decode_record(cl, (uint32_t)ti, p, end, close_ticks, OP_LOAD(&t->cap_ticks));
            if (len == SIZE_MAX) return -1;
            if (len == 0) break;
            p += len;
        }
        /* The tail too: a thread that has not yet seen the close and still
         * writes there only faults a page in again, past what was read. */
        if (closed && !last) op_chunk_decoded(c, &cl->chunks_decoded);
        c = last ? NULL : next;
    }
    cl->tr->dropped += atomic_load_explicit(&t->dropped, memory_order_relaxed);
    const op_dropsite *drops = __atomic_load_n(&t->drops, __ATOMIC_ACQUIRE);
    return drops ? count_drops(cl, drops) : 0;
}

/* At most one event per three record words (a range is three, memory
 * and gap records more): the events the session's chunks can hold, for one
 * block reserved before decoding instead of an array grown by doubling. */
static size_t events_bound(uint64_t gen)
{
    size_t words = 0;
    for (op_tstate *t = op_registry_first(); t; t = t->next)
        if (t->gen == gen)
            for (op_chunk *c = t->head; c; c = atomic_load_explicit(&c->next, memory_order_acquire))
                words += c->nwords;
    return words / 3;
}

int op_collect(uint64_t gen, const op_timebase *tb, uint64_t stop_ticks, uint32_t opts, opprof_trace **out)
{
    *out = NULL;
    opprof_trace *tr = op_trace_new();
    if (!tr) return op_fail(OPPROF_E_NOMEM, "out of memory collecting the session");
    collector cl = {.tr = tr, .tb = tb, .opts = opts, .live = gen == op_gen_load_acquire()};
    int rc = op_recnames_init(&cl.names);
    op_registry_lock();
    if (rc == 0 && !(opts & OP_OPT_AGG) && op_trace_reserve_events(tr, events_bound(gen)) != 0) rc = -1;
    for (op_tstate *t = op_registry_first(); t && rc == 0; t = t->next)
        if (t->gen == gen) rc = collect_thread(&cl, t, stop_ticks);
    /* A live read (a flight recorder's dump) leaves the exited threads for
     * the next: their rings go under the recorder's budget (capture/ring.h). */
    if (!cl.live) op_registry_reap(gen);
    op_registry_unlock();
    op_collect_agg_sort(tr);
    op_trace_fit_events(tr);
    op_recnames_fini(&cl.names);
    op_stack_map_free(&cl.stacks);
    free(cl.open);
    free(cl.tuples);
    op_gaps_free(&cl.gaps);
    if (rc != 0) {
        opprof_trace_free(tr);
        return op_fail(OPPROF_E_NOMEM, "out of memory collecting the session");
    }
    op_collect_options(tr, tb, opts, cl.recorded);
    *out = tr;
    return OPPROF_OK;
}

void op_collect_options(opprof_trace *tr, const op_timebase *tb, uint32_t opts, uint64_t recorded)
{
    tr->base_time_ns = tb->wall0;
    tr->attempted = recorded + tr->dropped;
    if (opts & OP_OPT_SHAPES) tr->options |= OP_TRACE_SHAPES;
    if (opts & OP_OPT_MEMORY) {
        tr->options |= OP_TRACE_MEMORY;
        op_memtrack_counts c;
        op_memtrack_counts_get(&c);
        tr->mem_unknown_frees = c.unknown_frees;
        tr->mem_double_frees = c.double_frees;
        tr->mem_reallocs = c.reallocs;
    }
    if (opts & OP_OPT_FLOPS) tr->options |= OP_TRACE_FLOPS;
    if (opts & OP_OPT_STACK) tr->options |= OP_TRACE_STACK;
    else if (opts & OP_OPT_PATHS) tr->options |= OP_TRACE_PATHS;
}

/* From capture buffers to the event model: decode every thread's records of
 * one session generation into a trace. Runs at stop (or at the end of a
 * schedule cycle), never on the hot path. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/memtrack.h"
#include "capture/state.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/map.h"
#include "common/jsonesc.h"
#include "model/collect.h"
#include "model/collect_agg.h"
#include "model/gaps.h"
#include "model/model.h"
#include "model/stacks.h"

#define LOAD(p) OP_LOAD(p)

/* site address -> name id, so that each event costs a probe, not a hash of
 * its name. */
static uint32_t site_name(op_map *m, opprof_trace *tr, const opprof_site *s)
{
    uint32_t id;
    if (op_map_get_u32(m, (uint64_t)(uintptr_t)s, &id)) return id;
    const char *name = s->name ? s->name : "(null)";
    id = op_trace_intern(tr, name, strlen(name));
    if (id == UINT32_MAX || op_map_put(m, (uint64_t)(uintptr_t)s, id) != 0) return UINT32_MAX;
    return id;
}

/* Input payloads seen so far -> their shape and type strings. */
typedef struct shape_cache {
    op_strtab raw;    /* binary payload -> id */
    uint32_t *shapes; /* raw id -> shape string id */
    uint32_t *types;  /* raw id -> type string id */
    size_t cap;
} shape_cache;

/* Decodes an extension's inputs into opprof_input form. */
static unsigned decode_inputs(const op_word *desc, unsigned n, opprof_input *in)
{
    const op_word *dims = desc + (n + 3) / 4;
    for (unsigned i = 0; i < n; i++) {
        uint64_t w = LOAD(&desc[i / 4]);
        unsigned d = (unsigned)(w >> (16 * (i % 4))) & 0xffffu;
        in[i].dtype = (uint8_t)(d >> 8);
        in[i].ndim = (uint8_t)(d & 0xff);
        for (unsigned k = 0; k < in[i].ndim; k++) in[i].dims[k] = (int64_t)LOAD(dims++);
    }
    return n;
}

static int format_inputs(opprof_trace *tr, const opprof_input *in, unsigned n, uint32_t *shapes, uint32_t *types)
{
    op_buf s = {0}, ty = {0};
    char num[32];
    int rc = op_buf_puts(&s, "[");
    rc |= op_buf_puts(&ty, "[");
    for (unsigned i = 0; i < n; i++) {
        if (i) {
            rc |= op_buf_puts(&s, ", ");
            rc |= op_buf_puts(&ty, ", ");
        }
        rc |= op_buf_puts(&s, "[");
        for (unsigned k = 0; k < in[i].ndim; k++) {
            int len = snprintf(num, sizeof num, "%s%" PRId64, k ? ", " : "", in[i].dims[k]);
            rc |= op_buf_put(&s, num, (size_t)len);
        }
        rc |= op_buf_puts(&s, "]");
        rc |= op_buf_puts(&ty, "\"");
        rc |= op_buf_puts(&ty, opprof_dtype_name(in[i].dtype));
        rc |= op_buf_puts(&ty, "\"");
    }
    rc |= op_buf_puts(&s, "]");
    rc |= op_buf_puts(&ty, "]");
    if (rc == 0) {
        *shapes = op_trace_intern(tr, s.p, s.n);
        *types = op_trace_intern(tr, ty.p, ty.n);
        if (*shapes == UINT32_MAX || *types == UINT32_MAX) rc = -1;
    }
    op_buf_free(&s);
    op_buf_free(&ty);
    return rc;
}

/* The shape and type strings of an input payload; *raw (when not NULL)
 * gets the payload's id in c->raw, for the records that refer to it. */
static int cached_inputs(shape_cache *c, opprof_trace *tr, const op_word *desc, unsigned n, uint32_t payload_words,
                         uint32_t *shapes, uint32_t *types, uint32_t *raw)
{
    uint64_t buf[OP_MAX_RECORD_WORDS + 1];
    buf[0] = n;
    for (uint32_t i = 0; i < payload_words && i < OP_MAX_RECORD_WORDS; i++) buf[i + 1] = LOAD(&desc[i]);
    uint32_t id = op_strtab_intern(&c->raw, (const char *)buf, (payload_words + 1) * sizeof(uint64_t));
    if (id == UINT32_MAX) return -1;
    if (id >= c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 256;
        while (cap <= id) cap *= 2;
        uint32_t *s = realloc(c->shapes, cap * sizeof *s);
        if (!s) return -1;
        c->shapes = s;
        uint32_t *t = realloc(c->types, cap * sizeof *t);
        if (!t) return -1;
        c->types = t;
        for (size_t i = c->cap; i < cap; i++) c->shapes[i] = UINT32_MAX;
        c->cap = cap;
    }
    if (c->shapes[id] == UINT32_MAX) {
        opprof_input in[OPPROF_MAX_INPUTS];
        decode_inputs(desc, n, in);
        if (format_inputs(tr, in, n, &c->shapes[id], &c->types[id]) != 0) {
            c->shapes[id] = UINT32_MAX;
            return -1;
        }
    }
    *shapes = c->shapes[id];
    *types = c->types[id];
    if (raw) *raw = id;
    return 0;
}

/* Decodes the inputs of a payload interned in c->raw (count word first). */
static unsigned raw_inputs(const shape_cache *c, uint32_t raw, opprof_input *in)
{
    uint64_t buf[OP_MAX_RECORD_WORDS + 1] = {0};
    size_t len = op_strtab_len(&c->raw, raw);
    if (len > sizeof buf) len = sizeof buf;
    memcpy(buf, op_strtab_get(&c->raw, raw), len);
    return len >= sizeof(uint64_t) && buf[0] <= OPPROF_MAX_INPUTS ? decode_inputs(buf + 1, (unsigned)buf[0], in) : 0;
}

/* Appends s as a JSON string. */
static int text_json_str(op_buf *b, const char *s)
{
    if (!s) s = "";
    size_t n = strlen(s);
    if (op_buf_reserve(b, op_json_escaped_max(n)) != 0) return -1;
    b->n = (size_t)(op_json_escape(b->p + b->n, s, n) - b->p);
    b->p[b->n] = '\0';
    return 0;
}

/* An args block (state.h) as the model's JSON members, `"k": v, ...`.
 * Returns the block's length in words, 0 when it does not fit in avail. */
static uint32_t decode_args(opprof_trace *tr, op_buf *b, const op_word *p, size_t avail, uint32_t *out)
{
    if (avail < 1) return 0;
    uint64_t head = LOAD(&p[0]);
    unsigned n = OP_ARGS_COUNT(head);
    if (n > OPPROF_MAX_ARGS || avail < OP_ARGS_WORDS(n)) return 0;
    b->n = 0;
    int rc = 0;
    char num[40];
    for (unsigned i = 0; i < n; i++) {
        const char *key = (const char *)(uintptr_t)LOAD(&p[1 + 2 * i]);
        uint64_t v = LOAD(&p[2 + 2 * i]);
        if (i) rc |= op_buf_puts(b, ", ");
        rc |= text_json_str(b, key);
        rc |= op_buf_puts(b, ": ");
        switch (OP_ARGS_TYPE(head, i)) {
        case OPPROF_ARG_DOUBLE: {
            double d;
            memcpy(&d, &v, sizeof d);
            if (d != d || d - d != 0) {
                rc |= op_buf_puts(b, "null");
                break;
            }
            /* The shortest of 15 or 17 digits that reads back the same. */
            snprintf(num, sizeof num, "%.15g", d);
            if (strtod(num, NULL) != d) snprintf(num, sizeof num, "%.17g", d);
            rc |= op_buf_puts(b, num);
            break;
        }
        case OPPROF_ARG_STR: rc |= text_json_str(b, (const char *)(uintptr_t)v); break;
        default:
            snprintf(num, sizeof num, "%" PRId64, (int64_t)v);
            rc |= op_buf_puts(b, num);
            break;
        }
    }
    if (rc) return UINT32_MAX;
    *out = op_trace_intern(tr, b->p ? b->p : "", b->n);
    return *out == UINT32_MAX ? UINT32_MAX : OP_ARGS_WORDS(n);
}

/* Names, shapes and args as records name them: the collector's, and a
 * reader's of records outside op_collect (collect.h). */
struct op_recnames {
    op_map sites; /* site address -> name id (site_name) */
    shape_cache shapes;
    op_buf args; /* scratch for decode_args */
};

static int names_init(op_recnames *n)
{
    return op_strtab_init(&n->shapes.raw) == 0 ? 0 : -1;
}

static void names_free(op_recnames *n)
{
    op_map_free(&n->sites);
    op_strtab_free(&n->shapes.raw);
    free(n->shapes.shapes);
    free(n->shapes.types);
    op_buf_free(&n->args);
}

typedef struct collector {
    opprof_trace *tr;
    const op_timebase *tb;
    uint32_t opts;
    op_recnames names;
    op_stack_map stacks;
    op_gaps gaps; /* the current thread's gap records */
    /* The current thread's input tuples recorded in full, in order: their
     * payloads' ids in shapes.raw, for the records that refer back
     * (state.h: OP_EXT_INPUTS_REF). */
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
} collector;

/* Nanoseconds of a tick of the current thread, its gaps taken out. */
static int64_t ns_of(collector *cl, uint64_t ticks)
{
    return op_timebase_ns(cl->tb, cl->gaps.n ? op_gaps_apply(&cl->gaps, ticks) : ticks);
}

/* Pops the events of the current thread that ended before tick t. */
static void open_pop_before(collector *cl, uint64_t t)
{
    while (cl->nopen && cl->open[cl->nopen - 1].end < t) cl->nopen--;
}

static int open_push(collector *cl, int32_t ev, uint64_t end)
{
    if (cl->nopen == cl->cap_open) {
        size_t cap = cl->cap_open ? cl->cap_open * 2 : 64;
        struct open_ev *o = realloc(cl->open, cap * sizeof *o);
        if (!o) return -1;
        cl->open = o;
        cl->cap_open = cap;
    }
    cl->open[cl->nopen].ev = ev;
    cl->open[cl->nopen++].end = end;
    return 0;
}

static int tuple_push(collector *cl, uint32_t raw)
{
    if (cl->ntuples == cl->cap_tuples) {
        size_t cap = cl->cap_tuples ? cl->cap_tuples * 2 : 64;
        uint32_t *v = realloc(cl->tuples, cap * sizeof *v);
        if (!v) return -1;
        cl->tuples = v;
        cl->cap_tuples = cap;
    }
    cl->tuples[cl->ntuples++] = raw;
    return 0;
}

/* Decodes one record at p (within [p, end)); returns its length in words,
 * 0 when it is cut short (a record still being written). */
static size_t decode_record(collector *cl, uint32_t thread, const op_word *p, const op_word *end, uint64_t close_ticks,
                            uint64_t cap_ticks)
{
    uint64_t w0 = LOAD(&p[0]);
    if (w0 == OP_REC_GAP) return end - p < 3 ? 0 : 3; /* read by the first pass */
    if (w0 == OP_REC_MEM) {
        if (end - p < 4) return 0;
        uint64_t ticks = LOAD(&p[1]);
        op_mem_event *m = op_trace_add_mem(cl->tr, thread, ns_of(cl, ticks), LOAD(&p[2]),
                                           (int64_t)LOAD(&p[3]));
        if (!m) return SIZE_MAX;
        open_pop_before(cl, ticks);
        m->enclosing = cl->nopen ? cl->open[cl->nopen - 1].ev : -1;
        cl->recorded++;
        return 4;
    }
    size_t len = 3;
    uint64_t hdr = 0;
    if (w0 & OP_REC_EXT) {
        if (end - p < 4) return 0;
        hdr = LOAD(&p[3]);
        len = 4 + OP_EXT_WORDS(hdr);
        if ((size_t)(end - p) < len) return 0;
    } else if (end - p < 3) {
        return 0;
    }
    const opprof_site *site = (const opprof_site *)(uintptr_t)(w0 & ~(uint64_t)OP_REC_FLAGS);
    uint64_t t0 = LOAD(&p[1]), t1 = LOAD(&p[2]);
    int forced = (w0 & OP_REC_FORCED) != 0;
    if (t1 == OP_OPEN) {
        t1 = close_ticks;
        forced = 1;
    }
    uint32_t name = site_name(&cl->names.sites, cl->tr, site);
    if (name == UINT32_MAX) return SIZE_MAX;
    int64_t s = ns_of(cl, t0), e = ns_of(cl, t1);
    op_event *ev = op_trace_add_event(cl->tr, thread, name, (int)site->category, s, e - s);
    if (!ev) return SIZE_MAX;
    if (forced) ev->flags |= OPPROF_EVENT_FORCED_END;
    if (forced && cap_ticks && t1 == cap_ticks) ev->flags |= OPPROF_EVENT_CAPPED;
    open_pop_before(cl, t0);
    if (open_push(cl, (int32_t)(cl->tr->nev - 1), t1) != 0) return SIZE_MAX;
    cl->recorded++;
    if (hdr) {
        op_evx *x = op_evx_add(cl->tr, ev); /* the record's extension: the event's cold part */
        if (!x) return SIZE_MAX;
        const op_word *q = p + 4;
        uint64_t flops = UINT64_MAX;
        if (hdr & OP_EXT_HAS_FLOPS) flops = LOAD(q++);
        if (hdr & OP_EXT_HAS_STACK) {
            uint32_t st = op_stack_map_get(&cl->stacks, cl->tr, LOAD(q++));
            if (st == UINT32_MAX) return SIZE_MAX;
            x->stack = st;
        }
        if (hdr & OP_EXT_HAS_ARGS) {
            uint32_t w = decode_args(cl->tr, &cl->names.args, q, (size_t)(p + len - q), &x->args);
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
                x->shapes = cl->names.shapes.shapes[raw];
                x->types = cl->names.shapes.types[raw];
            }
        } else if (n && (cl->opts & OP_OPT_SHAPES)) {
            if (cached_inputs(&cl->names.shapes, cl->tr, q, n, payload, &x->shapes, &x->types, &raw) != 0) return SIZE_MAX;
            if (tuple_push(cl, raw) != 0) return SIZE_MAX;
        }
        if (cl->opts & OP_OPT_FLOPS) {
            if (flops != UINT64_MAX) {
                x->flops = flops;
            } else if (site->flops) {
                opprof_input in[OPPROF_MAX_INPUTS];
                unsigned got = !(hdr & OP_EXT_INPUTS_REF) ? decode_inputs(q, n, in)
                               : raw != UINT32_MAX        ? raw_inputs(&cl->names.shapes, raw, in)
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
    return cached_inputs(&cl->names.shapes, cl->tr, enc, n, nwords, &shapes, &types, NULL) == 0 ? shapes : UINT32_MAX;
}

/* The model stack of an aggregating session's slot, through the same map
 * as the records' (op_stack_fn). */
static uint32_t agg_stack(void *ctx, uint64_t entry)
{
    collector *cl = ctx;
    return op_stack_map_get(&cl->stacks, cl->tr, entry);
}

/* Where chunk c's data ends, and the chunk after it; NULL when the writer
 * left c meanwhile (read it again: its end is published now). */
static const op_word *chunk_data(op_tstate *t, op_chunk *c, op_chunk **next)
{
    *next = atomic_load_explicit(&c->next, memory_order_acquire);
    const op_word *end = atomic_load_explicit(&c->end, memory_order_acquire);
    if (*next) return end;
    const op_word *cur = atomic_load_explicit(&t->cur, memory_order_acquire);
    return cur >= c->words && cur <= c->words + c->nwords ? cur : NULL;
}

/* The first pass over a thread that wrote gap records: collects them, so
 * that every timestamp of the second can be corrected, ends included. */
static int read_gaps(collector *cl, op_tstate *t)
{
    for (op_chunk *c = t->head; c;) {
        op_chunk *next;
        const op_word *end = chunk_data(t, c, &next);
        if (!end) continue;
        for (const op_word *p = c->words; p < end;) {
            uint64_t w0 = LOAD(&p[0]);
            size_t len = w0 == OP_REC_MEM ? 4 : 3; /* memory, gap, plain range */
            if (w0 & OP_REC_EXT) len = end - p >= 4 ? 4 + OP_EXT_WORDS(LOAD(&p[3])) : 4;
            if ((size_t)(end - p) < len) break;
            if (w0 == OP_REC_GAP && op_gaps_add(&cl->gaps, LOAD(&p[1]), LOAD(&p[2])) != 0) return -1;
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
        uint32_t name = site_name(&cl->names.sites, tr, site);
        if (name == UINT32_MAX) return -1;
        if (name >= tr->ndropped_calls) {
            size_t n = tr->ndropped_calls ? tr->ndropped_calls : 64;
            while (n <= name) n *= 2;
            uint64_t *d = realloc(tr->dropped_calls, n * sizeof *d);
            if (!d) return -1;
            memset(d + tr->ndropped_calls, 0, (n - tr->ndropped_calls) * sizeof *d);
            tr->dropped_calls = d;
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
    uint64_t close_ticks = atomic_load_explicit(&t->dead, memory_order_acquire) ? t->exit_ticks : stop_ticks;
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
        } else if (!(end = chunk_data(t, c, &next))) {
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
    collector cl = {.tr = tr, .tb = tb, .opts = opts};
    int rc = names_init(&cl.names);
    op_registry_lock();
    if (rc == 0 && !(opts & OP_OPT_AGG) && op_trace_reserve_events(tr, events_bound(gen)) != 0) rc = -1;
    for (op_tstate *t = op_registry_first(); t && rc == 0; t = t->next)
        if (t->gen == gen) rc = collect_thread(&cl, t, stop_ticks);
    op_registry_reap(gen);
    op_registry_unlock();
    op_collect_agg_sort(tr);
    op_trace_fit_events(tr);
    names_free(&cl.names);
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

op_recnames *op_recnames_new(void)
{
    op_recnames *n = calloc(1, sizeof *n);
    if (n && names_init(n) != 0) {
        free(n);
        return NULL;
    }
    return n;
}

void op_recnames_free(op_recnames *n)
{
    if (!n) return;
    names_free(n);
    free(n);
}

uint32_t op_recnames_site(op_recnames *n, opprof_trace *tr, const opprof_site *s)
{
    return site_name(&n->sites, tr, s);
}

int op_recnames_inputs(op_recnames *n, opprof_trace *tr, const op_word *desc, unsigned nin, uint32_t payload_words,
                       uint32_t *shapes, uint32_t *types)
{
    return cached_inputs(&n->shapes, tr, desc, nin, payload_words, shapes, types, NULL);
}

uint32_t op_recnames_args(op_recnames *n, opprof_trace *tr, const op_word *p, size_t avail, uint32_t *out)
{
    return decode_args(tr, &n->args, p, avail, out);
}

unsigned op_recnames_decode_inputs(const op_word *desc, unsigned n, opprof_input *in)
{
    return decode_inputs(desc, n, in);
}

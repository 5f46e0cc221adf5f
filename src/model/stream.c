/* Reading a streamed session's records as they come (stream.h). Runs on
 * the trace's writer thread, never on a recording thread. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "capture/agg.h"
#include "capture/spill.h"
#include "common/compiler.h"
#include "common/map.h"
#include "common/vec.h"
#include "model/collect.h"
#include "model/collect_agg.h"
#include "model/gaps.h"
#include "model/recnames.h"
#include "model/stacks.h"
#include "model/stream.h"

#define LOAD(p) OP_LOAD(p)

typedef struct frame {
    const op_word *rec;
    op_chunk *pin;  /* the reader's chunk holding rec; NULL in the thread's own list */
    uint32_t stack; /* with_stack: its stack in the reader's trace (index + 1), 0 none */
    uint32_t name;  /* with begins: its name's id, found at the begin; UINT32_MAX not yet */
    uint32_t keep;  /* op_sdec_filter: 1 an event, 0 filtered out, 2 decided when done, 3 the sink's */
} frame;

typedef struct sthread {
    op_tstate *key;
    int64_t pid, tid;
    uint32_t ti;       /* index in the reader's trace */
    op_tstate *shadow; /* the thread's sums: agg.c works on a thread state */
    uint64_t now;      /* the shadow's clock: the time being replayed */
    uint64_t dropped;
    op_gaps gaps;
    op_chunk *pins;    /* chunks kept for open ranges, oldest first, linked by next */
    int ended;         /* op_sdec_rest ran */
    uint32_t nfr;
    size_t cap_fr;
    frame *fr; /* grown to the depth met (a program's many short threads are shallow) */
} sthread;

struct op_sdec {
    op_timebase tb;
    uint32_t opts;
    opprof_trace *tr;
    op_recnames names;
    op_stack_map stacks; /* with_stack: the threads' stack entries as the trace's stacks */
    sthread **th;
    size_t nth, cap_th;
    op_map index; /* thread state's address -> index in th */
    uint64_t recorded;
    int64_t mem_total;
    int begins;                  /* op_sdec_keep_begins: a begin becomes an event too */
    int64_t min_ns;              /* op_sdec_filter's, 0 none */
    uint32_t max_depth;
    OP_VEC(uint32_t) order;      /* the batch's items as read, with begins */
    const op_sdec_sink *sink;    /* op_sdec_direct's, or NULL */
    struct {                     /* a sink's names by site, direct-mapped before the map's probe */
        const opprof_site *site;
        uint32_t name;
    } named[64];
    unsigned nrun;               /* the sink's items not yet handed to it, all read before the batch's items */
    op_sdec_item run[OP_SDEC_RUN];
};

/* The sink's items read so far: to it. */
static int run_flush(op_sdec *d)
{
    unsigned n = d->nrun;
    d->nrun = 0;
    return n ? d->sink->ranges(d->sink->ctx, d->tr, d->run, n) : 0;
}

/* A plain range's begin or end for the sink: the batch's items read
 * before it go first (after the run before them), so the run holds only
 * items read after the last of those. */
static OP_ALWAYS_INLINE int sink_put(op_sdec *d, uint32_t th, uint32_t name, int cat, int64_t ts_ns)
{
    if (d->order.n && (run_flush(d) != 0 || d->sink->flush(d->sink->ctx) != 0)) return -1;
    if (d->nrun == OP_SDEC_RUN && run_flush(d) != 0) return -1;
    d->run[d->nrun++] = (op_sdec_item){ts_ns, th, name, cat};
    return 0;
}

static int64_t replay_clock(void *ctx)
{
    return (int64_t)*(const uint64_t *)ctx;
}

op_sdec *op_sdec_new(const op_timebase *tb, uint32_t opts)
{
    op_sdec *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->tb = *tb;
    d->opts = opts;
    d->tr = op_trace_new();
    if (!d->tr || op_recnames_init(&d->names) != 0) {
        op_sdec_free(d);
        return NULL;
    }
    return d;
}

static void pins_free(sthread *st)
{
    op_spill_free(st->pins);
    st->pins = NULL;
}

void op_sdec_free(op_sdec *d)
{
    if (!d) return;
    for (size_t i = 0; i < d->nth; i++) {
        sthread *st = d->th[i];
        pins_free(st);
        free(st->fr);
        op_gaps_free(&st->gaps);
        op_agg_free(st->shadow);
        munmap(st->shadow, sizeof *st->shadow);
        free(st);
    }
    free(d->th);
    op_map_free(&d->index);
    op_vec_free(&d->order);
    op_stack_map_free(&d->stacks);
    opprof_trace_free(d->tr);
    op_recnames_fini(&d->names);
    free(d);
}

static sthread *thread_new(op_sdec *d, op_tstate *t)
{
    sthread *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    st->key = t;
    st->pid = t->pid;
    st->tid = t->tid;
    void *p = mmap(NULL, sizeof(op_tstate), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int64_t ti = op_trace_thread(d->tr, st->pid, st->tid);
    if (p == MAP_FAILED || ti < 0) {
        if (p != MAP_FAILED) munmap(p, sizeof(op_tstate));
        free(st);
        return NULL;
    }
    st->ti = (uint32_t)ti;
    if (t->name[0]) d->tr->threads[ti].name = op_trace_intern(d->tr, t->name, strnlen(t->name, sizeof t->name));
    op_tstate *sh = p;
    sh->opts = (d->opts & (OP_OPT_SHAPES | OP_OPT_MEMORY | OP_OPT_FLOPS | OP_OPT_PATHS)) | OP_OPT_AGG;
    sh->clock = replay_clock;
    sh->clock_ctx = &st->now;
    st->shadow = sh;
    if (op_agg_reset(sh) != 0) {
        op_agg_free(sh);
        munmap(sh, sizeof *sh);
        free(st);
        return NULL;
    }
    return st;
}

static sthread *thread_of(op_sdec *d, op_tstate *t)
{
    uint32_t i;
    if (op_map_get_u32(&d->index, (uint64_t)(uintptr_t)t, &i)) return d->th[i];
    if (op_grow(&d->th, &d->cap_th, d->nth + 1, sizeof *d->th) || op_map_reserve(&d->index, d->nth + 1)) return NULL;
    sthread *st = thread_new(d, t);
    if (!st) return NULL;
    op_map_put(&d->index, (uint64_t)(uintptr_t)t, d->nth); /* reserved: cannot fail */
    d->th[d->nth++] = st;
    return st;
}

static inline int64_t ns_of(const op_sdec *d, sthread *st, uint64_t ticks)
{
    return op_timebase_ns(&d->tb, op_gaps_map(&st->gaps, ticks));
}

/* A range is done: its event, and its end replayed into the sums. */
static OP_ALWAYS_INLINE int range_done(op_sdec *d, sthread *st, const frame *fr, uint64_t t1, int forced)
{
    const op_word *p = fr->rec;
    uint64_t w0 = LOAD(&p[0]);
    const opprof_site *site = op_rec_site(w0);
    uint64_t t0 = LOAD(&p[1]);
    if (w0 & OP_REC_FORCED) forced = 1;
    uint64_t hdr = (w0 & OP_REC_EXT) ? LOAD(&p[3]) : 0;
    uint64_t flops = (hdr & OP_EXT_HAS_FLOPS) ? LOAD(&p[OP_EXT_FLOPS_AT]) : UINT64_MAX;
    if (flops == UINT64_MAX) (void)op_agg_end_fast(st->shadow, site, t1);
    else (void)op_agg_end(st->shadow, site, t1, 1, flops);
    int64_t e = ns_of(d, st, t1);
    d->recorded++;
    if (fr->keep == 3) return sink_put(d, st->ti, OP_SDEC_END, 0, e);
    int64_t s = ns_of(d, st, t0);
    if (fr->keep == 0 || (fr->keep == 2 && !d->begins && e - s < d->min_ns)) {
        d->tr->filtered++;
        return 0;
    }
    uint32_t name = fr->name != UINT32_MAX ? fr->name : op_recnames_site(&d->names, d->tr, site);
    if (name == UINT32_MAX) return -1;
    op_event *ev = op_trace_add_event(d->tr, st->ti, name, (int)site->category, s, e - s);
    if (!ev || (d->begins && op_vec_push(&d->order, (uint32_t)(d->tr->nev - 1)) != 0)) return -1;
    if (forced) ev->flags |= OPPROF_EVENT_FORCED_END;
    if (!hdr) return 0;
    op_evx *x = op_evx_add(d->tr, ev);
    if (!x) return -1;
    if (!d->begins) x->stack = fr->stack; /* with begins: the begin's */
    size_t len = OP_REC_HEAD_WORDS + OP_EXT_WORDS(hdr);
    const op_word *end = p + len;
    if (hdr & OP_EXT_HAS_ARGS) {
        const op_word *a = p + op_ext_args_at(hdr);
        if (op_recnames_args(&d->names, d->tr, a, (size_t)(end - a), &x->args) == UINT32_MAX) return -1;
    }
    const op_word *q = p + op_ext_inputs_at(p, hdr, len);
    unsigned n = OP_EXT_NINPUTS(hdr);
    if (n && (d->opts & OP_OPT_SHAPES) && !d->begins && /* with begins: the begin's */
        op_recnames_inputs(&d->names, d->tr, q, n, (uint32_t)(end - q), &x->shapes, &x->types, NULL) != 0)
        return -1;
    if (d->opts & OP_OPT_FLOPS) {
        if (flops != UINT64_MAX) {
            x->flops = flops;
        } else if (site->flops) {
            opprof_input in[OPPROF_MAX_INPUTS];
            x->flops = site->flops(in, op_recnames_decode_inputs(q, n, in));
        }
    }
    return 0;
}

/* Ends the ranges on the stack that ended before ts (at ts too when
 * inclusive: a range that begins as another ends is its sibling). */
static OP_ALWAYS_INLINE int pop_done(op_sdec *d, sthread *st, uint64_t ts, int inclusive)
{
    while (st->nfr) {
        const op_word *rec = st->fr[st->nfr - 1].rec;
        uint64_t t1 = __atomic_load_n(&rec[2], __ATOMIC_ACQUIRE);
        if (t1 == OP_OPEN || t1 > ts || (!inclusive && t1 == ts)) break;
        if (range_done(d, st, &st->fr[st->nfr - 1], t1, 0) != 0) return -1;
        st->nfr--;
    }
    return 0;
}

/* With begins: the range's begin as an event flagged OP_EV_OPENING, with
 * what is known of it then (name, category, shapes); the rest (its end,
 * FLOPs, args) comes with the complete event when it is done. */
static int begin_event(op_sdec *d, sthread *st, const op_word *p, size_t len, const opprof_site *site, uint64_t t0,
                       uint32_t stack)
{
    uint32_t name = op_recnames_site(&d->names, d->tr, site);
    if (name == UINT32_MAX) return -1;
    st->fr[st->nfr - 1].name = name; /* for its end */
    op_event *ev = op_trace_add_event(d->tr, st->ti, name, (int)site->category, ns_of(d, st, t0), 0);
    if (!ev || op_vec_push(&d->order, (uint32_t)(d->tr->nev - 1)) != 0) return -1;
    ev->flags |= OP_EV_OPENING;
    uint64_t w0 = LOAD(&p[0]);
    if (!(w0 & OP_REC_EXT)) return 0;
    uint64_t hdr = LOAD(&p[3]);
    unsigned n = (d->opts & OP_OPT_SHAPES) ? OP_EXT_NINPUTS(hdr) : 0;
    if (!n && !stack) return 0;
    op_evx *x = op_evx_add(d->tr, ev);
    if (!x) return -1;
    x->stack = stack;
    const op_word *end = p + len, *q = p + op_ext_inputs_at(p, hdr, len);
    return !n || op_recnames_inputs(&d->names, d->tr, q, n, (uint32_t)(end - q), &x->shapes, &x->types, NULL) == 0
               ? 0
               : -1;
}

static OP_ALWAYS_INLINE int range_begin(op_sdec *d, sthread *st, const op_word *p, size_t len, op_chunk *pin)
{
    uint64_t w0 = LOAD(&p[0]), t0 = LOAD(&p[1]);
    if (pop_done(d, st, t0, 1) != 0) return -1;
    if (st->nfr == OP_MAX_DEPTH) return 0; /* deeper than the thread can record: not a record of ours */
    if (op_grow(&st->fr, &st->cap_fr, (size_t)st->nfr + 1, sizeof *st->fr) != 0) return -1;
    const opprof_site *site = op_rec_site(w0);
    opprof_input in[OPPROF_MAX_INPUTS];
    unsigned n = 0;
    uint32_t stack = 0;
    if (w0 & OP_REC_EXT) {
        uint64_t hdr = LOAD(&p[3]);
        n = OP_EXT_NINPUTS(hdr);
        if (n > OPPROF_MAX_INPUTS) n = OPPROF_MAX_INPUTS;
        if (n) op_recnames_decode_inputs(p + op_ext_inputs_at(p, hdr, len), n, in);
        /* The stack entry lives as long as its thread's state, which may
         * go before the range is done: it becomes the trace's stack now. */
        if ((hdr & OP_EXT_HAS_STACK) && len > op_ext_stack_at(hdr)) {
            stack = op_stack_map_get(&d->stacks, d->tr, LOAD(&p[op_ext_stack_at(hdr)]));
            if (stack == UINT32_MAX) return -1;
        }
    }
    uint32_t keep = 1;
    if (d->max_depth && st->nfr >= d->max_depth) {
        keep = 0;
    } else if (d->min_ns) {
        uint64_t t1 = __atomic_load_n(&p[2], __ATOMIC_ACQUIRE);
        keep = t1 == OP_OPEN ? 2 : ns_of(d, st, t1) - ns_of(d, st, t0) >= d->min_ns;
    }
    if (keep && d->sink && !(w0 & OP_REC_EXT)) keep = 3; /* a plain range: straight to the writer */
    st->fr[st->nfr++] = (frame){p, pin, stack, UINT32_MAX, keep};
    st->now = t0;
    /* Keyed by the trace's stack: equal stacks are one key, and the key
     * outlives the thread's stack table. */
    op_aggopen *o = !n && !stack ? op_agg_open_fast(st->shadow, site) : NULL; /* most ranges */
    if (o) o->t0 = t0;
    else op_agg_begin_keyed(st->shadow, site, n ? in : NULL, n, stack);
    if (keep == 3) {
        unsigned k = (unsigned)((uintptr_t)site >> 4) & 63;
        uint32_t name = d->named[k].name;
        if (d->named[k].site != site) {
            name = op_recnames_site(&d->names, d->tr, site);
            d->named[k].site = site;
            d->named[k].name = name;
        }
        if (name == UINT32_MAX) return -1;
        return sink_put(d, st->ti, name, (int)site->category, ns_of(d, st, t0));
    }
    return d->begins && keep ? begin_event(d, st, p, len, site, t0, stack) : 0;
}

static int memory_event(op_sdec *d, sthread *st, const op_word *p)
{
    uint64_t ts = LOAD(&p[1]);
    int64_t bytes = (int64_t)LOAD(&p[3]);
    if (pop_done(d, st, ts, 0) != 0) return -1; /* a free after an end at the same tick is not its */
    op_agg_memory(st->shadow, bytes, ts);
    op_mem_event *m = op_trace_add_mem(d->tr, st->ti, ns_of(d, st, ts), LOAD(&p[2]), bytes);
    if (!m) return -1;
    d->mem_total += bytes; /* live bytes in the order the writer reads them */
    m->total_allocated = d->mem_total;
    m->enclosing = -1;
    d->recorded++;
    if (d->begins && op_vec_push(&d->order, (uint32_t)(d->tr->nmem - 1) | OP_ORDER_MEM) != 0) return -1;
    return 0;
}

/* Reads the records in [p, end); 0 or -1. */
static int read_records(op_sdec *d, sthread *st, const op_word *p, const op_word *end, op_chunk *pin)
{
    while (p < end) {
        size_t len = op_rec_len(p, end);
        if (!len) break; /* a record still being written */
        uint64_t w0 = LOAD(&p[0]);
        int rc = 0;
        if (w0 == OP_REC_GAP) {
            uint64_t from = LOAD(&p[1]), to = LOAD(&p[2]);
            rc = pop_done(d, st, from, 1);
            if (rc == 0) rc = op_gaps_add(&st->gaps, from, to);
            if (rc == 0) op_agg_gap(st->shadow, from, to);
        } else if (w0 == OP_REC_MEM) {
            rc = memory_event(d, st, p);
        } else {
            rc = range_begin(d, st, p, len, pin);
        }
        if (rc != 0) return -1;
        p += len;
    }
    return 0;
}

static int pinned(const sthread *st, const op_chunk *c)
{
    for (uint32_t i = 0; i < st->nfr; i++)
        if (st->fr[i].pin == c) return 1;
    return 0;
}

/* Gives back the kept chunks that no open range needs any more. */
static void pins_release(sthread *st)
{
    op_chunk *keep = NULL, *last = NULL;
    for (op_chunk *c = st->pins; c;) {
        op_chunk *next = atomic_load_explicit(&c->next, memory_order_relaxed);
        atomic_store_explicit(&c->next, NULL, memory_order_relaxed);
        if (pinned(st, c)) {
            if (last) atomic_store_explicit(&last->next, c, memory_order_relaxed);
            else keep = c;
            last = c;
        } else {
            op_spill_free(c);
        }
        c = next;
    }
    st->pins = keep;
}

static void pins_append(sthread *st, op_chunk *c)
{
    if (!st->pins) {
        st->pins = c;
        return;
    }
    op_chunk *last = st->pins, *n;
    while ((n = atomic_load_explicit(&last->next, memory_order_relaxed))) last = n;
    atomic_store_explicit(&last->next, c, memory_order_relaxed);
}

int op_sdec_chunks(op_sdec *d, op_tstate *t, op_chunk *chunks)
{
    sthread *st = thread_of(d, t);
    int rc = st ? 0 : -1;
    for (op_chunk *c = chunks; c;) {
        op_chunk *next = atomic_load_explicit(&c->next, memory_order_acquire);
        const op_word *end = atomic_load_explicit(&c->end, memory_order_acquire);
        atomic_store_explicit(&c->next, NULL, memory_order_relaxed);
        if (rc == 0 && end) rc = read_records(d, st, c->words, end, c);
        if (rc == 0 && pinned(st, c)) pins_append(st, c);
        else op_spill_free(c);
        c = next;
    }
    if (st) pins_release(st);
    if (rc == 0 && d->sink && run_flush(d) != 0) rc = -1; /* before the caller writes the batch's items */
    return rc;
}

/* Ends every range still on the stack, the open ones at close_ticks.
 * Returns 1 when one was open, 0, or -1. */
static int close_all(op_sdec *d, sthread *st, uint64_t close_ticks)
{
    int open = 0;
    while (st->nfr) {
        const op_word *rec = st->fr[st->nfr - 1].rec;
        uint64_t t1 = __atomic_load_n(&rec[2], __ATOMIC_ACQUIRE);
        int forced = t1 == OP_OPEN;
        if (forced) {
            t1 = close_ticks;
            open = 1;
        }
        if (range_done(d, st, &st->fr[st->nfr - 1], t1, forced) != 0) return -1;
        st->nfr--;
    }
    return open;
}

int op_sdec_rest(op_sdec *d, op_tstate *t, uint64_t close_ticks)
{
    sthread *st = thread_of(d, t);
    if (!st) return -1;
    st->dropped = atomic_load_explicit(&t->dropped, memory_order_relaxed);
    for (op_chunk *c = t->head; c;) {
        op_chunk *next;
        const op_word *end = op_chunk_data(t, c, &next); /* the current chunk's ends at the cursor */
        if (end && read_records(d, st, c->words, end, NULL) != 0) return -1;
        c = next;
    }
    int open = close_all(d, st, close_ticks);
    if (open < 0 || (d->sink && run_flush(d) != 0)) return -1;
    /* A late end of a range open now may still store into its record: its
     * chunk goes back to the thread, which frees it in its next session. */
    if (open) op_spill_return(t, st->pins);
    else op_spill_free(st->pins);
    st->pins = NULL;
    st->ended = 1;
    return 0;
}

opprof_trace *op_sdec_trace(op_sdec *d)
{
    return d->tr;
}

void op_sdec_clear(op_sdec *d)
{
    d->tr->nev = 0;
    d->tr->nmem = 0;
    d->tr->nevx = 0;
    d->order.n = 0;
}

int op_sdec_batch_init(op_sdec_batch *b)
{
    memset(b, 0, sizeof *b);
    b->tr = op_trace_new();
    return b->tr ? 0 : -1;
}

void op_sdec_batch_free(op_sdec_batch *b)
{
    opprof_trace_free(b->tr);
    free(b->order);
    memset(b, 0, sizeof *b);
}

#define SWAP(T, a, b) \
    do {              \
        T t_ = (a);   \
        (a) = (b);    \
        (b) = t_;     \
    } while (0)

int op_sdec_hand(op_sdec *d, op_sdec_batch *b)
{
    opprof_trace *r = d->tr, *m = b->tr;
    if (op_trace_mirror(m, r) != OPPROF_OK) return -1;
    SWAP(op_event *, r->ev, m->ev);
    SWAP(size_t, r->cap_ev, m->cap_ev);
    SWAP(op_evx *, r->evx, m->evx);
    SWAP(size_t, r->cap_evx, m->cap_evx);
    SWAP(op_mem_event *, r->mem, m->mem);
    SWAP(size_t, r->cap_mem, m->cap_mem);
    SWAP(uint32_t *, d->order.v, b->order);
    SWAP(size_t, d->order.cap, b->cap);
    m->nev = r->nev;
    m->nevx = r->nevx;
    m->nmem = r->nmem;
    b->n = d->order.n;
    op_sdec_clear(d);
    return 0;
}

void op_sdec_keep_begins(op_sdec *d)
{
    d->begins = 1;
}

void op_sdec_direct(op_sdec *d, const op_sdec_sink *sink)
{
    d->sink = sink;
}

void op_sdec_filter(op_sdec *d, int64_t min_ns, uint32_t max_depth)
{
    d->min_ns = min_ns > 0 ? min_ns : 0;
    d->max_depth = max_depth;
    d->tr->filter_min_ns = d->min_ns;
    d->tr->filter_max_depth = max_depth;
}

const uint32_t *op_sdec_order(const op_sdec *d, size_t *n)
{
    *n = d->order.n;
    return d->order.v;
}

int op_sdec_end_rest(op_sdec *d, uint64_t stop_ticks)
{
    for (size_t i = 0; i < d->nth; i++) {
        sthread *st = d->th[i];
        if (st->ended) continue;
        /* Its thread went before the end (it exited and its state was freed
         * once the session stopped): nothing writes into its records now. */
        if (close_all(d, st, stop_ticks) < 0) return -1;
        pins_free(st);
        st->ended = 1;
    }
    return 0;
}

typedef struct rows_ctx {
    op_recnames names;
    opprof_trace *tr;
    const opprof_trace *from; /* the reader's trace, whose stacks the sums are keyed by */
    uint32_t *stack_of;       /* its stack k + 1 -> tr's, 0 not yet */
} rows_ctx;

static uint32_t row_shapes(void *ctx, const uint64_t *enc, unsigned n, uint32_t nwords)
{
    rows_ctx *c = ctx;
    uint32_t shapes, types;
    return op_recnames_inputs(&c->names, c->tr, enc, n, nwords, &shapes, &types, NULL) == 0 ? shapes : UINT32_MAX;
}

/* A key's stack (the reader's trace's, index + 1) as the session trace's. */
static uint32_t row_stack(void *ctx, uint64_t key)
{
    rows_ctx *c = ctx;
    if (!key || key > c->from->nstacks) return 0;
    if (!c->stack_of[key - 1] && !(c->stack_of[key - 1] = op_trace_copy_stack(c->tr, c->from, key - 1)))
        return UINT32_MAX;
    return c->stack_of[key - 1];
}

int op_sdec_finish(op_sdec *d, const op_timebase *tb, uint64_t stop_ticks, opprof_trace **out)
{
    *out = NULL;
    opprof_trace *tr = op_trace_new();
    rows_ctx sc = {.tr = tr, .from = d->tr, .stack_of = calloc(d->tr->nstacks ? d->tr->nstacks : 1, sizeof(uint32_t))};
    int rc = op_recnames_init(&sc.names) == 0 && tr && sc.stack_of ? 0 : -1;
    for (size_t i = 0; i < d->nth && rc == 0; i++) {
        sthread *st = d->th[i];
        int64_t ti = rc == 0 ? op_trace_thread(tr, st->pid, st->tid) : -1;
        if (ti < 0) {
            rc = -1;
            break;
        }
        const op_thread *from = &d->tr->threads[st->ti];
        if (from->name) {
            tr->threads[ti].name = op_trace_intern(tr, op_strtab_get(&d->tr->str, from->name),
                                                   op_strtab_len(&d->tr->str, from->name));
            if (tr->threads[ti].name == UINT32_MAX) rc = -1;
        }
        tr->dropped += st->dropped;
        if (rc == 0) rc = op_collect_agg_thread(tr, st->shadow, tb, stop_ticks, row_shapes, row_stack, &sc);
    }
    op_recnames_fini(&sc.names);
    free(sc.stack_of);
    if (rc != 0) {
        opprof_trace_free(tr);
        return -1;
    }
    op_collect_agg_sort(tr);
    op_collect_options(tr, tb, d->opts & ~(uint32_t)OP_OPT_STREAM, d->recorded);
    *out = tr;
    return 0;
}

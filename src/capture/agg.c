/* Online key averages on the recording thread (agg.h). */
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "capture/agg.h"
#include "capture/state.h"

/* 7 KiB: a program of 2000 short threads keeps each thread's table to the
 * end, so the first is small; a thread that meets more sites doubles it. */
#define FIRST_SLOTS 64u
#define AGG_BYTES (sizeof(op_agg) + OP_MAX_DEPTH * sizeof(op_aggopen))
/* The first table lives in the same mapping, after the open ranges: one
 * system call per new thread, not two. */
#define AGG_MAP_BYTES (AGG_BYTES + FIRST_SLOTS * sizeof(op_aggslot))

static op_aggslot *first_slots(op_agg *a)
{
    return (op_aggslot *)(void *)((char *)a + AGG_BYTES);
}

static void unmap_slots(op_agg *a, op_aggslot *s, uint64_t mask)
{
    if (s != first_slots(a)) munmap(s, (mask + 1) * sizeof(op_aggslot));
}

/* Mapped, not malloc'd: this runs inside a malloc interposer too. */
static void *map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

#define SHAPE_BLOCK_WORDS 8192 /* 64 KiB */

static void free_old(op_agg *a)
{
    for (unsigned i = 0; i < a->nold; i++) unmap_slots(a, a->old[i], a->old_mask[i]);
    a->nold = 0;
    while (a->sblocks) {
        uint64_t *next = (uint64_t *)(uintptr_t)a->sblocks[0];
        munmap(a->sblocks, SHAPE_BLOCK_WORDS * sizeof(uint64_t));
        a->sblocks = next;
    }
    a->sp = a->slim = NULL;
}

/* A copy of a shape encoding for a new slot; NULL when out of memory. */
static const uint64_t *keep_shapes(op_agg *a, const uint64_t *w, uint32_t n)
{
    if (a->sp + n > a->slim) {
        uint64_t *b = map(SHAPE_BLOCK_WORDS * sizeof(uint64_t)); /* > the largest encoding */
        if (!b) return NULL;
        b[0] = (uint64_t)(uintptr_t)a->sblocks;
        a->sblocks = b;
        a->sp = b + 1;
        a->slim = b + SHAPE_BLOCK_WORDS;
    }
    uint64_t *p = a->sp;
    memcpy(p, w, n * sizeof *w);
    a->sp += n;
    return p;
}

static _Atomic uint64_t g_comp_inside, g_comp_call;

void op_agg_compensate(uint64_t inside, uint64_t call)
{
    atomic_store_explicit(&g_comp_inside, inside, memory_order_relaxed);
    atomic_store_explicit(&g_comp_call, call, memory_order_relaxed);
}

int op_agg_reset(op_tstate *t)
{
    op_agg *a = t->agg;
    if (!a) {
        a = map(AGG_MAP_BYTES); /* zero; the open ranges' pages fault in as the depth first reaches them */
        if (!a) return -1;
        memset(a, 0, sizeof *a + 8 * sizeof(op_aggopen)); /* the header's page faults here, not in the first ranges */
        t->agg = a;
    }
    free_old(a);
    if (!a->slots) {
        a->slots = first_slots(a);
        a->mask = FIRST_SLOTS - 1;
    }
    memset(a->slots, 0, (a->mask + 1) * sizeof(op_aggslot));
    a->n = 0;
    a->free_count = 0;
    a->free_bytes = 0;
    a->free_first = 0;
    a->nbegun = 0;
    a->comp_inside = atomic_load_explicit(&g_comp_inside, memory_order_relaxed);
    a->comp_call = atomic_load_explicit(&g_comp_call, memory_order_relaxed);
    return 0;
}

void op_agg_free(op_tstate *t)
{
    op_agg *a = t->agg;
    if (!a) return;
    free_old(a);
    if (a->slots) unmap_slots(a, a->slots, a->mask);
    munmap(a, AGG_MAP_BYTES);
    t->agg = NULL;
}

/* A site with no shapes (enc NULL), or with these: the input count, and
 * the encoding of nwords words hashing to shash; and its stack entry (0
 * none), which the stack table keeps once per distinct stack, so that
 * equal addresses are equal stacks. */
typedef struct key {
    const opprof_site *site;
    uint64_t shash;
    const uint64_t *enc;
    uint32_t nin, nwords;
    uint64_t stack;
} key;

static int same_key(const op_aggslot *s, const key *k)
{
    return s->site == k->site && s->shash == k->shash && s->stack == k->stack && s->nin == k->nin &&
           s->nwords == k->nwords && (!k->nwords || !memcmp(s->shapes, k->enc, k->nwords * sizeof *k->enc));
}

/* The slot of k, or the empty one where it goes. */
static op_aggslot *probe(op_aggslot *slots, uint64_t mask, const key *k)
{
    size_t i = op_agg_hash(k->site, k->shash, k->stack, mask);
    while (slots[i].site && !same_key(&slots[i], k)) i = (i + 1) & mask;
    return &slots[i];
}

static key key_of(const op_aggslot *s)
{
    return (key){s->site, s->shash, s->shapes, s->nin, s->nwords, s->stack};
}

/* Doubles the table (a new site found it half full). The old table stays
 * mapped until the next session, for a collector that may still read it;
 * the open ranges move to the new slots. */
static int grow(op_tstate *t)
{
    op_agg *a = t->agg;
    if (a->nold == OP_AGG_OLD_MAX) return -1;
    uint64_t mask = a->mask * 2 + 1;
    op_aggslot *s = map((mask + 1) * sizeof(op_aggslot));
    if (!s) return -1;
    for (uint64_t i = 0; i <= a->mask; i++) {
        if (!a->slots[i].site) continue;
        key k = key_of(&a->slots[i]);
        *probe(s, mask, &k) = a->slots[i];
    }
    for (uint32_t d = 0; d < t->depth; d++) {
        op_aggopen *o = &a->open[d];
        if (!o->slot) continue;
        key k = key_of(o->slot);
        OP_STORE(&o->slot, probe(s, mask, &k));
    }
    a->old[a->nold] = a->slots;
    a->old_mask[a->nold++] = a->mask;
    OP_STORE(&a->mask, mask);
    __atomic_store_n(&a->slots, s, __ATOMIC_RELEASE);
    return 0;
}

static op_aggslot *slot_for(op_tstate *t, const key *k, int *fresh)
{
    op_agg *a = t->agg;
    op_aggslot *s = probe(a->slots, a->mask, k);
    *fresh = 0;
    if (OP_LIKELY(s->site != NULL)) return s;
    if ((a->n + 1) * 2 > a->mask + 1) {
        if (grow(t) != 0) return NULL;
        s = probe(a->slots, a->mask, k);
    }
    const uint64_t *enc = NULL;
    if (k->nwords && !(enc = keep_shapes(a, k->enc, k->nwords))) return NULL;
    a->n++;
    *fresh = 1;
    s->shash = k->shash;
    s->shapes = enc;
    s->nin = k->nin;
    s->nwords = k->nwords;
    s->stack = k->stack;
    s->id = a->n;
    __atomic_store_n(&s->site, k->site, __ATOMIC_RELEASE); /* the rest before it, for the collector */
    return s;
}

/* The inputs as the event path records them (record.c's begin_ext): dtype
 * and ndim four to a word, then the dims, at most OPPROF_MAX_INPUTS inputs
 * of OPPROF_MAX_DIMS dims. Returns the words written. */
static uint32_t encode_inputs(const opprof_input *in, unsigned n, uint64_t *out)
{
    uint32_t ndesc = (n + 3) / 4, w = ndesc;
    for (uint32_t i = 0; i < ndesc; i++) out[i] = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned nd = in[i].ndim <= OPPROF_MAX_DIMS ? in[i].ndim : OPPROF_MAX_DIMS;
        out[i / 4] |= (uint64_t)((unsigned)in[i].dtype << 8 | nd) << (16 * (i % 4));
        for (unsigned k = 0; k < nd; k++) out[w++] = (uint64_t)in[i].dims[k];
    }
    return w;
}

/* The site's FLOPs for these inputs, as the collector of events computes
 * them: dims past OPPROF_MAX_DIMS and inputs past OPPROF_MAX_INPUTS are not
 * recorded, so they are not given to the hook either. */
static uint64_t hook_flops(const opprof_site *site, const opprof_input *in, unsigned n)
{
    opprof_input cut[OPPROF_MAX_INPUTS];
    if (!in) n = 0;
    if (n > OPPROF_MAX_INPUTS) n = OPPROF_MAX_INPUTS;
    for (unsigned i = 0; i < n; i++) {
        cut[i] = in[i];
        if (cut[i].ndim > OPPROF_MAX_DIMS) cut[i].ndim = OPPROF_MAX_DIMS;
    }
    return site->flops(cut, n);
}

static inline void begin_keyed(op_tstate *t, const opprof_site *site, const opprof_input *in, unsigned n,
                               uint64_t stack)
{
    uint32_t d = t->depth;
    if (d >= OP_MAX_DEPTH) {
        t->overflow++;
        atomic_store_explicit(&t->dropped, atomic_load_explicit(&t->dropped, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        return;
    }
    uint64_t enc[OPPROF_MAX_INPUTS / 4 + OPPROF_MAX_INPUTS * OPPROF_MAX_DIMS];
    if (t->opts & OP_OPT_PATHS) { /* the call path: the parent's node (never with with_stack) */
        const op_aggslot *up = d ? t->agg->open[d - 1].slot : NULL;
        stack = up ? up->id : 0;
    }
    key k = {site, 0, enc, 0, 0, stack};
    if ((t->opts & OP_OPT_SHAPES) && in && n) {
        k.nin = n <= OPPROF_MAX_INPUTS ? n : OPPROF_MAX_INPUTS;
        k.nwords = encode_inputs(in, k.nin, enc);
        uint64_t h = 0xcbf29ce484222325ull ^ k.nin;
        for (uint32_t i = 0; i < k.nwords; i++) h = (h ^ enc[i]) * 0x100000001b3ull;
        k.shash = h ? h : 1;
    }
    int fresh;
    op_aggslot *s = slot_for(t, &k, &fresh);
    op_aggopen *o = &t->agg->open[d];
    OP_STORE(&o->site, site);
    OP_STORE(&o->slot, s);
    OP_STORE(&o->child, 0);
    OP_STORE(&o->first, (uint64_t)fresh);
    OP_STORE(&o->n0, t->agg->nbegun);
    OP_STORE(&t->agg->nbegun, t->agg->nbegun + 1);
    OP_STORE(&o->flops, (t->opts & OP_OPT_FLOPS) && site->flops ? hook_flops(site, in, n) : 0);
    OP_STORE(&o->self_mem, 0);
    OP_STORE(&o->child_mem, 0);
    OP_STORE(&t->depth, d + 1);
    uint64_t t0 = op_now(t);
    if (fresh) OP_STORE(&s->first_t0, t0);
    OP_STORE(&o->t0, t0);
}

void op_agg_begin(op_tstate *t, const opprof_site *site, const opprof_input *in, unsigned n, const void *ra)
{
    /* As the event path: the walk before t0, so that it is not counted. */
    uint64_t stack = (t->opts & OP_OPT_STACK) && t->depth < OP_MAX_DEPTH ? op_stack_capture(&t->stacks, ra) : 0;
    begin_keyed(t, site, in, n, stack);
}

void op_agg_begin_keyed(op_tstate *t, const opprof_site *site, const opprof_input *in, unsigned n, uint64_t stack)
{
    begin_keyed(t, site, in, n, stack);
}

/* Ends open range d at ts: its sums, and its time to its parent. */
static void close_one(op_agg *a, uint32_t d, uint64_t ts)
{
    op_aggopen *o = &a->open[d];
    uint64_t dur = op_agg_comp_dur(a, o, ts - o->t0);
    op_aggslot *s = o->slot;
    if (OP_LIKELY(s != NULL)) {
        OP_STORE(&s->count, s->count + 1);
        OP_STORE(&s->total, s->total + dur);
        OP_STORE(&s->self, s->self + op_agg_self(dur, o->child));
        if (o->first) OP_STORE(&s->first_t1, ts);
        OP_STORE(&s->flops, s->flops + o->flops);
        OP_STORE(&s->self_mem, s->self_mem + o->self_mem);
        OP_STORE(&s->mem, s->mem + o->self_mem + o->child_mem);
    }
    if (d) {
        op_aggopen *p = &a->open[d - 1];
        OP_STORE(&p->child, p->child + dur);
        OP_STORE(&p->child_mem, p->child_mem + o->self_mem + o->child_mem);
    }
}

int op_agg_end(op_tstate *t, const opprof_site *site, uint64_t ts, int has_flops, uint64_t flops)
{
    if (t->overflow) {
        t->overflow--;
        return OPPROF_OK;
    }
    op_agg *a = t->agg;
    uint32_t k = t->depth;
    while (k > 0 && a->open[k - 1].site != site) k--;
    if (k == 0) return OPPROF_E_UNBALANCED;
    if (has_flops && (t->opts & OP_OPT_FLOPS)) OP_STORE(&a->open[k - 1].flops, flops);
    /* Ranges above it end with it (forced, as in the event path). */
    for (uint32_t d = t->depth; d-- > k - 1;) close_one(a, d, ts);
    OP_STORE(&t->depth, k - 1);
    return OPPROF_OK;
}

void op_agg_gap(op_tstate *t, uint64_t from, uint64_t to)
{
    op_agg *a = t->agg;
    for (uint32_t d = 0; d < t->depth; d++) {
        op_aggopen *o = &a->open[d];
        if (o->t0 <= from) OP_STORE(&o->t0, o->t0 + (to - from));
    }
}

void op_agg_memory(op_tstate *t, int64_t bytes, uint64_t ts)
{
    op_agg *a = t->agg;
    uint32_t d = t->depth;
    if (d) {
        op_aggopen *o = &a->open[d - 1];
        OP_STORE(&o->self_mem, o->self_mem + bytes);
        return;
    }
    if (!a->free_count) OP_STORE(&a->free_first, ts);
    OP_STORE(&a->free_bytes, a->free_bytes + bytes);
    OP_STORE(&a->free_count, a->free_count + 1);
}

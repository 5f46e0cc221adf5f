/* The recording hot path: begin, end, inputs, memory events.
 *
 * Rules (DESIGN.md): no lock, no allocation, no system call, no string copy.
 * A plain begin is a generation check, one clock read, three stores into the
 * thread's buffer and a push on its open stack; end is a pop, a clock read and
 * one store. Everything unusual goes to a noinline slow path. */
#include <string.h>

#include "capture/state.h"

#define STORE(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)
#define LOAD(p) atomic_load_explicit((p), memory_order_relaxed)

static inline void push_open(op_tstate *t, op_word *rec, const opprof_site *site)
{
    uint32_t d = t->depth;
    t->stack[d].rec = rec;
    t->stack[d].site = site;
    t->depth = d + 1;
}

/* Returns the state for generation g, attaching when needed. */
static inline op_tstate *state_for(uint64_t g)
{
    op_tstate *t = op_tls;
    if (OP_LIKELY(t != NULL && t->gen == g)) return t;
    return op_thread_attach(g);
}

/* Room check for a begin: depth, cap budget and buffer space. Returns the
 * write position, or NULL when the begin is to be dropped or ignored. */
static op_word *begin_room(op_tstate *t, const opprof_site *site, uint32_t words)
{
    if (t->depth >= OP_MAX_DEPTH || t->overflow) {
        /* Too deep to keep: drop it and remember to swallow its end. */
        t->overflow++;
        STORE(&t->dropped, LOAD(&t->dropped) + 1);
        return NULL;
    }
    if (op_thread_reserve(t, words) != 0) {
        push_open(t, NULL, site);
        return NULL;
    }
    return atomic_load_explicit(&t->cur, memory_order_relaxed);
}

/* Writes a range record with an extension: inputs and the optional flops
 * and stack slots. */
static void begin_ext(op_tstate *t, const opprof_site *site, const opprof_input *in, unsigned n)
{
    if (n > OPPROF_MAX_INPUTS) n = OPPROF_MAX_INPUTS;
    if (!(t->opts & (OP_OPT_SHAPES | OP_OPT_FLOPS))) n = 0;
    uint32_t ndims = 0;
    for (unsigned i = 0; i < n; i++) ndims += in[i].ndim <= OPPROF_MAX_DIMS ? in[i].ndim : OPPROF_MAX_DIMS;
    uint64_t hdr = (uint64_t)n << 16;
    uint32_t payload = (n + 3) / 4 + ndims;
    if (t->opts & OP_OPT_FLOPS) {
        hdr |= OP_EXT_HAS_FLOPS;
        payload++;
    }
    hdr |= payload;
    op_word *c = begin_room(t, site, 4 + payload);
    if (!c) return;
    op_word *p = c + 4;
    if (hdr & OP_EXT_HAS_FLOPS) STORE(p++, UINT64_MAX);
    for (unsigned i = 0; i < n; i += 4) {
        uint64_t w = 0;
        for (unsigned j = 0; j < 4 && i + j < n; j++) {
            unsigned nd = in[i + j].ndim <= OPPROF_MAX_DIMS ? in[i + j].ndim : OPPROF_MAX_DIMS;
            w |= (uint64_t)((unsigned)in[i + j].dtype << 8 | nd) << (16 * j);
        }
        STORE(p++, w);
    }
    for (unsigned i = 0; i < n; i++) {
        unsigned nd = in[i].ndim <= OPPROF_MAX_DIMS ? in[i].ndim : OPPROF_MAX_DIMS;
        for (unsigned k = 0; k < nd; k++) STORE(p++, (uint64_t)in[i].dims[k]);
    }
    STORE(&c[0], (uint64_t)(uintptr_t)site | OP_REC_EXT);
    STORE(&c[2], OP_OPEN);
    STORE(&c[3], hdr);
    push_open(t, c, site);
    uint64_t ts = op_now(t);
    STORE(&c[1], ts);
    t->budget--;
    atomic_store_explicit(&t->cur, p, memory_order_release);
}

static OP_NOINLINE void begin_slow(uint64_t g, const opprof_site *site, const opprof_input *in, unsigned n)
{
    op_tstate *t = state_for(g);
    if (!t) return;
    if (in || (t->opts & (OP_OPT_FLOPS | OP_OPT_STACK))) {
        begin_ext(t, site, in, in ? n : 0);
        return;
    }
    op_word *c = begin_room(t, site, 3);
    if (!c) return;
    STORE(&c[0], (uint64_t)(uintptr_t)site);
    STORE(&c[2], OP_OPEN);
    push_open(t, c, site);
    STORE(&c[1], op_now(t));
    t->budget--;
    atomic_store_explicit(&t->cur, c + 3, memory_order_release);
}

void opprof_begin(const opprof_site *site)
{
    uint64_t g = atomic_load_explicit(&op_g.gen, memory_order_relaxed);
    if (OP_LIKELY(g == 0)) return;
    op_tstate *t = op_tls;
    if (OP_UNLIKELY(t == NULL || t->fast_gen != g)) {
        begin_slow(g, site, NULL, 0);
        return;
    }
    op_word *c = atomic_load_explicit(&t->cur, memory_order_relaxed);
    uint32_t d = t->depth;
    if (OP_UNLIKELY(d >= OP_MAX_DEPTH || c + 3 > t->lim || t->budget <= 0 || t->overflow)) {
        begin_slow(g, site, NULL, 0);
        return;
    }
    t->stack[d].rec = c;
    t->stack[d].site = site;
    t->depth = d + 1;
    t->budget--;
    STORE(&c[0], (uint64_t)(uintptr_t)site);
    STORE(&c[2], OP_OPEN);
    STORE(&c[1], op_now(t));
    atomic_store_explicit(&t->cur, c + 3, memory_order_release);
}

void opprof_begin_inputs(const opprof_site *site, const opprof_input *inputs, unsigned n_inputs)
{
    uint64_t g = atomic_load_explicit(&op_g.gen, memory_order_relaxed);
    if (OP_LIKELY(g == 0)) return;
    op_tstate *t = op_tls;
    if (OP_UNLIKELY(t == NULL || t->gen != g)) {
        begin_slow(g, site, inputs, n_inputs);
        return;
    }
    if (!(t->opts & (OP_OPT_SHAPES | OP_OPT_FLOPS | OP_OPT_STACK)) || !inputs) {
        begin_slow(g, site, NULL, 0);
        return;
    }
    begin_ext(t, site, inputs, n_inputs);
}

/* Closes stack entry k and, flagged as forced, every entry above it. */
static void close_from(op_tstate *t, uint32_t k, uint64_t ts)
{
    for (uint32_t i = t->depth; i-- > k;) {
        op_word *rec = t->stack[i].rec;
        if (!rec) continue;
        if (i > k) STORE(&rec[0], LOAD(&rec[0]) | OP_REC_FORCED);
        STORE(&rec[2], ts);
    }
    t->depth = k;
}

static OP_NOINLINE int end_slow(uint64_t g, const opprof_site *site, int has_flops, uint64_t flops)
{
    op_tstate *t = op_tls;
    if (!t || t->gen != g) return OPPROF_E_UNBALANCED; /* begun before this session */
    uint64_t ts = op_now(t);
    if (t->overflow) {
        t->overflow--;
        return OPPROF_OK;
    }
    uint32_t k = t->depth;
    while (k > 0 && t->stack[k - 1].site != site) k--;
    if (k == 0) return OPPROF_E_UNBALANCED;
    op_word *rec = t->stack[k - 1].rec;
    if (has_flops && rec && (LOAD(&rec[0]) & OP_REC_EXT) && (LOAD(&rec[3]) & OP_EXT_HAS_FLOPS))
        STORE(&rec[4], flops);
    close_from(t, k - 1, ts);
    return OPPROF_OK;
}

int opprof_end(const opprof_site *site)
{
    uint64_t g = atomic_load_explicit(&op_g.gen, memory_order_relaxed);
    if (OP_LIKELY(g == 0)) return OPPROF_OK;
    op_tstate *t = op_tls;
    if (OP_UNLIKELY(t == NULL || t->gen != g)) return end_slow(g, site, 0, 0);
    uint64_t ts = op_now(t);
    uint32_t d = t->depth;
    if (OP_UNLIKELY(d == 0 || t->stack[d - 1].site != site || t->overflow)) return end_slow(g, site, 0, 0);
    op_word *rec = t->stack[d - 1].rec;
    t->depth = d - 1;
    if (OP_LIKELY(rec != NULL)) STORE(&rec[2], ts);
    return OPPROF_OK;
}

int opprof_end_flops(const opprof_site *site, uint64_t flops)
{
    uint64_t g = atomic_load_explicit(&op_g.gen, memory_order_relaxed);
    if (OP_LIKELY(g == 0)) return OPPROF_OK;
    return end_slow(g, site, 1, flops);
}

const opprof_site *opprof_annotation_begin(const char *name)
{
    const opprof_site *s = opprof_intern(name, OPPROF_CAT_USER_ANNOTATION);
    if (s) opprof_begin(s);
    return s;
}

void opprof_record_memory(const void *addr, int64_t bytes)
{
    uint64_t g = atomic_load_explicit(&op_g.gen, memory_order_relaxed);
    if (OP_LIKELY(g == 0)) return;
    op_tstate *t = state_for(g);
    if (!t || !(t->opts & OP_OPT_MEMORY)) return;
    if (op_thread_reserve(t, 4) != 0) return;
    op_word *c = atomic_load_explicit(&t->cur, memory_order_relaxed);
    STORE(&c[0], OP_REC_MEM);
    STORE(&c[1], op_now(t));
    STORE(&c[2], (uint64_t)(uintptr_t)addr);
    STORE(&c[3], (uint64_t)bytes);
    t->budget--;
    atomic_store_explicit(&t->cur, c + 4, memory_order_release);
}

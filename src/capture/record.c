/* The recording hot path: begin, end, inputs. Memory events are in memory.c.
 *
 * Rules (DESIGN.md): no lock, no allocation, no system call, no string copy.
 * A plain begin is a generation check, one clock read, three stores into the
 * thread's buffer and a push on its open stack; end is a pop, a clock read and
 * one store. Everything unusual goes to a noinline slow path.
 *
 * The header wraps these in inline functions that test opprof_active_ first,
 * so that code outside a session pays one load and one branch; the library
 * itself is built with OPPROF_BUILDING_LIBRARY and defines the real calls. */
#include <stddef.h>
#include <string.h>

#include "capture/agg.h"
#include "capture/reserve.h"
#include "capture/state.h"
#include "capture/thread.h"
#include "common/error.h"

/* API misuse is refused where it happens, with a reason; a NULL site would
 * otherwise reach the model, which reads the site's name. */
static OP_NOINLINE void refuse_null_site(const char *what)
{
    op_fail(OPPROF_E_INVAL, "opprof_%s: NULL site; nothing recorded", what);
}

static const char *site_label(const opprof_site *s)
{
    return s->name ? s->name : "(null)";
}

static inline void count_drop(op_tstate *t)
{
    atomic_store_explicit(&t->dropped, atomic_load_explicit(&t->dropped, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

static inline void push_open(op_tstate *t, op_word *rec, const opprof_site *site)
{
    uint32_t d = t->depth;
    t->stack[d].rec = rec;
    t->stack[d].site = site;
    t->depth = d + 1;
}

/* The unusual begins: too deep, cap reached, chunk full. Returns where to
 * write `words` words, or NULL when the begin is dropped (its end will be
 * swallowed). */
static OP_NOINLINE op_word *begin_room(op_tstate *t, const opprof_site *site, uint32_t words)
{
    if (t->depth >= OP_MAX_DEPTH) {
        t->overflow++;
        count_drop(t);
        op_drops_count(&t->drops, site);
        return NULL;
    }
    if (op_thread_reserve(t, words) != 0) {
        op_drops_count(&t->drops, site);
        push_open(t, NULL, site);
        return NULL;
    }
    return atomic_load_explicit(&t->cur, memory_order_relaxed);
}

/* The args block (capture/format.h): count and types, then key and value words. */
static op_word *put_args(op_word *p, const opprof_arg *args, unsigned n)
{
    *p++ = op_args_head(args, n);
    for (unsigned i = 0; i < n; i++) {
        *p++ = (uint64_t)(uintptr_t)args[i].key;
        *p++ = op_arg_value(&args[i]);
    }
    return p;
}

/* The set of site's input tuples: a multiplicative hash, since static
 * sites lie a fixed stride apart. */
static inline op_tuple_set *tuple_set(op_tstate *t, const opprof_site *site)
{
    return &t->tuples[((uintptr_t)site * 0x9E3779B97F4A7C15ull) >> 60 & (OP_TUPLE_SETS - 1)];
}

/* An input's dtype and ndim bytes as one value, as op_tuple keeps them. */
_Static_assert(offsetof(opprof_input, ndim) == offsetof(opprof_input, dtype) + 1, "dtype and ndim adjacent");
static OP_ALWAYS_INLINE uint16_t input_type(const opprof_input *in)
{
    uint16_t v;
    memcpy(&v, &in->dtype, sizeof v);
    return v;
}

/* Nonzero when the first nd (at most OPPROF_MAX_DIMS) dims differ:
 * straight-line, as a shape of 1 to 4 dims costs a loop's overhead again. */
static OP_ALWAYS_INLINE uint64_t dims_differ(const int64_t *a, const int64_t *b, unsigned nd)
{
    uint64_t d = 0;
    switch (nd) {
    case 8: d |= (uint64_t)(a[7] ^ b[7]); /* fallthrough */
    case 7: d |= (uint64_t)(a[6] ^ b[6]); /* fallthrough */
    case 6: d |= (uint64_t)(a[5] ^ b[5]); /* fallthrough */
    case 5: d |= (uint64_t)(a[4] ^ b[4]); /* fallthrough */
    case 4: d |= (uint64_t)(a[3] ^ b[3]); /* fallthrough */
    case 3: d |= (uint64_t)(a[2] ^ b[2]); /* fallthrough */
    case 2: d |= (uint64_t)(a[1] ^ b[1]); /* fallthrough */
    case 1: d |= (uint64_t)(a[0] ^ b[0]); /* fallthrough */
    default: break;
    }
    return d;
}

/* Whether e holds site's tuple of these inputs. An entry's inputs have at
 * most OPPROF_MAX_DIMS dims, and equal ndims make equal lengths, so an
 * entry is never read past its dims. */
static OP_ALWAYS_INLINE int tuple_same(const op_tuple *e, const opprof_site *site, const opprof_input *in, unsigned n)
{
    if (e->site != site || e->n != n) return 0;
    const int64_t *dims = e->dims;
    for (unsigned i = 0; i < n; i++) {
        if (input_type(&in[i]) != e->type[i]) return 0;
        unsigned nd = in[i].ndim;
        if (dims_differ(dims, in[i].dims, nd)) return 0;
        dims += nd;
    }
    return 1;
}

/* The way of set holding site's tuple, the most recent first; -1 if none. */
static inline int tuple_find(op_tuple_set *set, const opprof_site *site, const opprof_input *in, unsigned n)
{
    uint32_t last = set->last;
    if (tuple_same(&set->way[last], site, in, n)) return (int)last;
    for (uint32_t k = 0; k < OP_TUPLE_WAYS; k++) {
        if (k != last && tuple_same(&set->way[k], site, in, n)) {
            set->last = k;
            return (int)k;
        }
    }
    return -1;
}

/* Remembers site's tuple of these inputs as its newest, in the set's
 * next way, when it fits (above). */
static void tuple_keep(op_tstate *t, op_tuple_set *set, const opprof_site *site, const opprof_input *in, unsigned n)
{
    uint32_t ndims = 0;
    for (unsigned i = 0; i < n; i++) {
        if (in[i].ndim > OPPROF_MAX_DIMS) return;
        ndims += in[i].ndim;
    }
    if (ndims > OP_TUPLE_DIMS) return;
    uint32_t k = set->next;
    op_tuple *e = &set->way[k];
    e->site = site;
    e->n = n;
    e->ordinal = t->ntuples;
    int64_t *dims = e->dims;
    for (unsigned i = 0; i < n; i++) {
        e->type[i] = input_type(&in[i]);
        memcpy(dims, in[i].dims, in[i].ndim * sizeof *dims);
        dims += in[i].ndim;
    }
    set->last = k;
    set->next = (k + 1) % OP_TUPLE_WAYS;
}

/* A range record with an extension: the optional flops slot, the optional
 * stack slot, the optional args block, then the inputs' descriptors (dtype
 * and ndim, four to a word) and their dims. ra is the public call's return
 * address: the stack starts at the frame it returns to. */
static void begin_ext(op_tstate *t, const opprof_site *site, const opprof_input *in, unsigned n,
                      const opprof_arg *args, unsigned nargs, const void *ra)
{
    if (OP_UNLIKELY(!site)) {
        refuse_null_site("begin");
        return;
    }
    if (t->opts & OP_OPT_AGG) { /* args are not part of a name's sums; inputs give FLOPs */
        op_agg_begin(t, site, in, n, ra);
        return;
    }
    if (!(t->opts & (OP_OPT_SHAPES | OP_OPT_FLOPS)) || !in) n = 0;
    if (n > OPPROF_MAX_INPUTS) n = OPPROF_MAX_INPUTS;
    if (!args) nargs = 0;
    if (nargs > OPPROF_MAX_ARGS) nargs = OPPROF_MAX_ARGS;
    /* A site repeating one of its last few tuples stores a reference to it:
     * 32 bytes a record instead of 80-odd for a convolution's inputs. */
    op_tuple_set *set = NULL;
    uint64_t ref = 0;
    if (n && (t->opts & OP_OPT_INPUT_REFS)) {
        set = tuple_set(t, site);
        int k = tuple_find(set, site, in, n);
        if (k >= 0) ref = op_ext_ref(set->way[k].ordinal);
    }
    uint64_t desc[OPPROF_MAX_INPUTS / 4] = {0, 0, 0, 0};
    uint32_t ndims = 0, ndesc = 0;
    if (!ref) {
        for (unsigned i = 0; i < n; i++) {
            unsigned nd = in[i].ndim <= OPPROF_MAX_DIMS ? in[i].ndim : OPPROF_MAX_DIMS;
            desc[i / 4] |= op_desc_put(i, in[i].dtype, nd);
            ndims += nd;
        }
        ndesc = OP_DESC_WORDS(n);
    }
    uint32_t words = ndesc + ndims; /* 0 for a reference */
    uint32_t has_flops = (t->opts & OP_OPT_FLOPS) ? 1u : 0u;
    uint32_t has_stack = (t->opts & OP_OPT_STACK) ? 1u : 0u;
    uint32_t args_words = nargs ? OP_ARGS_WORDS(nargs) : 0;
    /* Before t0, so that the walk is not counted in the range's own time. */
    uint64_t stack = has_stack && t->depth < OP_MAX_DEPTH ? op_stack_capture(&t->stacks, ra) : 0;
    uint32_t payload = has_flops + has_stack + args_words + words;
    op_word *c = atomic_load_explicit(&t->cur, memory_order_relaxed);
    if (OP_UNLIKELY(t->depth >= OP_MAX_DEPTH || c + OP_REC_HEAD_WORDS + payload > t->lim || t->budget <= 0)) {
        c = begin_room(t, site, OP_REC_HEAD_WORDS + payload);
        if (!c) return;
    }
    op_word *p = c + OP_REC_HEAD_WORDS;
    if (has_flops) *p++ = UINT64_MAX;
    if (has_stack) *p++ = stack;
    if (nargs) p = put_args(p, args, nargs);
    if (!ref && n) {
        for (uint32_t i = 0; i < ndesc; i++) *p++ = desc[i];
        for (unsigned i = 0; i < n; i++) {
            unsigned nd = in[i].ndim <= OPPROF_MAX_DIMS ? in[i].ndim : OPPROF_MAX_DIMS;
            const int64_t *dims = in[i].dims;
            for (unsigned k = 0; k < nd; k++) *p++ = (uint64_t)dims[k];
        }
        /* Past UINT32_MAX tuples the numbers would wrap: copies from then on. */
        if (t->ntuples != UINT32_MAX) {
            if (set) tuple_keep(t, set, site, in, n);
            t->ntuples++;
        }
    }
    c[0] = (uint64_t)(uintptr_t)site | OP_REC_EXT;
    c[2] = OP_OPEN;
    c[3] = op_ext_header(payload, n, has_flops, has_stack, nargs != 0, ref);
    push_open(t, c, site);
    t->budget--;
    c[1] = op_now(t);
    op_publish(t, p);
}

/* The common begin with inputs: shapes recorded without stacks, and a
 * site repeating the tuple it recorded last. Writes the reference record
 * (with its flops slot) and returns 1; 0 leaves everything to begin_ext. */
static OP_ALWAYS_INLINE int begin_ref(op_tstate *t, const opprof_site *site, const opprof_input *in, unsigned n)
{
    uint32_t opts = t->opts & (OP_OPT_INPUT_REFS | OP_OPT_STACK);
    if (opts != OP_OPT_INPUT_REFS || !site || !in || n == 0 || n > OPPROF_MAX_INPUTS) return 0;
    op_tuple_set *set = tuple_set(t, site);
    const op_tuple *e = &set->way[set->last];
    if (!tuple_same(e, site, in, n)) return 0;
    uint32_t has_flops = (t->opts & OP_OPT_FLOPS) ? 1u : 0u;
    op_word *c = atomic_load_explicit(&t->cur, memory_order_relaxed);
    if (OP_UNLIKELY(t->depth >= OP_MAX_DEPTH || c + OP_REC_HEAD_WORDS + has_flops > t->lim || t->budget <= 0)) return 0;
    if (has_flops) c[OP_EXT_FLOPS_AT] = UINT64_MAX;
    c[0] = (uint64_t)(uintptr_t)site | OP_REC_EXT;
    c[2] = OP_OPEN;
    c[3] = op_ext_header(has_flops, n, has_flops, 0, 0, op_ext_ref(e->ordinal));
    push_open(t, c, site);
    t->budget--;
    c[1] = op_now(t);
    op_publish(t, c + OP_REC_HEAD_WORDS + has_flops);
    return 1;
}

static OP_NOINLINE void begin_slow(uint64_t g, const opprof_site *site, const opprof_input *in, unsigned n,
                                   const opprof_arg *args, unsigned nargs, const void *ra)
{
    if (!site) {
        refuse_null_site("begin");
        return;
    }
    op_tstate *t = op_state_for(g);
    if (!t) return;
    if (t->opts & OP_OPT_AGG) {
        op_agg_begin(t, site, in, n, ra);
        return;
    }
    if (in || (args && nargs) || (t->opts & (OP_OPT_FLOPS | OP_OPT_STACK))) {
        begin_ext(t, site, in, n, args, nargs, ra);
        return;
    }
    op_word *c = begin_room(t, site, OP_REC_RANGE_WORDS);
    if (!c) return;
    c[0] = (uint64_t)(uintptr_t)site;
    c[2] = OP_OPEN;
    push_open(t, c, site);
    t->budget--;
    c[1] = op_now(t);
    op_publish(t, c + OP_REC_RANGE_WORDS);
}

/* The body of every plain begin; ra is where the public call returns to. */
static inline void begin_at(const opprof_site *site, const void *ra)
{
    uint64_t g = op_gen_load();
    if (OP_UNLIKELY(g == 0)) return;
    op_tstate *t = op_tls;
    if (OP_UNLIKELY(t == NULL || t->fast_gen != g)) {
        if (t && t->agg_gen == g && site) op_agg_begin_fast(t, site, ra);
        else begin_slow(g, site, NULL, 0, NULL, 0, ra);
        return;
    }
    op_word *c = atomic_load_explicit(&t->cur, memory_order_relaxed);
    uint32_t d = t->depth;
    /* A NULL site joins the branch that is already there: no extra jump. */
    if (OP_UNLIKELY(d >= OP_MAX_DEPTH || c + OP_REC_RANGE_WORDS > t->lim || t->budget <= 0 || !site)) {
        begin_slow(g, site, NULL, 0, NULL, 0, ra);
        return;
    }
    t->stack[d].rec = c;
    t->stack[d].site = site;
    t->depth = d + 1;
    t->budget--;
    c[0] = (uint64_t)(uintptr_t)site;
    c[2] = OP_OPEN;
    c[1] = op_cycles(); /* fast_gen guarantees the built-in clock */
    op_publish(t, c + OP_REC_RANGE_WORDS);
}

void opprof_begin(const opprof_site *site)
{
    begin_at(site, __builtin_return_address(0));
}

void opprof_begin_inputs(const opprof_site *site, const opprof_input *inputs, unsigned n_inputs)
{
    uint64_t g = op_gen_load();
    if (OP_UNLIKELY(g == 0)) return;
    op_tstate *t = op_tls;
    const void *ra = __builtin_return_address(0);
    if (OP_UNLIKELY(t == NULL || t->gen != g)) {
        begin_slow(g, site, inputs, n_inputs, NULL, 0, ra);
        return;
    }
    if (begin_ref(t, site, inputs, n_inputs)) return;
    if (!(t->opts & (OP_OPT_SHAPES | OP_OPT_FLOPS | OP_OPT_STACK))) {
        begin_at(site, ra);
        return;
    }
    begin_ext(t, site, inputs, n_inputs, NULL, 0, ra);
}

void opprof_begin_inputs_args(const opprof_site *site, const opprof_input *inputs, unsigned n_inputs,
                              const opprof_arg *args, unsigned n_args)
{
    uint64_t g = op_gen_load();
    if (OP_UNLIKELY(g == 0)) return;
    op_tstate *t = op_tls;
    const void *ra = __builtin_return_address(0);
    if (OP_UNLIKELY(t == NULL || t->gen != g)) {
        begin_slow(g, site, inputs, n_inputs, args, n_args, ra);
        return;
    }
    if (!(args && n_args) && begin_ref(t, site, inputs, n_inputs)) return;
    if (!(args && n_args) && !(t->opts & (OP_OPT_SHAPES | OP_OPT_FLOPS | OP_OPT_STACK))) {
        begin_at(site, ra);
        return;
    }
    begin_ext(t, site, inputs, n_inputs, args, n_args, ra);
}

void opprof_begin_args(const opprof_site *site, const opprof_arg *args, unsigned n_args)
{
    uint64_t g = op_gen_load();
    if (OP_UNLIKELY(g == 0)) return;
    op_tstate *t = op_tls;
    const void *ra = __builtin_return_address(0);
    if (OP_UNLIKELY(t == NULL || t->gen != g)) {
        begin_slow(g, site, NULL, 0, args, n_args, ra);
        return;
    }
    if (!(args && n_args) && !(t->opts & (OP_OPT_FLOPS | OP_OPT_STACK))) {
        begin_at(site, ra);
        return;
    }
    begin_ext(t, site, NULL, 0, args, n_args, ra);
}

/* Closes stack entry k and, flagged as forced, every entry above it. */
static void close_from(op_tstate *t, uint32_t k, uint64_t ts)
{
    for (uint32_t i = t->depth; i-- > k;) {
        op_word *rec = t->stack[i].rec;
        if (!rec) continue;
        if (i > k) OP_STORE(&rec[0], OP_LOAD(&rec[0]) | OP_REC_FORCED);
        OP_STORE_END(&rec[2], ts);
    }
    t->depth = k;
}

/* Replaces the values of a record's args whose key and type match. */
static void patch_args(op_word *rec, const opprof_arg *args, unsigned n)
{
    if (!rec || !(rec[0] & OP_REC_EXT) || !(rec[3] & OP_EXT_HAS_ARGS)) return;
    op_word *p = rec + op_ext_args_at(rec[3]);
    uint64_t head = p[0];
    unsigned have = OP_ARGS_COUNT(head);
    for (unsigned i = 0; i < n; i++) {
        for (unsigned k = 0; k < have; k++) {
            if (p[1 + 2 * k] != (uint64_t)(uintptr_t)args[i].key || OP_ARGS_TYPE(head, k) != args[i].type) continue;
            OP_STORE(&p[2 + 2 * k], op_arg_value(&args[i]));
            break;
        }
    }
}

/* An aggregating end's status, with the event path's reason when it
 * refused. */
static OP_NOINLINE int agg_refused(const opprof_site *site, int rc)
{
    return op_fail(rc, "opprof_end: \"%s\" is not open on this thread", site_label(site));
}

static inline int agg_end_said(const opprof_site *site, int rc)
{
    return OP_LIKELY(rc == OPPROF_OK) ? rc : agg_refused(site, rc);
}

static OP_NOINLINE int end_slow(uint64_t g, const opprof_site *site, int has_flops, uint64_t flops,
                                const opprof_arg *args, unsigned nargs)
{
    if (!site) return op_fail(OPPROF_E_INVAL, "opprof_end: NULL site");
    op_tstate *t = op_tls;
    if (!t || t->gen != g) /* begun before this session */
        return op_fail(OPPROF_E_UNBALANCED, "opprof_end: \"%s\" was not begun in this session on this thread",
                       site_label(site));
    uint64_t ts = op_now(t);
    if (t->opts & OP_OPT_AGG) return agg_end_said(site, op_agg_end(t, site, ts, has_flops, flops));
    if (t->overflow) {
        t->overflow--;
        return OPPROF_OK;
    }
    uint32_t k = t->depth;
    while (k > 0 && t->stack[k - 1].site != site) k--;
    if (k == 0) return op_fail(OPPROF_E_UNBALANCED, "opprof_end: \"%s\" is not open on this thread", site_label(site));
    op_word *rec = t->stack[k - 1].rec;
    if (has_flops && rec && (rec[0] & OP_REC_EXT) && (rec[3] & OP_EXT_HAS_FLOPS)) OP_STORE(&rec[OP_EXT_FLOPS_AT], flops);
    if (args && nargs) patch_args(rec, args, nargs);
    close_from(t, k - 1, ts);
    const char *watch = OP_LOAD(&op_g.watch_name);
    if (OP_UNLIKELY(watch != NULL) && rec && site->name && !strcmp(site->name, watch)) {
        void (*fn)(uint64_t, uint64_t) = OP_LOAD(&op_g.watch_fn);
        if (fn) fn(rec[1], ts);
    }
    return OPPROF_OK;
}

int opprof_end(const opprof_site *site)
{
    uint64_t g = op_gen_load();
    if (OP_UNLIKELY(g == 0)) return OPPROF_OK;
    op_tstate *t = op_tls;
    if (OP_UNLIKELY(t == NULL || t->end_gen != g)) {
        if (t && t->agg_gen == g && site) /* agg_gen: the built-in clock */
            return agg_end_said(site, op_agg_end_fast(t, site, op_cycles()));
        return end_slow(g, site, 0, 0, NULL, 0);
    }
    uint64_t ts = op_cycles(); /* end_gen guarantees the built-in clock */
    uint32_t d = t->depth;
    /* depth at the limit may mean dropped ranges still open: the slow path knows */
    if (OP_UNLIKELY(d == 0 || d >= OP_MAX_DEPTH || t->stack[d - 1].site != site))
        return end_slow(g, site, 0, 0, NULL, 0);
    op_word *rec = t->stack[d - 1].rec;
    t->depth = d - 1;
    if (OP_LIKELY(rec != NULL)) OP_STORE_END(&rec[2], ts);
    return OPPROF_OK;
}

int opprof_end_flops(const opprof_site *site, uint64_t flops)
{
    uint64_t g = op_gen_load();
    if (OP_UNLIKELY(g == 0)) return OPPROF_OK;
    return end_slow(g, site, 1, flops, NULL, 0);
}

int opprof_end_args(const opprof_site *site, const opprof_arg *args, unsigned n_args)
{
    uint64_t g = op_gen_load();
    if (OP_UNLIKELY(g == 0)) return OPPROF_OK;
    return end_slow(g, site, 0, 0, args, n_args);
}

const opprof_site *opprof_annotation_begin(const char *name)
{
    const opprof_site *s = opprof_intern(name, OPPROF_CAT_USER_ANNOTATION);
    if (s) begin_at(s, __builtin_return_address(0));
    return s;
}

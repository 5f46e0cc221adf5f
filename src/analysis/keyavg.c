/* opprof_key_averages: one linear pass over the event model. Names are
 * strtab ids, so grouping by name is an array index rather than a string
 * hash; grouping also by shapes or stack frames hashes a few ids per event. */
#include <stdlib.h>
#include <string.h>

#include "analysis/keyavg.h"
#include "common/error.h"
#include "common/map.h"
#include "common/satmath.h"
#include "common/vec.h"
#include "model/model.h"

#define STEP_PREFIX "ProfilerStep#"
#define STEP_NAME "ProfilerStep*"
#define MEMORY_NAME "[memory]"

enum { KIND_OP = 0, KIND_STEP = 1, KIND_MEMORY = 2 };

typedef struct group {
    uint32_t name, shapes, stack; /* the first event's ids */
    uint32_t canon, sclass;       /* the rest of the key: canonical name, stack class */
    uint8_t device, kind;
    uint64_t count, flops;
    int64_t self_cpu, cpu, self_dev, dev, mem, self_mem;
    int64_t oncpu, self_oncpu;
} group;

typedef struct builder {
    const opprof_trace *t;
    opprof_avg_options opt;
    group *g;
    size_t ng, capg;
    uint32_t *canon;   /* name id -> canonical name id + 1; 0 not seen yet */
    uint32_t *by_name; /* canonical name * 2 + device -> group + 1 (name-only grouping) */
    uint32_t *slots;   /* group + 1 by key hash (grouping by shapes or stacks); its own table, not
                        * op_map: probed once per event, and op_map_find_h cost 140 M more
                        * instructions over bench_keyavg's 7 million lookups (callgrind) */
    size_t nslots;
    uint32_t *sclass;  /* stack index -> class + 1; the class is a stack with the same top frames */
    op_map classes;    /* top-frames hash -> stack index */
    uint32_t step_canon; /* canonical id of every ProfilerStep#N, + 1 */
    uint32_t no_shapes;  /* id of "[]": PyTorch's empty shape list, grouped with none */
    int saturated;       /* a sum passed the 64-bit range and stays at its limit */
} builder;

static void builder_free(builder *b)
{
    free(b->g);
    free(b->canon);
    free(b->by_name);
    free(b->slots);
    free(b->sclass);
    op_map_free(&b->classes);
}

static uint32_t canonical_name(builder *b, uint32_t name)
{
    if (b->canon[name]) return b->canon[name] - 1;
    uint32_t c = name;
    const op_strtab *st = &b->t->str;
    if (op_strtab_len(st, name) >= sizeof STEP_PREFIX - 1 &&
        !memcmp(op_strtab_get(st, name), STEP_PREFIX, sizeof STEP_PREFIX - 1)) {
        if (!b->step_canon) b->step_canon = name + 1;
        c = b->step_canon - 1;
    }
    b->canon[name] = c + 1;
    return c;
}

static uint32_t top_frames(const builder *b, uint32_t s)
{
    uint32_t n = b->t->stacks[s].nframes, lim = (uint32_t)b->opt.group_by_stack_n;
    return n < lim ? n : lim;
}

typedef struct top_key {
    const builder *b;
    const uint32_t *f;
    uint32_t n;
} top_key;

static int same_top(const void *ctx, uint64_t r)
{
    const top_key *k = ctx;
    return top_frames(k->b, (uint32_t)r) == k->n && !memcmp(k->b->t->stacks[r].frames, k->f, k->n * sizeof *k->f);
}

/* Stacks that agree on their top N frames share a class (a stack index + 1);
 * 0 for none. */
static uint32_t stack_class(builder *b, uint32_t stack)
{
    if (!stack || !b->sclass || stack > b->t->nstacks) return 0;
    uint32_t s = stack - 1;
    if (b->sclass[s]) return b->sclass[s];
    uint32_t n = top_frames(b, s);
    if (!n) return 0;
    const uint32_t *f = b->t->stacks[s].frames;
    uint64_t h = op_hash_bytes(f, n * sizeof *f);
    top_key k = {b, f, n};
    const uint64_t *r = op_map_find_h(&b->classes, h, same_top, &k);
    if (r) return b->sclass[s] = (uint32_t)*r + 1;
    op_map_add_h(&b->classes, h, s); /* reserved for every stack: cannot fail */
    return b->sclass[s] = s + 1;
}

static size_t key_hash(uint32_t canon, uint32_t shapes, uint32_t sclass, uint32_t device)
{
    uint64_t h = ((uint64_t)canon << 32 | shapes) * 0x9e3779b97f4a7c15ull;
    h ^= ((uint64_t)sclass << 1 | device) * 0xc2b2ae3d27d4eb4full;
    h ^= h >> 29;
    return (size_t)h;
}

static int grow_slots(builder *b)
{
    size_t n = b->nslots ? b->nslots * 2 : 1024;
    uint32_t *s = calloc(n, sizeof *s);
    if (!s) return -1;
    for (size_t gi = 0; gi < b->ng; gi++) {
        const group *g = &b->g[gi];
        if (g->kind == KIND_MEMORY) continue;
        size_t i = key_hash(g->canon, g->shapes, g->sclass, g->device) & (n - 1);
        while (s[i]) i = (i + 1) & (n - 1);
        s[i] = (uint32_t)gi + 1;
    }
    free(b->slots);
    b->slots = s;
    b->nslots = n;
    return 0;
}

/* Appends a group started by event e (NULL for the memory row); returns its
 * index or -1 when out of memory. */
static int64_t new_group(builder *b, const op_event *e, const op_evx *x, uint32_t canon, uint32_t sclass, int kind)
{
    if (op_grow(&b->g, &b->capg, b->ng + 1, sizeof *b->g) != 0) return -1;
    group *g = &b->g[b->ng];
    memset(g, 0, sizeof *g);
    g->kind = (uint8_t)kind;
    if (e) {
        g->name = e->name;
        g->shapes = b->opt.group_by_input_shape && x->shapes != b->no_shapes ? x->shapes : 0;
        g->stack = x->stack;
        g->canon = canon;
        g->sclass = sclass;
        g->device = op_cat_is_device(e->cat) != 0;
    }
    return (int64_t)b->ng++;
}

static int64_t find_group(builder *b, const op_event *e, const op_evx *x)
{
    uint32_t dev = op_cat_is_device(e->cat) != 0;
    uint32_t canon = canonical_name(b, e->name);
    int kind = b->step_canon && canon == b->step_canon - 1 ? KIND_STEP : KIND_OP;
    if (b->by_name) {
        uint32_t *slot = &b->by_name[(size_t)canon * 2 + dev];
        if (*slot) return *slot - 1;
        int64_t gi = new_group(b, e, x, canon, 0, kind);
        if (gi >= 0) *slot = (uint32_t)gi + 1;
        return gi;
    }
    uint32_t shapes = b->opt.group_by_input_shape && x->shapes != b->no_shapes ? x->shapes : 0;
    uint32_t sclass = stack_class(b, x->stack);
    if (2 * (b->ng + 1) > b->nslots && grow_slots(b) != 0) return -1;
    size_t i = key_hash(canon, shapes, sclass, dev) & (b->nslots - 1);
    for (;; i = (i + 1) & (b->nslots - 1)) {
        uint32_t s = b->slots[i];
        if (!s) break;
        const group *g = &b->g[s - 1];
        if (g->canon == canon && g->shapes == shapes && g->sclass == sclass && g->device == dev) return s - 1;
    }
    int64_t gi = new_group(b, e, x, canon, sclass, kind);
    if (gi >= 0) b->slots[i] = (uint32_t)gi + 1;
    return gi;
}

/* The earliest memory event that falls inside no operator; 0 when none. */
static int first_free_memory(const opprof_trace *t, int64_t *ts)
{
    int found = 0;
    for (size_t i = 0; i < t->nmem; i++) {
        if (t->mem[i].op >= 0) continue;
        if (!found || t->mem[i].ts_ns < *ts) *ts = t->mem[i].ts_ns;
        found = 1;
    }
    return found;
}

/* PyTorch's [memory] row: the count of free-standing memory events and the
 * sum of their CPU bytes (device bytes have columns of their own there). */
static void add_free_memory(const opprof_trace *t, group *g, int *sat)
{
    for (size_t i = 0; i < t->nmem; i++) {
        const op_mem_event *m = &t->mem[i];
        if (m->op >= 0) continue;
        g->count++;
        if (m->device_type == 0) {
            g->mem = op_sat_add(g->mem, m->bytes, sat);
            g->self_mem = op_sat_add(g->self_mem, m->bytes, sat);
        }
    }
}

/* A host range's times and memory (or a row of ranges') into g, saturating. */
static void add_host(group *g, int64_t self, int64_t total, int64_t mem, int64_t self_mem, int *sat)
{
    g->self_cpu = op_sat_add(g->self_cpu, self, sat);
    g->cpu = op_sat_add(g->cpu, total, sat);
    g->mem = op_sat_add(g->mem, mem, sat);
    g->self_mem = op_sat_add(g->self_mem, self_mem, sat);
}

/* An aggregating session's rows (already in the order of their first
 * ranges): the same groups the events would make, by name, their sums
 * saturating as the events' do (OP_TRACE_SATURATED). */
static int group_sums(builder *b, int64_t *sum_self_cpu)
{
    const opprof_trace *t = b->t;
    int64_t sum = 0, mem_group = -1;
    for (size_t i = 0; i < t->nagg; i++) {
        const op_aggrow *r = &t->agg[i];
        if (!op_cat_is_host(r->cat)) continue;
        int *sat = &b->saturated;
        sum = op_sat_add(sum, r->self_ns, sat);
        /* [memory] sits where its first event falls among the groups' first ranges */
        if (t->agg_free_count && mem_group < 0 && r->first_start_ns > t->agg_free_first_ns &&
            (mem_group = new_group(b, NULL, NULL, 0, 0, KIND_MEMORY)) < 0)
            return -1;
        op_event e = {.name = r->name, .cat = r->cat};
        op_evx x = {.shapes = r->shapes, .stack = r->stack};
        int64_t gi = find_group(b, &e, &x);
        if (gi < 0) return -1;
        group *g = &b->g[gi];
        g->count = op_sat_addu(g->count, r->count, sat);
        add_host(g, r->self_ns, r->total_ns, r->mem, r->self_mem, sat);
        g->flops = op_sat_addu(g->flops, r->flops, sat);
    }
    if (t->agg_free_count && mem_group < 0 && (mem_group = new_group(b, NULL, NULL, 0, 0, KIND_MEMORY)) < 0) return -1;
    if (mem_group >= 0) {
        group *g = &b->g[mem_group];
        g->count = t->agg_free_count;
        g->mem = g->self_mem = t->agg_free_bytes;
    }
    *sum_self_cpu = sum;
    return 0;
}

static int group_events(builder *b, int64_t *sum_self_cpu)
{
    if (b->t->nagg) return group_sums(b, sum_self_cpu);
    const opprof_trace *t = b->t;
    int64_t mem_ts = 0;
    int have_mem = first_free_memory(t, &mem_ts);
    int64_t mem_group = -1;
    int top_only = b->opt.top_level_only;
    int64_t sum = 0;
    for (size_t i = 0; i < t->nev; i++) {
        const op_event *e = &t->ev[i];
        int host = op_cat_is_host(e->cat);
        if (!host && !op_cat_is_device(e->cat)) continue;
        int *sat = &b->saturated;
        if (host) sum = op_sat_add(sum, e->self_ns, sat);
        if (top_only && e->parent >= 0) continue;
        /* zero-length memory events sort after events that start with them */
        if (have_mem && mem_group < 0 && e->start_ns > mem_ts) {
            mem_group = new_group(b, NULL, NULL, 0, 0, KIND_MEMORY);
            if (mem_group < 0) return -1;
        }
        const op_evx *x = op_evx_of(t, e);
        int64_t gi = find_group(b, e, x);
        if (gi < 0) return -1;
        group *g = &b->g[gi];
        g->count++;
        if (host) add_host(g, e->self_ns, e->dur_ns, x->mem_total, x->mem_self, sat);
        g->self_dev = op_sat_add(g->self_dev, x->dev_self_ns, sat);
        g->dev = op_sat_add(g->dev, x->dev_total_ns, sat);
        g->flops = op_sat_addu(g->flops, x->flops, sat);
        g->oncpu = op_sat_add(g->oncpu, x->oncpu_total_ns, sat);
        g->self_oncpu = op_sat_add(g->self_oncpu, x->oncpu_self_ns, sat);
    }
    if (have_mem && mem_group < 0 && (mem_group = new_group(b, NULL, NULL, 0, 0, KIND_MEMORY)) < 0) return -1;
    if (mem_group >= 0) add_free_memory(t, &b->g[mem_group], &b->saturated);
    *sum_self_cpu = sum;
    return 0;
}

static const char *group_name(const builder *b, const group *g)
{
    if (g->kind == KIND_STEP) return STEP_NAME;
    if (g->kind == KIND_MEMORY) return MEMORY_NAME;
    return op_strtab_get(&b->t->str, g->name);
}

static const char *group_shapes(const builder *b, const group *g)
{
    if (!b->opt.group_by_input_shape) return "";
    const char *s = op_strtab_get(&b->t->str, g->shapes);
    return *s ? s : "[]";
}

/* Bytes the top frames of g's stack take joined by newlines, with a NUL;
 * writes them to out when it is not NULL. */
static size_t group_stack(const builder *b, const group *g, char *out)
{
    size_t len = 0;
    if (!g->sclass) {
        if (out) *out = '\0';
        return 1;
    }
    const op_stack *st = &b->t->stacks[g->stack - 1];
    uint32_t n = top_frames(b, g->stack - 1);
    for (uint32_t i = 0; i < n; i++) {
        const char *f = op_strtab_get(&b->t->str, st->frames[i]);
        size_t fl = strlen(f);
        if (out) {
            memcpy(out + len, f, fl);
            out[len + fl] = i + 1 < n ? '\n' : '\0';
        }
        len += fl + 1;
    }
    if (!n && out) *out = '\0';
    return n ? len : 1;
}

static char *put(char *p, const char *s)
{
    size_t n = strlen(s) + 1;
    memcpy(p, s, n);
    return p + n;
}

static int make_rows(const builder *b, opprof_key_averages *ka)
{
    size_t bytes = 0;
    for (size_t i = 0; i < b->ng; i++) {
        const group *g = &b->g[i];
        bytes += strlen(group_name(b, g)) + 1 + strlen(group_shapes(b, g)) + 1 + group_stack(b, g, NULL);
    }
    ka->rows = calloc(b->ng ? b->ng : 1, sizeof *ka->rows);
    ka->text = malloc(bytes ? bytes : 1);
    if (!ka->rows || !ka->text) return -1;
    char *p = ka->text;
    for (size_t i = 0; i < b->ng; i++) {
        const group *g = &b->g[i];
        opprof_avg_row *r = &ka->rows[i].r;
        r->name = p;
        p = put(p, group_name(b, g));
        r->input_shapes = p;
        p = put(p, group_shapes(b, g));
        r->stack = p;
        p += group_stack(b, g, p);
        r->count = g->count;
        r->self_cpu_time_total_ns = g->self_cpu;
        r->cpu_time_total_ns = g->cpu;
        r->self_device_time_total_ns = g->self_dev;
        r->device_time_total_ns = g->dev;
        r->cpu_memory_usage = g->mem;
        r->self_cpu_memory_usage = g->self_mem;
        r->flops = g->flops;
        ka->rows[i].device = g->device;
        ka->rows[i].oncpu_ns = g->oncpu;
        ka->rows[i].self_oncpu_ns = g->self_oncpu;
    }
    ka->n = b->ng;
    return 0;
}

static int builder_init(builder *b, const opprof_trace *t, const opprof_avg_options *opt)
{
    memset(b, 0, sizeof *b);
    b->t = t;
    if (opt) b->opt = *opt;
    if (b->opt.group_by_stack_n < 0) b->opt.group_by_stack_n = 0;
    b->no_shapes = op_strtab_find(&t->str, "[]", 2);
    size_t nstr = t->str.count ? t->str.count : 1;
    b->canon = calloc(nstr, sizeof *b->canon);
    if (!b->canon) return -1;
    if (!b->opt.group_by_input_shape && !b->opt.group_by_stack_n) {
        b->by_name = calloc(nstr * 2, sizeof *b->by_name);
        return b->by_name ? 0 : -1;
    }
    if (b->opt.group_by_stack_n && t->nstacks) {
        b->sclass = calloc(t->nstacks, sizeof *b->sclass);
        if (!b->sclass || op_map_reserve(&b->classes, t->nstacks) != 0) return -1;
    }
    return grow_slots(b);
}

int opprof_key_averages_new(const opprof_trace *t, const opprof_avg_options *opt, opprof_key_averages **out)
{
    if (op_trace_check(t, "opprof_key_averages")) return OPPROF_E_INVAL;
    if (!t || !out) return op_fail(OPPROF_E_INVAL, "opprof_key_averages: NULL argument");
    *out = NULL;
    if (!t->finished) return op_fail(OPPROF_E_INVAL, "opprof_key_averages: the trace is not finished");
    if (t->nagg && opt && opt->top_level_only)
        return op_fail(OPPROF_E_INVAL, "opprof_key_averages: top_level_only needs the call tree, which an "
                                       "aggregating session (opprof_config.aggregate) does not keep");
    opprof_key_averages *ka = calloc(1, sizeof *ka);
    builder b;
    int rc = OPPROF_E_NOMEM;
    if (!ka || builder_init(&b, t, opt) != 0) {
        if (ka) builder_free(&b);
        free(ka);
        return op_fail(OPPROF_E_NOMEM, "out of memory grouping %zu events", t->nev);
    }
    ka->opt = b.opt;
    ka->trace_options = t->options;
    ka->dropped = t->dropped;
    ka->attempted = t->attempted;
    ka->comp_inside_ns = t->comp_inside_ns;
    ka->comp_outside_ns = t->comp_outside_ns;
    if (group_events(&b, &ka->sum_self_cpu_ns) == 0 && make_rows(&b, ka) == 0) rc = OPPROF_OK;
    if (b.saturated) ka->trace_options |= OP_TRACE_SATURATED;
    builder_free(&b);
    if (rc != OPPROF_OK) {
        opprof_key_averages_free(ka);
        return op_fail(rc, "out of memory grouping %zu events", t->nev);
    }
    *out = ka;
    return OPPROF_OK;
}

size_t opprof_key_averages_count(const opprof_key_averages *ka)
{
    return ka ? ka->n : 0;
}

int opprof_key_averages_oncpu(const opprof_key_averages *ka, size_t i, int64_t *oncpu_total_ns, int64_t *self_oncpu_ns)
{
    if (!ka || !oncpu_total_ns || !self_oncpu_ns) return op_fail(OPPROF_E_INVAL, "opprof_key_averages_oncpu: NULL argument");
    if (i >= ka->n) return op_fail(OPPROF_E_RANGE, "row %zu of %zu", i, ka->n);
    *oncpu_total_ns = ka->rows[i].oncpu_ns;
    *self_oncpu_ns = ka->rows[i].self_oncpu_ns;
    return OPPROF_OK;
}

int opprof_key_averages_row(const opprof_key_averages *ka, size_t i, opprof_avg_row *out)
{
    if (!ka || !out) return op_fail(OPPROF_E_INVAL, "opprof_key_averages_row: NULL argument");
    if (i >= ka->n) return op_fail(OPPROF_E_RANGE, "row %zu of %zu", i, ka->n);
    *out = ka->rows[i].r;
    return OPPROF_OK;
}

void opprof_key_averages_free(opprof_key_averages *ka)
{
    if (!ka) return;
    free(ka->rows);
    free(ka->text);
    free(ka);
}

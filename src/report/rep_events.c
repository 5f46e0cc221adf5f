/* The event columns of the page. Slices (events, and blocks of merged
 * events: rep_layout.c) go out grouped by flame-chart level (thread, then
 * row), each level in start order, so the page draws straight from the
 * decoded arrays with no index to build; references to events (memory,
 * launches, steps) are translated to these positions. Columns that are
 * mostly zero are written sparse. */
#include <stdlib.h>
#include <string.h>

#include "report/rep.h"

typedef enum { F_START, F_DUR, F_SELF, F_NAME, F_CAT, F_SHAPES, F_TYPES, F_ARGS, F_FLOPS, F_MEM, F_DEV, F_LAUNCH,
               F_STACK, F_MERGED, F_COUNT } ev_field;

typedef struct field_def {
    const char *name, *kind, *type;
    int may_be_sparse;
} field_def;

static const field_def FIELDS[F_COUNT] = {
    [F_START] = {"start", "g", "f64", 0},  [F_DUR] = {"dur", "u", "f64", 0},
    [F_SELF] = {"self", "z", "f64", 0},    [F_NAME] = {"name", "u", "u32", 0},
    [F_CAT] = {"cat", "u", "u8", 1},       [F_SHAPES] = {"shapes", "u", "u32", 1},
    [F_TYPES] = {"types", "u", "u32", 1},  [F_ARGS] = {"args", "u", "u32", 1},
    [F_FLOPS] = {"flops", "u", "f64", 1},  [F_MEM] = {"mem", "z", "f64", 1},
    [F_DEV] = {"dev", "z", "f64", 1},      [F_LAUNCH] = {"launch", "u", "u32", 1},
    [F_STACK] = {"stack", "u", "u32", 1},  [F_MERGED] = {"merged", "u", "f64", 1},
};

/* The value of field f for model event i, as the unsigned or zigzag
 * varint payload (start gaps are made by the caller). */
static int64_t field_value(const rep_trace *r, ev_field f, size_t i)
{
    const op_event *e = &r->t->ev[i];
    const op_evx *x = op_evx_of(r->t, e);
    switch (f) {
    case F_START: return e->start_ns;
    case F_DUR: return e->dur_ns;
    case F_SELF: return e->self_ns;
    case F_NAME: return rep_sid(r, e->name);
    case F_CAT: return e->cat;
    case F_SHAPES: return rep_sid(r, x->shapes);
    case F_TYPES: return rep_sid(r, x->types);
    case F_ARGS: return rep_sid(r, x->args);
    case F_FLOPS: return (int64_t)x->flops;
    case F_MEM: return x->mem_total;
    case F_DEV: return x->dev_total_ns;
    case F_STACK: return x->stack <= r->t->nstacks ? x->stack : 0;
    case F_LAUNCH: return r->launch_op[i] < 0 ? 0 : (int64_t)r->pos[r->launch_op[i]] + 1;
    default: return 0; /* F_MERGED: an event stands for itself */
    }
}

/* The value of field f for a block of merged events: its span, the sums of
 * its members, and the name and category of the longest. Its "self" is the
 * time its top members cover (a stream's busy time, for device work). */
static int64_t block_value(const rep_trace *r, ev_field f, const rep_block *b)
{
    const op_event *e = &r->t->ev[b->longest];
    switch (f) {
    case F_START: return b->start;
    case F_DUR: return b->end - b->start;
    case F_SELF: return b->busy;
    case F_NAME: return rep_sid(r, e->name);
    case F_CAT: return e->cat;
    case F_FLOPS: return (int64_t)b->flops;
    case F_MEM: return b->mem;
    case F_DEV: return b->dev;
    case F_MERGED: return b->count;
    default: return 0;
    }
}

/* Field f of every slice into vals, in page order; returns how many are
 * nonzero. Without blocks the events are read in model order
 * (sequentially) and only the 8-byte stores scatter, which is far kinder to
 * the cache than reading events in page order. */
static size_t gather(const rep_trace *r, ev_field f, int64_t *vals)
{
    size_t nz = 0, nev = r->t->nev;
    if (!r->nblocks) {
        for (size_t i = 0; i < nev; i++) {
            int64_t v = field_value(r, f, i);
            vals[r->pos[i]] = v;
            nz += v != 0;
        }
        return nz;
    }
    for (size_t p = 0; p < r->npage; p++) {
        uint32_t it = r->order[p];
        int64_t v = it < nev ? field_value(r, f, it) : block_value(r, f, &r->blocks[it - nev]);
        vals[p] = v;
        nz += v != 0;
    }
    return nz;
}

static void put_value(op_buf *b, const char *kind, int64_t v)
{
    if (kind[0] == 'z' || kind[0] == 'd' || kind[0] == 'g') rep_buf_sv(b, v);
    else rep_buf_uv(b, (uint64_t)v);
}

/* Starts as the gap after the previous event of their level (a level's
 * events rarely overlap, so the gap is small), from 0 at each level's first
 * event; dur holds the durations in page order. */
static void starts_to_gaps(const rep_trace *r, int64_t *start, const int64_t *dur)
{
    size_t p = 0;
    for (size_t L = 0; L < r->nlevels; L++) {
        int64_t prev_end = 0;
        for (size_t end = p + r->levels[3 * L + 2]; p < end; p++) {
            int64_t s = start[p];
            start[p] = s - prev_end;
            prev_end = s + dur[p];
        }
    }
}

/* Writes one column from vals (page order); returns 0 when the column is
 * optional and all zeros, so it is left out. */
static int put_column(rep_trace *r, ev_field f, const int64_t *vals, size_t nz, rep_col *c)
{
    const field_def *d = &FIELDS[f];
    size_t n = r->npage;
    if (d->may_be_sparse && !nz && f != F_CAT) return 0;
    int sparse = d->may_be_sparse && nz * 3 < n;
    static const char *const sparse_kind[2] = {"su", "sz"};
    *c = (rep_col){d->name, sparse ? sparse_kind[d->kind[0] == 'z'] : d->kind, d->type, r->ev.n, 0};
    op_buf *b = &r->ev;
    if (sparse) {
        rep_buf_uv(b, nz);
        size_t prev = 0;
        for (size_t p = 0; p < n; p++) {
            if (!vals[p]) continue;
            rep_buf_uv(b, p - prev);
            put_value(b, d->kind, vals[p]);
            prev = p + 1;
        }
    } else {
        for (size_t p = 0; p < n; p++) put_value(b, d->kind, vals[p]);
    }
    c->len = r->ev.n - c->off;
    return 1;
}

int rep_events_build(rep_trace *r)
{
    size_t n = r->npage ? r->npage : 1;
    int64_t *vals = malloc(n * sizeof *vals), *dur = malloc(n * sizeof *dur);
    if (!vals || !dur) {
        free(vals);
        free(dur);
        return -1;
    }
    gather(r, F_DUR, dur);
    for (int f = 0; f < F_COUNT; f++) {
        if ((f == F_DEV || f == F_LAUNCH) && !r->launch_op) continue;
        size_t nz = gather(r, (ev_field)f, vals);
        if (f == F_START) starts_to_gaps(r, vals, dur);
        if (put_column(r, (ev_field)f, vals, nz, &r->ev_cols[r->ev_ncols])) r->ev_ncols++;
    }
    free(vals);
    free(dur);
    return r->ev.failed ? -1 : 0;
}

void rep_levels_json(rep_out *o, const rep_trace *r)
{
    rep_puts(o, ",\"levels\":[");
    for (size_t L = 0; L < r->nlevels; L++)
        rep_printf(o, "%s%u,%u,%u", L ? "," : "", r->levels[3 * L], r->levels[3 * L + 1], r->levels[3 * L + 2]);
    rep_puts(o, "]");
}

/* The stacks the events point to (column "stack": index + 1), each as page
 * string ids, innermost frame first. */
void rep_stacks_json(rep_out *o, const rep_trace *r)
{
    const opprof_trace *t = r->t;
    rep_puts(o, ",\"stacks\":[");
    for (size_t i = 0; i < t->nstacks; i++) {
        rep_puts(o, i ? ",[" : "[");
        for (uint32_t k = 0; k < t->stacks[i].nframes; k++)
            rep_printf(o, "%s%u", k ? "," : "", rep_sid(r, t->stacks[i].frames[k]));
        rep_puts(o, "]");
    }
    rep_puts(o, "]");
}

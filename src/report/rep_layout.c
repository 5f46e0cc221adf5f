/* Where each event goes on the page: its flame-chart row, its level
 * (thread, row), and, in a trace too big to draw in full, the level of
 * detail. The page holds about `budget` slices at most: when the trace has
 * more, every event at least `min_ns` long is kept as it is, and the
 * shorter ones are merged into blocks. A short event directly below a kept
 * one (or at a thread's top) joins the run of its neighbours on that level
 * while the gap to the run stays under `gap_ns`; a short event below a
 * short one joins its container's block, so the rows under a block are
 * empty and the block counts them. The page shows each block with the
 * number of events it stands for. The sums (operator tables, memory,
 * devices) are computed from every event, never from the page's slices;
 * the meta object says what was merged (rep_lod_json). */
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "report/rep.h"

/* Of the budget, the share kept for whole events; blocks get the rest
 * (there are at most about as many runs to break as kept events). */
#define KEEP_SHARE_NUM 1
#define KEEP_SHARE_DEN 2

#define NO_RUN INT32_MIN

/* Durations and gaps are binned log-linearly, 16 bins per power of two
 * (thresholds about 4% apart): a power-of-two threshold could jump from
 * more events than the page holds to a handful, and draw a thread as one
 * block. Bin b < 16 holds the value b; above, bin 16 + 16 (e - 4) + m
 * holds [(16 + m) << (e - 4), (17 + m) << (e - 4)) for the power 2^e. */
#define BINS (16 + 16 * 59)

static int bucket(int64_t v)
{
    if (v < 16) return v < 0 ? 0 : (int)v;
    int e = 63 - __builtin_clzll((unsigned long long)v);
    return 16 + 16 * (e - 4) + (int)((v >> (e - 4)) & 15);
}

static int64_t bucket_floor(int b)
{
    if (b < 16) return b;
    if (b >= BINS) return INT64_MAX;
    int e = (b - 16) / 16 + 4, m = (b - 16) % 16;
    return (int64_t)(16 + m) << (e - 4);
}

/* Flame-chart rows: an event sits one row below the innermost earlier event
 * of its thread that wholly contains it. Unlike the model's depth this counts
 * every category (python functions, annotations, device work), so nothing
 * on a thread is drawn on top of something else that encloses it. up[] is
 * each event's container, so walking it is the per-thread stack. */
static int compute_rows(const opprof_trace *t, int32_t *up, uint16_t *row)
{
    int32_t *last = malloc((t->nthreads ? t->nthreads : 1) * sizeof *last);
    if (!last) return -1;
    for (size_t i = 0; i < t->nthreads; i++) last[i] = -1;
    for (size_t i = 0; i < t->nev; i++) {
        const op_event *e = &t->ev[i];
        int64_t end = e->start_ns + e->dur_ns;
        int32_t c = last[e->thread];
        while (c >= 0 && t->ev[c].start_ns + t->ev[c].dur_ns < end) c = up[c];
        up[i] = c;
        row[i] = c < 0 ? 0 : (uint16_t)(row[c] < UINT16_MAX ? row[c] + 1 : UINT16_MAX);
        last[e->thread] = (int32_t)i;
    }
    free(last);
    return 0;
}

/* The shortest duration kept whole: the smallest bin floor that leaves at
 * most keep_max events at or above it (0: every event is kept). */
static int64_t choose_min_dur(const opprof_trace *t, size_t keep_max)
{
    size_t *hist = calloc(BINS, sizeof *hist);
    if (!hist) return -1;
    for (size_t i = 0; i < t->nev; i++) hist[bucket(t->ev[i].dur_ns)]++;
    size_t kept = t->nev;
    int b = 0;
    while (b < BINS && kept > keep_max) kept -= hist[b++];
    free(hist);
    return bucket_floor(b);
}

/* A level's run of short events being merged: the kept event all its
 * members descend from (-1: none), and where the run ends. */
typedef struct run {
    int32_t anchor;
    uint32_t block;
    int64_t end;
} run;

typedef struct layout {
    rep_trace *r;
    int32_t *up;     /* event -> its container, -1 none */
    uint16_t *row;   /* event -> its flame-chart row */
    size_t *base;    /* thread -> its first level */
    run *runs;       /* level -> the open run, anchor NO_RUN when none */
} layout;

static size_t level_of(const layout *l, size_t i)
{
    return l->base[l->r->t->ev[i].thread] + l->row[i];
}

static int is_kept(const rep_trace *r, size_t i)
{
    return r->lod_min_ns <= 0 || r->t->ev[i].dur_ns >= r->lod_min_ns;
}

/* A short event with a short container belongs to the container's block. */
static int is_inner(const layout *l, size_t i)
{
    int32_t c = l->up[i];
    return c >= 0 && !is_kept(l->r, (size_t)c);
}

/* The gap between a short event and the run open on its level, or -1 when
 * it cannot join it (no run, or another container). */
static int64_t gap_to_run(const layout *l, size_t i, size_t L)
{
    const run *u = &l->runs[L];
    if (u->anchor == NO_RUN || u->anchor != l->up[i]) return -1;
    int64_t g = l->r->t->ev[i].start_ns - u->end;
    return g < 0 ? 0 : g;
}

static void runs_reset(layout *l)
{
    for (size_t L = 0; L < l->r->nlevels; L++) l->runs[L].anchor = NO_RUN;
}

/* The largest gap a run bridges: the smallest bin floor at or above min_ns
 * that leaves at most block_max blocks (runs always break at a kept event
 * and where the container changes); -1 out of memory. */
static int64_t choose_gap(layout *l, size_t block_max)
{
    const opprof_trace *t = l->r->t;
    size_t *hist = calloc(BINS, sizeof *hist), forced = 0;
    if (!hist) return -1;
    runs_reset(l);
    for (size_t i = 0; i < t->nev; i++) {
        size_t L = level_of(l, i);
        if (is_kept(l->r, i)) {
            l->runs[L].anchor = NO_RUN;
            continue;
        }
        if (is_inner(l, i)) continue;
        int64_t g = gap_to_run(l, i, L), end = t->ev[i].start_ns + t->ev[i].dur_ns;
        if (g < 0) {
            forced++;
            l->runs[L] = (run){l->up[i], 0, end};
            continue;
        }
        hist[bucket(g)]++;
        if (end > l->runs[L].end) l->runs[L].end = end;
    }
    /* with a gap limit of bucket_floor(b), the gaps in bins >= b break runs */
    size_t breaks = 0;
    for (int b = 0; b < BINS; b++) breaks += hist[b];
    int b = 0;
    while (b < BINS && (forced + breaks > block_max || bucket_floor(b) < l->r->lod_min_ns)) breaks -= hist[b++];
    free(hist);
    return bucket_floor(b);
}

/* Folds short event i into a block: its container's when that is short,
 * else the run on its level's, opening one when it cannot join it.
 * Returns the block's index, or -1 out of memory. */
static int64_t merge(layout *l, const uint32_t *item, size_t i, size_t L)
{
    rep_trace *r = l->r;
    const op_event *e = &r->t->ev[i];
    const op_evx *x = op_evx_of(r->t, e);
    int64_t end = e->start_ns + e->dur_ns;
    rep_block *b;
    if (is_inner(l, i)) {
        b = &r->blocks[item[l->up[i]] - r->t->nev];
    } else {
        int64_t g = gap_to_run(l, i, L);
        run *u = &l->runs[L];
        if (g < 0 || g >= r->lod_gap_ns) {
            if (op_grow(&r->blocks, &r->blocks_cap, r->nblocks + 1, sizeof *r->blocks) != 0) return -1;
            b = &r->blocks[r->nblocks];
            *b = (rep_block){.start = e->start_ns, .end = end, .first = (uint32_t)i, .longest = (uint32_t)i};
            *u = (run){l->up[i], (uint32_t)r->nblocks++, end};
        } else {
            b = &r->blocks[u->block];
            if (end > b->end) b->end = end;
            if (end > u->end) u->end = end;
            if (e->dur_ns > r->t->ev[b->longest].dur_ns) b->longest = (uint32_t)i;
        }
        b->busy += e->dur_ns; /* the members at the block's row: the time they cover */
        b->mem += x->mem_total;
        b->dev += x->dev_total_ns;
    }
    b->count++;
    b->flops += x->flops;
    r->merged++;
    return (int64_t)(b - r->blocks);
}

/* Every event's item (itself when kept, else nev + its block), counting
 * each level's items into start[L + 1]. */
static int assign_items(layout *l, uint32_t *item, size_t *start)
{
    rep_trace *r = l->r;
    size_t nev = r->t->nev;
    runs_reset(l);
    for (size_t i = 0; i < nev; i++) {
        size_t L = level_of(l, i);
        if (is_kept(r, i)) {
            l->runs[L].anchor = NO_RUN;
            item[i] = (uint32_t)i;
            start[L + 1]++;
            continue;
        }
        size_t before = r->nblocks;
        int64_t b = merge(l, item, i, L);
        if (b < 0) return -1;
        item[i] = (uint32_t)(nev + (size_t)b);
        if (r->nblocks > before) start[L + 1]++;
    }
    return 0;
}

/* A counting sort of the items by level; stable, so each level keeps the
 * model's start order (a block sits where its first member does). */
static int place_items(layout *l, const uint32_t *item, size_t *start)
{
    rep_trace *r = l->r;
    const opprof_trace *t = r->t;
    size_t nev = t->nev;
    for (size_t th = 0; th < t->nthreads; th++)
        for (size_t L = l->base[th]; L < l->base[th + 1]; L++) {
            r->levels[3 * L] = (uint32_t)th;
            r->levels[3 * L + 1] = (uint32_t)(L - l->base[th]);
            r->levels[3 * L + 2] = (uint32_t)start[L + 1];
        }
    for (size_t L = 0; L < r->nlevels; L++) start[L + 1] += start[L];
    r->npage = start[r->nlevels];
    uint32_t *bpos = malloc((r->nblocks ? r->nblocks : 1) * sizeof *bpos);
    r->order = malloc((r->npage ? r->npage : 1) * sizeof *r->order);
    if (!bpos || !r->order) {
        free(bpos);
        return -1;
    }
    for (size_t i = 0; i < nev; i++) {
        uint32_t it = item[i];
        if (it >= nev && r->blocks[it - nev].first != i) continue;
        size_t p = start[level_of(l, i)]++;
        r->order[p] = it;
        if (it < nev) r->pos[i] = (uint32_t)p;
        else bpos[it - nev] = (uint32_t)p;
    }
    for (size_t i = 0; i < nev; i++)
        if (item[i] >= nev) r->pos[i] = bpos[item[i] - nev];
    free(bpos);
    return 0;
}

static int thread_levels(layout *l)
{
    rep_trace *r = l->r;
    const opprof_trace *t = r->t;
    size_t nth = t->nthreads;
    int32_t *maxrow = malloc((nth ? nth : 1) * sizeof *maxrow);
    l->base = calloc(nth + 1, sizeof *l->base);
    if (!maxrow || !l->base) {
        free(maxrow);
        return -1;
    }
    for (size_t i = 0; i < nth; i++) maxrow[i] = -1;
    for (size_t i = 0; i < t->nev; i++)
        if (l->row[i] > maxrow[t->ev[i].thread] && !is_inner(l, i)) maxrow[t->ev[i].thread] = l->row[i];
    for (size_t i = 0; i < nth; i++) l->base[i + 1] = l->base[i] + (size_t)(maxrow[i] + 1);
    r->nlevels = l->base[nth];
    free(maxrow);
    return 0;
}

int rep_layout_build(rep_trace *r, size_t budget)
{
    const opprof_trace *t = r->t;
    size_t n = t->nev ? t->nev : 1;
    int32_t *up = malloc(n * sizeof *up);
    uint16_t *row = malloc(n * sizeof *row);
    layout l = {r, up, row, NULL, NULL};
    uint32_t *item = malloc(n * sizeof *item);
    size_t *start = NULL, keep_max = budget / KEEP_SHARE_DEN * KEEP_SHARE_NUM;
    int rc = -1;
    r->pos = malloc(n * sizeof *r->pos);
    if (!up || !row || !item || !r->pos || compute_rows(t, up, row) != 0) goto out;
    r->lod_min_ns = budget && t->nev > budget ? choose_min_dur(t, keep_max) : 0;
    if (r->lod_min_ns < 0 || thread_levels(&l) != 0) goto out;
    start = calloc(r->nlevels + 1, sizeof *start);
    r->levels = malloc((r->nlevels ? r->nlevels : 1) * 3 * sizeof *r->levels);
    l.runs = malloc((r->nlevels ? r->nlevels : 1) * sizeof *l.runs);
    if (!start || !r->levels || !l.runs) goto out;
    r->lod_gap_ns = r->lod_min_ns > 0 ? choose_gap(&l, budget - keep_max) : 0;
    if (r->lod_gap_ns < 0 || assign_items(&l, item, start) != 0 || place_items(&l, item, start) != 0) goto out;
    rc = 0;
out:
    free(up);
    free(row);
    free(item);
    free(start);
    free(l.base);
    free(l.runs);
    return rc;
}

void rep_lod_json(rep_out *o, const rep_trace *r)
{
    if (!r->nblocks) return;
    rep_printf(o, ",\"lod\":{\"minNs\":%lld,\"gapNs\":%lld,\"merged\":%zu,\"blocks\":%zu,\"slices\":%zu}",
               (long long)r->lod_min_ns, (long long)r->lod_gap_ns, r->merged, r->nblocks, r->npage);
}

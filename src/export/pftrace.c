/* The .pftrace's thread sequences (see pftrace.h): each thread's ranges as
 * slice begin/end packets, its memory events as instants plus the
 * "Total Allocated" counter, flows from launches to the device activity
 * they started.
 *
 * Size: what repeats is interned once per sequence, and timestamps are
 * deltas on an incremental clock, so a slice of an interned name is two
 * packets of a few bytes each (figures in the README). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/pfschema.h"
#include "common/vec.h"
#include "export/pftrace.h"
#include "export/pftrace_meta.h"

#define IID_MEMORY 1 /* event name "[memory]"; strtab names follow */

static uint64_t abs_ts(const pf_wseq *s, int64_t t_ns)
{
    return (uint64_t)s->pw->base_ns + (uint64_t)t_ns;
}

static void interned(op_pbw *in, uint32_t field, uint32_t iid, const char *s, size_t n)
{
    op_pbw_begin(in, field);
    op_pbw_uint(in, PF_IN_IID, iid);
    op_pbw_bytes(in, PF_IN_NAME, s, n);
    op_pbw_end(in);
}

static uint32_t name_iid(pf_wseq *s, uint32_t id)
{
    if (s->name_gen[id] != s->gen) {
        const opprof_trace *t = s->pw->t;
        s->name_gen[id] = s->gen;
        s->name_iid[id] = ++s->next_name;
        interned(&s->pw->in, PF_ID_EVENT_NAMES, s->name_iid[id], op_strtab_get(&t->str, id),
                 op_strtab_len(&t->str, id));
    }
    return s->name_iid[id];
}

static void ann_string(pf_wseq *s, int which, uint32_t id)
{
    const opprof_trace *t = s->pw->t;
    if (s->str_gen[id] != s->gen) {
        s->str_gen[id] = s->gen;
        s->str_iid[id] = ++s->next_str;
        interned(&s->pw->in, PF_ID_STRING_VALUES, s->str_iid[id], op_strtab_get(&t->str, id),
                 op_strtab_len(&t->str, id));
    }
    op_pbw *te = &s->pw->te;
    op_pbw_begin(te, PF_TE_DEBUG_ANNOTATIONS);
    op_pbw_uint(te, PF_DA_NAME_IID, (uint64_t)which + 1);
    op_pbw_uint(te, PF_DA_STRING_IID, s->str_iid[id]);
    op_pbw_end(te);
}

/* torch's "Call stack": frames joined by ';', innermost first. */
static void ann_stack(pf_wseq *s, uint32_t k)
{
    const opprof_trace *t = s->pw->t;
    if (s->stack_gen[k] != s->gen) {
        s->stack_gen[k] = s->gen;
        s->stack_iid[k] = ++s->next_str;
        op_pbw *in = &s->pw->in;
        const op_stack *st = &t->stacks[k];
        size_t n = 0;
        for (uint32_t i = 0; i < st->nframes; i++) n += op_strtab_len(&t->str, st->frames[i]) + (i > 0);
        op_pbw_begin(in, PF_ID_STRING_VALUES);
        op_pbw_uint(in, PF_IN_IID, s->stack_iid[k]);
        op_pbw_tag(in, PF_IN_NAME, OP_PB_LEN);
        op_pbw_varint(in, n);
        for (uint32_t i = 0; i < st->nframes; i++) {
            if (i) op_pbw_raw(in, ";", 1);
            op_pbw_raw(in, op_strtab_get(&t->str, st->frames[i]), op_strtab_len(&t->str, st->frames[i]));
        }
        op_pbw_end(in);
    }
    op_pbw *te = &s->pw->te;
    op_pbw_begin(te, PF_TE_DEBUG_ANNOTATIONS);
    op_pbw_uint(te, PF_DA_NAME_IID, PF_ANN_STACK + 1);
    op_pbw_uint(te, PF_DA_STRING_IID, s->stack_iid[k]);
    op_pbw_end(te);
}

static void ann_num(pf_wseq *s, int which, uint32_t field, uint64_t v)
{
    op_pbw *te = &s->pw->te;
    op_pbw_begin(te, PF_TE_DEBUG_ANNOTATIONS);
    op_pbw_uint(te, PF_DA_NAME_IID, (uint64_t)which + 1);
    op_pbw_uint(te, field, v);
    op_pbw_end(te);
}

/* The packet of te (and in, when it interned something) at time ts. */
static int emit_event(pf_wseq *s, uint64_t ts)
{
    pf_writer *pw = s->pw;
    op_pbw *p = &pw->pkt;
    if (pw->te.out.failed || pw->in.out.failed) return -1;
    if (!pw->in.out.n && op_pf_put_short(s, ts, (const unsigned char *)pw->te.out.p, pw->te.out.n) == 0) {
        op_pbw_reset(&pw->te);
        return 0;
    }
    if (ts < s->last_ts) ts = s->last_ts;
    uint64_t dt = ts - s->last_ts;
    s->last_ts = ts;
    op_pbw_uint(p, PF_PKT_TIMESTAMP, dt);
    op_pbw_bytes(p, PF_PKT_TRACK_EVENT, pw->te.out.p, pw->te.out.n);
    if (pw->in.out.n) op_pbw_bytes(p, PF_PKT_INTERNED_DATA, pw->in.out.p, pw->in.out.n);
    op_pbw_uint(p, PF_PKT_SEQUENCE_ID, s->id); /* no sequence_flags: see op_pf_put_short */
    op_pbw_reset(&pw->te);
    op_pbw_reset(&pw->in);
    return op_pf_emit(pw);
}

/* An event of nothing but its times and name (no cold part, the default
 * category, lane 0) whose name this piece has interned: its TrackEvent
 * built on the stack, the same bytes as through pw->te. */
static inline int plain_event(const pf_wseq *s, const op_event *e)
{
    return !e->x && e->cat == OPPROF_CAT_CPU_OP && !(e->flags & (OP_EV_HAS_EXT | OP_EV_HAS_CORR)) &&
           s->name_gen[e->name] == s->gen && !s->pw->te.out.n && !s->pw->in.out.n;
}

/* The sequence's clock snapshot: its incremental clock at t0, with the
 * clocks it stands against. */
void op_pf_put_clocks(pf_writer *pw, uint64_t t0)
{
    op_pbw *p = &pw->pkt;
    op_pbw_begin(p, PF_PKT_CLOCK_SNAPSHOT);
    op_pbw_begin(p, PF_CS_CLOCKS);
    op_pbw_uint(p, PF_CLK_ID, PF_CLOCK_SEQ_FIRST);
    op_pbw_uint(p, PF_CLK_TIMESTAMP, t0);
    op_pbw_uint(p, PF_CLK_INCREMENTAL, 1);
    op_pbw_end(p);
    /* The clock the times were read on first (readers take the first as the
     * reference), then BOOTTIME, Perfetto's trace clock. */
    op_pbw_begin(p, PF_CS_CLOCKS);
    op_pbw_uint(p, PF_CLK_ID, PF_CLOCK_REALTIME);
    op_pbw_uint(p, PF_CLK_TIMESTAMP, t0);
    op_pbw_end(p);
    /* Times before the machine's boot are no wall-clock times (an imported
     * trace of its own origin): they stay as they are. */
    int64_t boot = pw->boot_ns;
    op_pbw_begin(p, PF_CS_CLOCKS);
    op_pbw_uint(p, PF_CLK_ID, PF_CLOCK_BOOTTIME);
    op_pbw_uint(p, PF_CLK_TIMESTAMP, boot > 0 && (int64_t)t0 >= boot ? t0 - (uint64_t)boot : t0);
    op_pbw_end(p);
    op_pbw_end(p);
}

/* Clears the incremental state; sets the clock and the thread's track as
 * the defaults; interns the categories and annotation names. */
static int first_packet(pf_wseq *s, uint64_t t0)
{
    pf_writer *pw = s->pw;
    op_pbw *p = &pw->pkt;
    op_pbw_uint(p, PF_PKT_SEQUENCE_ID, s->id);
    op_pbw_uint(p, PF_PKT_SEQUENCE_FLAGS, PF_SEQ_INCREMENTAL_STATE_CLEARED);
    op_pf_put_clocks(pw, t0);
    op_pbw_begin(p, PF_PKT_DEFAULTS);
    op_pbw_uint(p, PF_DEF_CLOCK_ID, PF_CLOCK_SEQ_FIRST);
    op_pbw_begin(p, PF_DEF_TRACK_EVENT);
    op_pbw_uint(p, PF_TED_TRACK_UUID, PF_UUID_THREAD(s->thread, 0));
    op_pbw_end(p);
    op_pbw_end(p);
    op_pbw_begin(p, PF_PKT_INTERNED_DATA);
    for (int c = 0; c <= OPPROF_CAT_OTHER; c++) {
        const char *name = opprof_category_name(c);
        interned(p, PF_ID_CATEGORIES, (uint32_t)c + 1, name, strlen(name));
    }
    interned(p, PF_ID_EVENT_NAMES, IID_MEMORY, "[memory]", 8);
    for (int a = 0; a < PF_ANN_COUNT_; a++)
        interned(p, PF_ID_ANNOTATION_NAMES, (uint32_t)a + 1, op_pf_ann_names[a], strlen(op_pf_ann_names[a]));
    op_pbw_end(p);
    s->last_ts = t0;
    s->next_name = IID_MEMORY;
    s->next_str = 0;
    return op_pf_emit(pw);
}

static int lane_track(pf_wseq *s, size_t l)
{
    const opprof_trace *t = s->pw->t;
    op_pbw *p = &s->pw->pkt;
    const op_thread *th = &t->threads[s->thread];
    char name[128];
    snprintf(name, sizeof name, "%s %lld (overlapping %zu)", th->device >= 0 ? "stream" : "thread",
             (long long)th->tid, l);
    op_pbw_begin(p, PF_PKT_TRACK_DESCRIPTOR);
    op_pbw_uint(p, PF_TD_UUID, PF_UUID_THREAD(s->thread, l));
    op_pbw_uint(p, PF_TD_PARENT_UUID, PF_UUID_THREAD(s->thread, 0));
    op_pbw_bytes(p, PF_TD_NAME, name, strlen(name));
    op_pbw_end(p);
    op_pbw_uint(p, PF_PKT_SEQUENCE_ID, s->id);
    return op_pf_emit(s->pw);
}

/* Ends every open range that ends by `limit`, earliest first. */
static int pop_ends(pf_wseq *s, int64_t limit)
{
    for (;;) {
        size_t best = s->nlanes;
        for (size_t l = 0; l < s->nlanes; l++)
            if (s->lanes[l].n && (best == s->nlanes || s->lanes[l].end[s->lanes[l].n - 1] <
                                                            s->lanes[best].end[s->lanes[best].n - 1]))
                best = l;
        if (best == s->nlanes) return 0;
        pf_lane *ln = &s->lanes[best];
        int64_t end = ln->end[ln->n - 1];
        if (end > limit) return 0;
        ln->n--;
        op_pbw_uint(&s->pw->te, PF_TE_TYPE, PF_TYPE_SLICE_END);
        if (best) op_pbw_uint(&s->pw->te, PF_TE_TRACK_UUID, PF_UUID_THREAD(s->thread, best));
        if (emit_event(s, abs_ts(s, end)) != 0) return -1;
    }
}

/* The first lane where [.., end) nests, made when none does. */
static int64_t lane_for(pf_wseq *s, int64_t end)
{
    size_t l = 0;
    while (l < s->nlanes && s->lanes[l].n && s->lanes[l].end[s->lanes[l].n - 1] < end) l++;
    if (l == s->nlanes) {
        if (l >= PF_MAX_LANES) return -1;
        pf_lane *ls = realloc(s->lanes, (l + 1) * sizeof *ls);
        if (!ls) return -1;
        s->lanes = ls;
        memset(&ls[l], 0, sizeof *ls);
        s->nlanes++;
        if (l && lane_track(s, l) != 0) return -1;
    }
    pf_lane *ln = &s->lanes[l];
    if (op_grow(&ln->end, &ln->cap, ln->n + 1, sizeof *ln->end)) return -1;
    ln->end[ln->n++] = end;
    return (int64_t)l;
}

/* e's annotations of the given parts (PF_PART_*), in one order whatever
 * the parts, so a slice's bytes do not depend on how it was written. */
static void annotate(pf_wseq *s, const op_event *e, unsigned parts)
{
    const opprof_trace *t = s->pw->t;
    const op_evx *x = op_evx_of(t, e);
    op_pbw *te = &s->pw->te;
    int open = (parts & PF_PART_OPEN) != 0, close = (parts & PF_PART_CLOSE) != 0;
    if (open && x->shapes) ann_string(s, PF_ANN_SHAPES, x->shapes);
    if (open && x->types) ann_string(s, PF_ANN_TYPES, x->types);
    if (open && x->stack && x->stack <= t->nstacks) ann_stack(s, x->stack - 1);
    if (close && x->flops) ann_num(s, PF_ANN_FLOPS, PF_DA_UINT, x->flops);
    if (open && (e->flags & OP_EV_HAS_EXT)) ann_num(s, PF_ANN_EXT, PF_DA_INT, (uint64_t)x->external_id);
    if (open && (e->flags & OP_EV_HAS_CORR)) {
        ann_num(s, PF_ANN_CORR, PF_DA_INT, (uint64_t)x->correlation);
        if (t->options & OP_TRACE_DEVICE) { /* the arrow from a launch to what it launched */
            if (op_cat_is_launch(e->cat)) op_pbw_fixed64(te, PF_TE_FLOW_IDS, (uint64_t)x->correlation);
            else if (op_cat_is_device(e->cat)) op_pbw_fixed64(te, PF_TE_TERMINATING_FLOW_IDS, (uint64_t)x->correlation);
        }
    }
    if (close && x->args && op_strtab_len(&t->str, x->args)) ann_string(s, PF_ANN_ARGS, x->args);
}

static int slice_begin(pf_wseq *s, const op_event *e, uint64_t l, unsigned parts)
{
    op_pbw *te = &s->pw->te;
    op_pbw_uint(te, PF_TE_TYPE, PF_TYPE_SLICE_BEGIN);
    op_pbw_uint(te, PF_TE_NAME_IID, name_iid(s, e->name));
    if (e->cat != OPPROF_CAT_CPU_OP) /* the reader's default, as a Chrome event without "cat" */
        op_pbw_uint(te, PF_TE_CATEGORY_IIDS, (uint64_t)(e->cat <= OPPROF_CAT_OTHER ? e->cat : OPPROF_CAT_OTHER) + 1);
    if (l) op_pbw_uint(te, PF_TE_TRACK_UUID, PF_UUID_THREAD(s->thread, l));
    annotate(s, e, parts);
    return emit_event(s, abs_ts(s, e->start_ns));
}

static int begin_event(pf_wseq *s, const op_event *e)
{
    int64_t l = lane_for(s, e->start_ns + e->dur_ns);
    return l < 0 ? -1 : slice_begin(s, e, (uint64_t)l, PF_PART_OPEN | PF_PART_CLOSE);
}

int op_pf_seq_begin(pf_wseq *s, const op_event *e)
{
    if (plain_event(s, e) && op_pf_seq_quick(s, e->start_ns, s->name_iid[e->name]) == 0) return 0;
    return slice_begin(s, e, 0, PF_PART_OPEN);
}

int op_pf_seq_end(pf_wseq *s, const op_event *e)
{
    /* an end without FLOPs or args: its type alone */
    if (!e->x && op_pf_seq_quick(s, e->start_ns + e->dur_ns, 0) == 0) return 0;
    op_pbw_uint(&s->pw->te, PF_TE_TYPE, PF_TYPE_SLICE_END);
    annotate(s, e, PF_PART_CLOSE);
    return emit_event(s, abs_ts(s, e->start_ns + e->dur_ns));
}

/* A [memory] instant on the thread's track, then the live bytes on the
 * counter track of its process and device. */
int op_pf_seq_memory(pf_wseq *s, const op_mem_event *m)
{
    op_pbw *te = &s->pw->te;
    op_pbw_uint(te, PF_TE_TYPE, PF_TYPE_INSTANT);
    op_pbw_uint(te, PF_TE_NAME_IID, IID_MEMORY);
    ann_num(s, PF_ANN_BYTES, PF_DA_INT, (uint64_t)m->bytes);
    ann_num(s, PF_ANN_ADDR, PF_DA_UINT, m->addr);
    ann_num(s, PF_ANN_TOTAL, PF_DA_INT, (uint64_t)m->total_allocated);
    ann_num(s, PF_ANN_DEV_TYPE, PF_DA_INT, (uint64_t)(int64_t)m->device_type);
    ann_num(s, PF_ANN_DEV_ID, PF_DA_INT, (uint64_t)(int64_t)m->device_id);
    uint64_t ts = abs_ts(s, m->ts_ns);
    if (emit_event(s, ts) != 0) return -1;
    op_pbw_uint(te, PF_TE_TYPE, PF_TYPE_COUNTER);
    op_pbw_uint(te, PF_TE_TRACK_UUID, PF_UUID_COUNTER(op_pf_counter_of(s->pw, m)));
    op_pbw_int(te, PF_TE_COUNTER_VALUE, m->total_allocated);
    return emit_event(s, ts);
}

/* Thread th's events (ev[0..ne), model order) and memory events, merged in
 * time order: ends first, then a range that begins, then memory at the
 * same time (the Chrome writer's order). */
static int write_thread(pf_wseq *s, const uint32_t *ev, size_t ne, const uint32_t *mem, size_t nm)
{
    const opprof_trace *t = s->pw->t;
    int64_t t0 = INT64_MAX;
    if (ne) t0 = t->ev[ev[0]].start_ns;
    if (nm && t->mem[mem[0]].ts_ns < t0) t0 = t->mem[mem[0]].ts_ns;
    if (t0 == INT64_MAX) t0 = 0;
    if (op_pf_seq_start(s, s->thread, t0) != 0) return -1;
    size_t i = 0, k = 0;
    while (i < ne || k < nm) {
        int64_t ts = i < ne ? t->ev[ev[i]].start_ns : INT64_MAX;
        int64_t tm = k < nm ? t->mem[mem[k]].ts_ns : INT64_MAX;
        if (pop_ends(s, ts < tm ? ts : tm) != 0) return -1;
        int rc = tm < ts ? op_pf_seq_memory(s, &t->mem[mem[k++]]) : begin_event(s, &t->ev[ev[i++]]);
        if (rc != 0) return -1;
    }
    return pop_ends(s, INT64_MAX);
}

/* Indices of items per thread, each thread's in their model order. */
static uint32_t ev_thread(const void *items, size_t i)
{
    return ((const op_event *)items)[i].thread;
}

static uint32_t mem_thread(const void *items, size_t i)
{
    return ((const op_mem_event *)items)[i].thread;
}

static uint32_t *by_thread(size_t n, size_t nthreads, const void *items, uint32_t (*thread_of)(const void *, size_t),
                           size_t **first)
{
    *first = calloc(nthreads + 1, sizeof **first);
    uint32_t *idx = malloc((n ? n : 1) * sizeof *idx);
    if (!*first || !idx) {
        free(idx);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t th = thread_of(items, i);
        if (th < nthreads) (*first)[th + 1]++;
    }
    for (size_t i = 0; i < nthreads; i++) (*first)[i + 1] += (*first)[i];
    size_t *fill = calloc(nthreads ? nthreads : 1, sizeof *fill);
    if (!fill) {
        free(idx);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t th = thread_of(items, i);
        if (th < nthreads) idx[(*first)[th] + fill[th]++] = (uint32_t)i;
    }
    free(fill);
    return idx;
}

/* Room for n ids and their generations, the new ones not interned: both
 * arrays grow by op_grow's one rule from one capacity, so they stay alike. */
static int fit(uint32_t **iid, uint32_t **gen, size_t *cap, size_t n)
{
    size_t ci = *cap, cg = *cap;
    if (op_grow(iid, &ci, n, sizeof **iid) != 0 || op_grow(gen, &cg, n, sizeof **gen) != 0) return -1;
    memset(*iid + *cap, 0, (ci - *cap) * sizeof **iid);
    memset(*gen + *cap, 0, (cg - *cap) * sizeof **gen);
    *cap = ci;
    return 0;
}

int op_pf_seq_fit(pf_wseq *s, size_t nstr, size_t nstacks)
{
    if (fit(&s->name_iid, &s->name_gen, &s->cap_name, nstr) != 0 || fit(&s->str_iid, &s->str_gen, &s->cap_str, nstr) != 0)
        return -1;
    return fit(&s->stack_iid, &s->stack_gen, &s->cap_stack, nstacks);
}

int op_pf_seq_start(pf_wseq *s, size_t thread, int64_t t0_ns)
{
    s->thread = thread;
    s->id = 2 + (uint32_t)thread;
    s->gen++;
    for (size_t l = 0; l < s->nlanes; l++) s->lanes[l].n = 0;
    return first_packet(s, abs_ts(s, t0_ns));
}

void op_pf_seq_free(pf_wseq *s)
{
    for (size_t l = 0; l < s->nlanes; l++) free(s->lanes[l].end);
    free(s->lanes);
    free(s->name_iid);
    free(s->name_gen);
    free(s->str_iid);
    free(s->str_gen);
    free(s->stack_iid);
    free(s->stack_gen);
    memset(s, 0, sizeof *s);
}

int op_pf_write_threads(pf_writer *pw)
{
    const opprof_trace *t = pw->t;
    if (t->nev > UINT32_MAX || t->nmem > UINT32_MAX) return -1;
    size_t nt = t->nthreads;
    pf_wseq s;
    memset(&s, 0, sizeof s);
    s.pw = pw;
    size_t *ev_first = NULL, *mem_first = NULL;
    uint32_t *ev_idx = by_thread(t->nev, nt, t->ev, ev_thread, &ev_first);
    uint32_t *mem_idx = by_thread(t->nmem, nt, t->mem, mem_thread, &mem_first);
    int rc = ev_idx && mem_idx ? op_pf_seq_fit(&s, t->str.count ? t->str.count : 1, t->nstacks ? t->nstacks : 1) : -1;
    for (size_t th = 0; th < nt && rc == 0; th++) {
        s.thread = th;
        rc = write_thread(&s, ev_idx + ev_first[th], ev_first[th + 1] - ev_first[th], mem_idx + mem_first[th],
                          mem_first[th + 1] - mem_first[th]);
        /* Lanes past the first are tracks of this thread only. */
        for (; s.nlanes > 1; s.nlanes--) free(s.lanes[s.nlanes - 1].end);
    }
    op_pf_seq_free(&s);
    free(ev_idx);
    free(mem_idx);
    free(ev_first);
    free(mem_first);
    return rc;
}

int op_pf_write(const opprof_trace *t, op_jw *w, const opprof_export_options *o, int zlevel)
{
    pf_writer pw;
    op_pf_writer_init(&pw, w, o, zlevel, t->base_time_ns);
    pw.t = t;
    int rc = op_pf_meta_threads(&pw);
    if (rc == 0) rc = op_pf_meta_counters(&pw);
    if (rc == 0) rc = op_pf_meta_info(&pw, t);
    if (rc == 0) rc = op_pf_write_threads(&pw);
    if (rc == 0) rc = op_pf_write_samples(&pw, t, 0);
    if (rc == 0) rc = op_pf_flush(&pw);
    op_pf_writer_free(&pw);
    if (w->status) return w->status;
    if (rc != 0) return op_fail(OPPROF_E_NOMEM, "out of memory while exporting %zu events", t->nev);
    return OPPROF_OK;
}

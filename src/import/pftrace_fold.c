/* Key averages folded while a .pftrace is read (pftrace.h): no event is
 * kept. Each track keeps a stack of its open slices; a slice's end adds its
 * duration, and its duration less its children's, to the row of its name
 * (and input shapes), and its duration to its parent's children time. The
 * result is an opprof_trace of sums (op_aggrow), which opprof_key_averages
 * groups as it groups an aggregating session's.
 *
 * Why this gives the model's table to the byte: the model (model/build.c)
 * makes each event the child of the innermost event of its thread that
 * wholly contains it, in the order (start, the longer first, the order
 * added). When a thread's slices are on one track and its times never go
 * back, begins and ends pair as a stack whose nesting is that containment,
 * but for a slice of no duration that touches another's end (the model may
 * hang it elsewhere; its duration, 0, changes no self time). The rows are
 * put in the order of their first slice by the model's key, the file's
 * order of begins breaking ties, which is the order the model's groups are
 * made in. What this cannot follow goes back to the model (PF_NEED_MODEL):
 * memory events (attributed by time, with totals and a [memory] row),
 * device activity (charged to launches by id), a thread's slices on two
 * tracks (opprof's lanes for overlapping ranges) and times that go back on
 * a track. */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/map.h"
#include "common/satmath.h"
#include "common/vec.h"
#include "import/pftrace.h"

struct pf_fold {
    int by_shape;
    uint64_t begun;        /* slices kept: the events the model would hold */
    uint32_t *row_of_name; /* by name: strtab id -> row + 1 */
    size_t nnames, cap_names;
    op_map rows;           /* by name and shapes: name << 32 | shapes -> row */
    uint32_t *lane;        /* thread -> the track + 1 its slices are on */
    size_t nlane, cap_lane;
    int sat;
};

pf_fold *op_pf_fold_new(const opprof_avg_options *opt)
{
    pf_fold *f = calloc(1, sizeof *f);
    if (f) f->by_shape = opt && opt->group_by_input_shape;
    return f;
}

void op_pf_fold_free(pf_fold *f)
{
    if (!f) return;
    free(f->row_of_name);
    free(f->lane);
    op_map_free(&f->rows);
    free(f);
}

int op_pf_need_model(pf_reader *r)
{
    if (!r->status) r->status = PF_NEED_MODEL;
    return -1;
}

uint64_t op_pf_held(const pf_reader *r)
{
    return r->fold ? r->fold->begun : r->t->nev + r->t->nmem;
}

static int grow_zeroed_slow(uint32_t **a, size_t *n, size_t *cap, size_t need)
{
    if (op_grow(a, cap, need, sizeof **a) != 0) return -1;
    memset(*a + *n, 0, (need - *n) * sizeof **a);
    *n = need;
    return 0;
}

/* a[n..need) zeroed after growing a to at least need entries. Checked
 * twice per slice, and almost never grows: the test inline, the growing
 * called (gcc kept the whole as a call, 3% of the reader). */
static inline int grow_zeroed(uint32_t **a, size_t *n, size_t *cap, size_t need)
{
    return need <= *n ? 0 : grow_zeroed_slow(a, n, cap, need);
}

int op_pf_fold_time(pf_reader *r, pf_track *tr, int64_t ns, int begin)
{
    if (tr->kind != PF_TK_THREAD) return 0; /* its slices are no events */
    if (ns < tr->last_ns) return op_pf_need_model(r);
    tr->last_ns = ns;
    if (!begin) return 0;
    pf_fold *f = r->fold;
    uint32_t k = (uint32_t)(tr - r->tracks) + 1;
    if (grow_zeroed(&f->lane, &f->nlane, &f->cap_lane, (size_t)tr->thread + 1) != 0)
        return op_pf_fail(r, OPPROF_E_NOMEM, r->pkt, "out of memory");
    if (!f->lane[tr->thread]) f->lane[tr->thread] = k;
    return f->lane[tr->thread] == k ? 0 : op_pf_need_model(r);
}

int op_pf_fold_push(pf_reader *r, pf_track *tr, const pf_fopen *o, const unsigned char *at)
{
    if (tr->nfo == tr->capfo && op_grow(&tr->fo, &tr->capfo, tr->nfo + 1, sizeof *tr->fo) != 0)
        return op_pf_fail(r, OPPROF_E_NOMEM, at, "out of memory");
    pf_fopen *p = &tr->fo[tr->nfo++];
    *p = *o;
    if (o->name != UINT32_MAX) p->seq = r->fold->begun++;
    return 0;
}

/* The row of o's key, made when new; NULL when out of memory. */
static op_aggrow *row_of(pf_reader *r, const pf_fopen *o)
{
    pf_fold *f = r->fold;
    opprof_trace *t = r->t;
    uint32_t shapes = f->by_shape ? o->shapes : 0;
    uint64_t *slot = NULL;
    if (!f->by_shape) {
        if (grow_zeroed(&f->row_of_name, &f->nnames, &f->cap_names, (size_t)o->name + 1) != 0) return NULL;
        if (f->row_of_name[o->name]) return &t->agg[f->row_of_name[o->name] - 1];
    } else {
        int added;
        if (!(slot = op_map_at(&f->rows, (uint64_t)o->name << 32 | shapes, &added))) return NULL;
        if (!added) return &t->agg[*slot];
    }
    op_aggrow *row = op_trace_add_agg(t);
    if (!row) return NULL;
    row->name = o->name;
    row->shapes = shapes;
    row->cat = OPPROF_CAT_CPU_OP; /* every row kept is a host range (device activity goes to the model) */
    row->first_start_ns = INT64_MAX;
    if (slot) *slot = t->nagg - 1;
    else f->row_of_name[o->name] = (uint32_t)t->nagg;
    return row;
}

/* op_pf_fold_close's work, inline in op_pf_fold_run. */
static inline int close_slice(pf_reader *r, pf_track *tr, const pf_fopen *o, int64_t dur, const unsigned char *at)
{
    pf_fold *f = r->fold;
    op_aggrow *row = row_of(r, o);
    if (!row) return op_pf_fail(r, OPPROF_E_NOMEM, at, "out of memory");
    int64_t end = o->start + dur;
    /* the model's order: start, the longer first, the order added */
    if (o->start < row->first_start_ns ||
        (o->start == row->first_start_ns &&
         (end > row->first_end_ns || (end == row->first_end_ns && o->seq < row->first_seq)))) {
        row->first_start_ns = o->start;
        row->first_end_ns = end;
        row->first_seq = o->seq;
    }
    row->count++;
    row->total_ns = op_sat_add(row->total_ns, dur, &f->sat);
    row->self_ns = op_sat_add(row->self_ns, dur - o->child, &f->sat);
    row->flops = op_sat_addu(row->flops, o->flops, &f->sat);
    for (size_t i = tr->nfo; i-- > 0;) { /* its parent: the innermost slice kept around it */
        if (tr->fo[i].name == UINT32_MAX) continue;
        tr->fo[i].child += dur;
        break;
    }
    return 0;
}

/* One byte of a packet's field: its tag, wire type, and a value under 2^7. */
#define PF_TAG(field, wire) ((unsigned char)((field) << 3 | (wire)))

/* The sequence, its clock and its default track that a run's packets are
 * read on, found at the first packet of each sequence id met. */
typedef struct run_seq {
    uint64_t id;
    pf_seq *s;
    pf_clock *k;  /* its default clock when sequence-scoped, else NULL (times as they are) */
    pf_track *tr; /* its default track, a thread's, on which this fold keeps the thread's slices */
} run_seq;

/* rs for sequence id: 0, or -1 when its packets need the general reader
 * (no state, no default track or names, a clock no snapshot defined, a
 * track that is not a thread's or not yet its thread's lane). */
static int run_seq_of(pf_reader *r, uint64_t id, run_seq *rs)
{
    uint32_t i, t;
    if (!op_map_get_u32(&r->seq_ix, id, &i)) return -1;
    pf_seq *s = &r->seqs[i];
    if (!s->has_def_track || !s->name_q || !op_map_get_u32(&r->track_ix, s->def_track, &t)) return -1;
    pf_track *tr = &r->tracks[t];
    pf_fold *f = r->fold;
    if (tr->kind != PF_TK_THREAD || tr->thread >= f->nlane || f->lane[tr->thread] != t + 1) return -1;
    pf_clock *k = NULL;
    if (s->def_clock >= PF_CLOCK_SEQ_FIRST && s->def_clock < PF_CLOCK_SEQ_FIRST + 64) {
        k = op_pf_clock(s, s->def_clock - PF_CLOCK_SEQ_FIRST);
        if (!k || !k->valid) return -1;
    }
    *rs = (run_seq){id, s, k, tr};
    return 0;
}

int op_pf_fold_run(pf_reader *r, const unsigned char *p, const unsigned char *end, const unsigned char *base,
                   const unsigned char **stop)
{
    pf_fold *f = r->fold;
    run_seq rs = {0};
    int have = 0, rc = 0;
    *stop = p;
    if (!f || r->batch) return 0;
    /* In locals while the run lasts: through the stores to the stacks the
     * compiler would read them again from *r at every packet. */
    uint64_t begun = f->begun, max = r->max_events ? r->max_events : UINT64_MAX;
    int64_t t_min = r->t_min, t_max = r->t_max;
    int any = r->any_time;
    while (end - p >= 2 && p[0] == PF_TAG(PF_TRACE_PACKET, OP_PB_LEN) && p[1] < 0x80 && p[1] <= end - p - 2) {
        const unsigned char *b = p + 2, *be = b + p[1];
        /* timestamp: a delta of one or two bytes */
        if (be - b < 3 || b[0] != PF_TAG(PF_PKT_TIMESTAMP, OP_PB_VARINT)) break;
        uint64_t ts = b[1];
        b += 2;
        if (ts >= 0x80) {
            if (b[0] >= 0x80) break;
            ts = (ts & 0x7f) | (uint64_t)b[0] << 7;
            b++;
        }
        /* track_event: type END, or type BEGIN and a name iid */
        if (be - b < 4 || b[0] != PF_TAG(PF_PKT_TRACK_EVENT, OP_PB_LEN) || (b[1] != 2 && b[1] != 4) ||
            b[1] > be - b - 2 || b[2] != PF_TAG(PF_TE_TYPE, OP_PB_VARINT))
            break;
        const unsigned char *e = b + 2;
        int begin = b[1] == 4;
        if (begin ? e[1] != PF_TYPE_SLICE_BEGIN || e[2] != PF_TAG(PF_TE_NAME_IID, OP_PB_VARINT) || e[3] >= PF_QUICK_NAMES
                  : e[1] != PF_TYPE_SLICE_END)
            break;
        b = e + b[1];
        /* the sequence id, then no flags or ones that clear nothing */
        if (be - b < 2 || b[0] != PF_TAG(PF_PKT_SEQUENCE_ID, OP_PB_VARINT) || b[1] >= 0x80) break;
        uint64_t id = b[1];
        b += 2;
        if (b != be && (be - b != 2 || b[0] != PF_TAG(PF_PKT_SEQUENCE_FLAGS, OP_PB_VARINT) || b[1] >= 0x80 ||
                        (b[1] & PF_SEQ_INCREMENTAL_STATE_CLEARED)))
            break;
        if ((!have || rs.id != id) && run_seq_of(r, id, &rs) != 0) break;
        have = 1;
        pf_track *tr = rs.tr;
        pf_clock *k = rs.k;
        uint32_t name = 0;
        if (begin && !(name = rs.s->name_q[e[3]])) break;
        /* the time, as packet_time() makes it */
        uint64_t v = ts, d = 0;
        if (k && op_pf_clock_ns(k, ts, &v, &d) != 0) break;
        if (v > (uint64_t)OP_TIME_LIMIT_NS || (int64_t)v < tr->last_ns) break;
        if (begin && (tr->nfo == tr->capfo || begun >= max)) break;
        /* read: what the general reader does with it */
        int64_t ns = (int64_t)v;
        if (k && k->incremental) k->value += d;
        tr->last_ns = ns;
        if (begin) {
            pf_fopen *o = &tr->fo[tr->nfo++];
            o->start = ns;
            o->child = 0;
            o->seq = begun++;
            o->flops = 0;
            o->name = name - 1;
            o->shapes = 0;
            if (!any || ns < t_min) t_min = ns;
            if (!any || ns > t_max) t_max = ns;
            any = 1;
        } else if (tr->nfo) {
            const pf_fopen *o = &tr->fo[--tr->nfo]; /* read in place: the stack keeps what it popped until a push */
            if (o->name != UINT32_MAX) {
                if (!any || o->start < t_min) t_min = o->start;
                if (!any || ns > t_max) t_max = ns;
                any = 1;
                r->pkt = p;
                r->pkt_off = (uint64_t)(p - base);
                if ((rc = close_slice(r, tr, o, ns > o->start ? ns - o->start : 0, p)) != 0) break;
            }
        }
        p = be;
    }
    f->begun = begun;
    r->t_min = t_min;
    r->t_max = t_max;
    r->any_time = any;
    *stop = p;
    return rc;
}

int op_pf_fold_close(pf_reader *r, pf_track *tr, const pf_fopen *o, int64_t dur, const unsigned char *at)
{
    return close_slice(r, tr, o, dur, at);
}

static int row_before(const void *pa, const void *pb)
{
    const op_aggrow *a = pa, *b = pb;
    if (a->first_start_ns != b->first_start_ns) return a->first_start_ns < b->first_start_ns ? -1 : 1;
    if (a->first_end_ns != b->first_end_ns) return a->first_end_ns > b->first_end_ns ? -1 : 1;
    return a->first_seq < b->first_seq ? -1 : a->first_seq > b->first_seq;
}

int op_pf_fold_finish(pf_reader *r)
{
    opprof_trace *t = r->t;
    /* Slices still open last to the trace's last time, innermost first. */
    for (size_t k = 0; k < r->ntracks; k++) {
        pf_track *tr = &r->tracks[k];
        while (tr->nfo) {
            pf_fopen o = tr->fo[--tr->nfo];
            if (o.name == UINT32_MAX) continue;
            if (op_pf_fold_close(r, tr, &o, r->t_max > o.start ? r->t_max - o.start : 0, r->pkt) != 0) return -1;
        }
    }
    if (op_thread_map_number(&r->threads, t) != 0) return op_pf_fail(r, OPPROF_E_NOMEM, r->pkt, "out of memory");
    int64_t t0 = r->any_time ? r->t_min : 0;
    for (size_t i = 0; i < t->nagg; i++) {
        t->agg[i].first_start_ns -= t0;
        t->agg[i].first_end_ns -= t0;
    }
    if (t->nagg > 1) qsort(t->agg, t->nagg, sizeof *t->agg, row_before);
    t->base_time_ns = t0;
    t->duration_ns = r->any_time ? r->t_max - t0 : 0;
    if (r->fold->sat) t->options |= OP_TRACE_SATURATED;
    return 0;
}

/* TrackEvents of a .pftrace into the model: slice begins and ends paired
 * per track, "[memory]" instants, opprof's metadata instant, and the debug
 * annotations that carry shapes, FLOPs, ids and memory (pftrace.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/pfschema.h"
#include "common/satmath.h"
#include "import/callstack.h"
#include "import/pftrace.h"
#include "import/value_text.h"

#define PF_MAX_BYTES ((int64_t)1 << 47) /* 128 TiB */

/* What the annotations of one event said. */
typedef struct pf_ann {
    uint32_t has; /* 1 << PF_ANN_* */
    uint32_t str[PF_ANN_COUNT_]; /* strtab ids of string values */
    uint64_t num[PF_ANN_COUNT_];
} pf_ann;

/* The event's fields besides annotations. */
typedef struct pf_te {
    uint64_t type, track;
    int has_track, has_name, skip_cat;
    int has_ann; /* debug annotations follow (most slices have none: annotations() is skipped) */
    uint32_t name; /* strtab id */
    int cat;
    const unsigned char *name_p; /* an inline name, before interning */
    size_t name_n;
} pf_te;

static int nomem(pf_reader *r, const unsigned char *at)
{
    return op_pf_fail(r, OPPROF_E_NOMEM, at, "out of memory");
}

static int bad(pf_reader *r, op_pbr *at, const char *why)
{
    return op_pf_fail(r, OPPROF_E_PARSE, at->p, "track event: %s", why);
}

/* category_iids may come packed (one length-delimited run) or one by one. */
static int category_iid(pf_reader *r, pf_seq *s, op_pbf f, const unsigned char *at, pf_te *e)
{
    uint64_t iid = f.v;
    if (f.wire == OP_PB_LEN) {
        op_pbr p = f.sub;
        const char *why;
        if (p.p == p.end) return 0;
        if (op_pbr_varint(&p, &iid, &why) != 0) return bad(r, &p, why);
    } else if (f.wire != OP_PB_VARINT) {
        return 0;
    }
    uint32_t c;
    if (!op_map_get_u32(&s->cats, iid, &c))
        return op_pf_fail(r, OPPROF_E_PARSE, at, "track event: category iid %llu is not interned on its sequence", (unsigned long long)iid);
    if (c == UINT32_MAX) e->skip_cat = 1;
    else e->cat = (int)c;
    return 0;
}

static int fields(pf_reader *r, pf_seq *s, op_pbr te, pf_te *e)
{
    op_pbf f;
    const char *why;
    int rc, ncat = 0;
    memset(e, 0, sizeof *e);
    e->cat = OPPROF_CAT_CPU_OP; /* no category: an operator, as a Chrome event without "cat" */
    while ((rc = op_pbr_next(&te, &f, &why)) > 0) {
        if (f.field == PF_TE_TYPE && f.wire == OP_PB_VARINT) {
            e->type = f.v;
        } else if (f.field == PF_TE_TRACK_UUID && f.wire == OP_PB_VARINT) {
            e->track = f.v;
            e->has_track = 1;
        } else if (f.field == PF_TE_NAME_IID && f.wire == OP_PB_VARINT) {
            if (!op_map_get_u32(&s->names, f.v, &e->name))
                return op_pf_fail(r, OPPROF_E_PARSE, te.p, "track event: name iid %llu is not interned on its sequence",
                                  (unsigned long long)f.v);
            e->has_name = 1;
            e->name_p = NULL;
        } else if (f.field == PF_TE_NAME && f.wire == OP_PB_LEN) {
            e->name_p = f.sub.p;
            e->name_n = (size_t)(f.sub.end - f.sub.p);
            e->has_name = 1;
            if (e->name_n > OP_IMPORT_MAX_NAME)
                return op_pf_fail(r, OPPROF_E_PARSE, f.sub.p, "track event: a name longer than 1 MiB");
        } else if (f.field == PF_TE_DEBUG_ANNOTATIONS) {
            e->has_ann = 1;
        } else if (f.field == PF_TE_CATEGORY_IIDS && !ncat++) { /* the first category decides */
            if (category_iid(r, s, f, te.p, e) != 0) return -1;
        } else if (f.field == PF_TE_CATEGORIES && f.wire == OP_PB_LEN && !ncat++) {
            uint32_t c = UINT32_MAX;
            for (int k = 0; k <= OPPROF_CAT_GPU_MEMSET; k++) {
                const char *n = opprof_category_name(k);
                if ((size_t)(f.sub.end - f.sub.p) == strlen(n) && memcmp(f.sub.p, n, strlen(n)) == 0) c = (uint32_t)k;
            }
            if (c == UINT32_MAX) e->skip_cat = 1;
            else e->cat = (int)c;
        }
    }
    if (rc < 0) return bad(r, &te, why);
    if (!e->has_track && s->has_def_track) {
        e->track = s->def_track;
        e->has_track = 1;
    }
    return 0;
}

static int annotation(pf_reader *r, pf_seq *s, op_pbr d, pf_ann *a)
{
    op_pbf f;
    const char *why;
    int rc;
    uint32_t kind = UINT32_MAX, str = UINT32_MAX;
    uint64_t num = 0;
    int has_num = 0, has_str = 0;
    op_pbr inl = {0};
    while ((rc = op_pbr_next(&d, &f, &why)) > 0) {
        if (f.field == PF_DA_NAME_IID && f.wire == OP_PB_VARINT) {
            if (!op_map_get_u32(&s->anns, f.v, &kind)) kind = UINT32_MAX;
        } else if (f.field == PF_DA_NAME && f.wire == OP_PB_LEN) {
            kind = UINT32_MAX;
            for (int k = 0; k < PF_ANN_COUNT_; k++)
                if ((size_t)(f.sub.end - f.sub.p) == strlen(op_pf_ann_names[k]) &&
                    memcmp(f.sub.p, op_pf_ann_names[k], strlen(op_pf_ann_names[k])) == 0)
                    kind = (uint32_t)k;
        } else if ((f.field == PF_DA_UINT || f.field == PF_DA_INT || f.field == PF_DA_BOOL) &&
                   f.wire == OP_PB_VARINT) {
            num = f.v;
            has_num = 1;
        } else if (f.field == PF_DA_STRING && f.wire == OP_PB_LEN) {
            if (r->fold) { /* interned below, only when the sums need it: no string per slice */
                inl = f.sub;
                has_str = 2;
                continue;
            }
            str = op_trace_intern(r->t, (const char *)f.sub.p, (size_t)(f.sub.end - f.sub.p));
            if (str == UINT32_MAX) return nomem(r, f.sub.p);
            has_str = 1;
        } else if (f.field == PF_DA_STRING_IID && f.wire == OP_PB_VARINT) {
            if (!op_map_get_u32(&s->strs, f.v, &str))
                return op_pf_fail(r, OPPROF_E_PARSE, d.p, "debug annotation: string iid %llu is not interned on its "
                                  "sequence", (unsigned long long)f.v);
            has_str = 1;
        }
    }
    if (rc < 0) return op_pf_fail(r, OPPROF_E_PARSE, d.p, "debug annotation: %s", why);
    if (kind == UINT32_MAX) return 0; /* not one of ours: decoration */
    int is_str = kind == PF_ANN_SHAPES || kind == PF_ANN_TYPES || kind == PF_ANN_STACK || kind == PF_ANN_ARGS;
    if (is_str ? !has_str : !has_num) return 0; /* the wrong type: ignored, as the Chrome reader ignores it */
    if (has_str == 2 && is_str) {
        str = 0;
        if (kind == PF_ANN_SHAPES &&
            (str = op_trace_intern(r->t, (const char *)inl.p, (size_t)(inl.end - inl.p))) == UINT32_MAX)
            return nomem(r, inl.p);
    }
    a->has |= 1u << kind;
    if (is_str) a->str[kind] = str;
    else a->num[kind] = num;
    return 0;
}

/* te's annotations into *a; has_ann 0 (fields() met none): nothing to read
 * but a->has = 0, the only field read then. */
static int annotations(pf_reader *r, pf_seq *s, op_pbr te, pf_ann *a, int has_ann)
{
    op_pbf f;
    const char *why;
    int rc;
    if (!has_ann) {
        a->has = 0;
        return 0;
    }
    memset(a, 0, sizeof *a);
    while ((rc = op_pbr_next(&te, &f, &why)) > 0)
        if (f.field == PF_TE_DEBUG_ANNOTATIONS && f.wire == OP_PB_LEN && annotation(r, s, f.sub, a) != 0) return -1;
    return rc < 0 ? bad(r, &te, why) : 0;
}

static void see_time(pf_reader *r, int64_t start, int64_t end)
{
    if (!r->any_time || start < r->t_min) r->t_min = start;
    if (!r->any_time || end > r->t_max) r->t_max = end;
    r->any_time = 1;
}

/* What annotations say about event e: its cold part, the trace's options. */
static int annotate(pf_reader *r, op_event *e, const pf_ann *a, const unsigned char *at)
{
    opprof_trace *t = r->t;
    uint32_t args = (a->has >> PF_ANN_ARGS) & 1 ? a->str[PF_ANN_ARGS] : 0;
    if (!args && !a->has) return 0; /* only an annotated event has a cold part */
    op_evx *x = op_evx_add(t, e);
    if (!x) return nomem(r, at);
    if (a->has & (1u << PF_ANN_STACK)) { /* a stack of the model, as the Chrome reader makes it */
        uint32_t st = a->str[PF_ANN_STACK];
        x->stack = op_import_call_stack(t, &r->call_stacks, op_strtab_get(&t->str, st), op_strtab_len(&t->str, st));
        if (x->stack == UINT32_MAX) return nomem(r, at);
    }
    if (args && x->args && op_strtab_len(&t->str, x->args)) { /* the begin's, then the end's */
        op_buf *b = &r->scratch;
        b->n = 0;
        if (op_buf_put(b, op_strtab_get(&t->str, x->args), op_strtab_len(&t->str, x->args)) != 0 ||
            op_buf_put(b, ", ", 2) != 0 ||
            op_buf_put(b, op_strtab_get(&t->str, args), op_strtab_len(&t->str, args)) != 0 ||
            (args = op_trace_intern(t, b->p, b->n)) == UINT32_MAX)
            return nomem(r, at);
    }
    if (args) x->args = args;
    if (a->has & (1u << PF_ANN_SHAPES)) {
        x->shapes = a->str[PF_ANN_SHAPES];
        t->options |= OP_TRACE_SHAPES;
    }
    if (a->has & (1u << PF_ANN_TYPES)) x->types = a->str[PF_ANN_TYPES];
    if (a->has & (1u << PF_ANN_FLOPS)) {
        x->flops = a->num[PF_ANN_FLOPS];
        t->options |= OP_TRACE_FLOPS;
    }
    if (a->has & (1u << PF_ANN_EXT)) {
        x->external_id = op_pb_int(a->num[PF_ANN_EXT]);
        e->flags |= OP_EV_HAS_EXT;
    }
    if (a->has & (1u << PF_ANN_CORR)) {
        x->correlation = op_pb_int(a->num[PF_ANN_CORR]);
        e->flags |= OP_EV_HAS_CORR;
    }
    return 0;
}

/* The name of a slice begun: interned, "" when it has none; UINT32_MAX when out of memory. */
static uint32_t slice_name(pf_reader *r, const pf_te *f)
{
    if (!f->has_name) return op_trace_intern(r->t, "", 0);
    if (f->name_p) return op_trace_intern(r->t, (const char *)f->name_p, f->name_n);
    return f->name;
}

/* What annotations say that the sums need: input shapes and FLOPs, and the
 * trace's options as annotate() sets them. */
static void fold_annotations(pf_reader *r, const pf_ann *a, pf_fopen *o)
{
    if (a->has & (1u << PF_ANN_SHAPES)) {
        o->shapes = a->str[PF_ANN_SHAPES];
        r->t->options |= OP_TRACE_SHAPES;
    }
    if (a->has & (1u << PF_ANN_FLOPS)) {
        o->flops = a->num[PF_ANN_FLOPS];
        r->t->options |= OP_TRACE_FLOPS;
    }
}

/* begin() while folding: the same checks and errors, a slice on the
 * track's stack instead of an event. */
static int fold_begin(pf_reader *r, pf_seq *s, op_pbr te, const pf_te *f, pf_track *tr, int64_t ns)
{
    if (op_pf_fold_time(r, tr, ns, 1) != 0) return -1;
    pf_fopen o = {ns, 0, 0, 0, UINT32_MAX, 0};
    if (tr->kind != PF_TK_THREAD || f->skip_cat) return op_pf_fold_push(r, tr, &o, te.p);
    if (op_cat_is_device(f->cat)) return op_pf_need_model(r); /* charged to launches: the model's work */
    if ((o.name = slice_name(r, f)) == UINT32_MAX) return nomem(r, te.p);
    pf_ann a;
    if (annotations(r, s, te, &a, f->has_ann) != 0) return -1;
    fold_annotations(r, &a, &o);
    see_time(r, ns, ns);
    return op_pf_fold_push(r, tr, &o, te.p);
}

static int fold_end(pf_reader *r, pf_seq *s, op_pbr te, const pf_te *f, pf_track *tr, int64_t ns)
{
    if (op_pf_fold_time(r, tr, ns, 0) != 0) return -1;
    if (!tr->nfo) return 0;
    pf_fopen o = tr->fo[--tr->nfo];
    if (o.name == UINT32_MAX) return 0;
    see_time(r, o.start, ns);
    pf_ann a;
    if (annotations(r, s, te, &a, f->has_ann) != 0) return -1;
    fold_annotations(r, &a, &o);
    return op_pf_fold_close(r, tr, &o, ns > o.start ? ns - o.start : 0, te.p);
}

static int begin(pf_reader *r, pf_seq *s, op_pbr te, const pf_te *f, pf_track *tr, int64_t ns)
{
    if (r->fold) return fold_begin(r, s, te, f, tr, ns);
    opprof_trace *t = r->t;
    if (tr->nopen == tr->cap) {
        size_t c = tr->cap ? tr->cap * 2 : 16;
        uint32_t *o = realloc(tr->open, c * sizeof *o);
        if (!o) return nomem(r, te.p);
        tr->open = o;
        tr->cap = c;
    }
    if (tr->kind != PF_TK_THREAD || f->skip_cat) { /* kept only to pair with its end */
        tr->open[tr->nopen++] = UINT32_MAX;
        return 0;
    }
    if (t->nev >= (size_t)INT32_MAX) return op_pf_fail(r, OPPROF_E_RANGE, te.p, "more than %d events", INT32_MAX);
    uint32_t name = slice_name(r, f);
    pf_ann a;
    if (name == UINT32_MAX) return nomem(r, te.p);
    if (annotations(r, s, te, &a, f->has_ann) != 0) return -1;
    op_event *e = op_trace_add_event(t, tr->thread, name, f->cat, ns, 0);
    if (!e || annotate(r, e, &a, te.p) != 0) return e ? -1 : nomem(r, te.p);
    if (op_cat_is_device(f->cat)) { /* as the Chrome reader: the stream's device is its pid */
        op_thread *th = &t->threads[tr->thread];
        if (th->device < 0 && th->pid >= 0 && th->pid <= INT32_MAX) th->device = (int32_t)th->pid;
    }
    tr->open[tr->nopen++] = (uint32_t)(t->nev - 1);
    see_time(r, ns, ns);
    return 0;
}

/* An end's annotations belong to the slice it closes, as in Perfetto's
 * trace processor: a streamed trace puts there what is known only at the
 * end (FLOPs given to opprof_end_flops, args patched by opprof_end_args). */
static int end(pf_reader *r, pf_seq *s, op_pbr te, const pf_te *f, pf_track *tr, int64_t ns)
{
    if (r->fold) return fold_end(r, s, te, f, tr, ns);
    if (!tr->nopen) return 0; /* an end without a begin: Perfetto ignores it too */
    uint32_t i = tr->open[--tr->nopen];
    if (i == UINT32_MAX) return 0;
    op_event *e = &r->t->ev[i];
    e->dur_ns = ns > e->start_ns ? ns - e->start_ns : 0;
    see_time(r, e->start_ns, ns);
    pf_ann a;
    if (annotations(r, s, te, &a, f->has_ann) != 0) return -1;
    return annotate(r, e, &a, te.p);
}

static int memory(pf_reader *r, pf_seq *s, op_pbr te, const pf_te *f, const pf_track *tr, int64_t ns)
{
    pf_ann a;
    if (annotations(r, s, te, &a, f->has_ann) != 0) return -1;
    if (!(a.has & (1u << PF_ANN_BYTES))) return 0; /* the Chrome reader needs "Bytes" too */
    if (r->fold) return op_pf_need_model(r); /* attributed by time, totals, the [memory] row: the model's */
    /* The model adds bytes up per operator and over the trace: a bound no
     * allocation reaches keeps those sums from overflowing. */
    int64_t bytes = op_pb_int(a.num[PF_ANN_BYTES]);
    if (bytes > PF_MAX_BYTES || bytes < -PF_MAX_BYTES)
        return op_pf_fail(r, OPPROF_E_PARSE, te.p, "a [memory] event's Bytes (%lld) is past +-2^47",
                          (long long)bytes);
    op_mem_event *m = op_trace_add_mem(r->t, tr->thread, ns, a.has & (1u << PF_ANN_ADDR) ? a.num[PF_ANN_ADDR] : 0,
                                       bytes);
    if (!m) return nomem(r, te.p);
    if (a.has & (1u << PF_ANN_TOTAL)) {
        m->total_allocated = op_pb_int(a.num[PF_ANN_TOTAL]);
        r->mem_totals++;
    }
    int64_t dt = op_pb_int(a.num[PF_ANN_DEV_TYPE]), di = op_pb_int(a.num[PF_ANN_DEV_ID]);
    if ((a.has & (1u << PF_ANN_DEV_TYPE)) && dt >= INT8_MIN && dt <= INT8_MAX) m->device_type = (int8_t)dt;
    if ((a.has & (1u << PF_ANN_DEV_ID)) && di >= INT8_MIN && di <= INT8_MAX) m->device_id = (int8_t)di;
    r->t->options |= OP_TRACE_MEMORY;
    see_time(r, ns, ns);
    return 0;
}

/* opprof's metadata instant: droppedEvents, incomplete, distributedInfo. */
static int metadata(pf_reader *r, op_pbr te)
{
    static const char *const keys[] = {
        "droppedEvents", "incomplete", "rank", "world_size", "clock_offset_ns", "clock_uncertainty_ns",
        "clock_sync_at_ns", "clock_offset_end_ns", "clock_uncertainty_end_ns", "clock_sync_end_at_ns", "backend",
    };
    enum { NKEYS = sizeof keys / sizeof *keys };
    opprof_trace *t = r->t;
    uint64_t v[NKEYS] = {0};
    const unsigned char *at[NKEYS] = {0}; /* each value's annotation, for errors */
    unsigned have = 0;
    op_pbf f, g;
    const char *why;
    int rc;
    while ((rc = op_pbr_next(&te, &f, &why)) > 0) {
        if (f.field != PF_TE_DEBUG_ANNOTATIONS || f.wire != OP_PB_LEN) continue;
        int k = -1;
        op_pbr d = f.sub;
        while ((rc = op_pbr_next(&d, &g, &why)) > 0) {
            if (g.field == PF_DA_NAME && g.wire == OP_PB_LEN) {
                for (int i = 0; i < NKEYS; i++)
                    if ((size_t)(g.sub.end - g.sub.p) == strlen(keys[i]) && memcmp(g.sub.p, keys[i], strlen(keys[i])) == 0)
                        k = i;
            } else if (k >= 0 && k < NKEYS - 1 && g.wire == OP_PB_VARINT &&
                       (g.field == PF_DA_UINT || g.field == PF_DA_INT || g.field == PF_DA_BOOL)) {
                v[k] = g.v;
                at[k] = f.sub.p;
                have |= 1u << k;
            } else if (k == NKEYS - 1 && g.field == PF_DA_STRING && g.wire == OP_PB_LEN) {
                t->dist_backend = op_trace_intern(t, (const char *)g.sub.p, (size_t)(g.sub.end - g.sub.p));
                if (t->dist_backend == UINT32_MAX) return nomem(r, g.sub.p);
            }
        }
        if (rc < 0) return op_pf_fail(r, OPPROF_E_PARSE, d.p, "debug annotation: %s", why);
    }
    if (rc < 0) return bad(r, &te, why);
    if (have & 1) t->dropped = v[0];
    if ((have & 2) && v[1]) t->options |= OP_TRACE_INCOMPLETE;
    if (have & 4) t->dist_rank = op_pb_int(v[2]);
    if (have & 8) t->dist_world = op_pb_int(v[3]);
    /* clock values are times: kept in the range where they add up, as the JSON reader does */
    for (int k = 4; k < NKEYS - 1; k++) {
        int64_t x = op_pb_int(v[k]);
        if ((have & (1u << k)) && (x > OP_TIME_LIMIT_NS || x < -OP_TIME_LIMIT_NS))
            return op_pf_fail(r, OPPROF_E_PARSE, at[k],
                              "distributedInfo \"%s\" is out of range (more than 2^61 ns from 0)", keys[k]);
    }
    opprof_clock_sync *cs[2] = {&t->clock_start, &t->clock_end};
    for (int k = 0; k < 2; k++) {
        unsigned need = 7u << (4 + 3 * k);
        if ((have & need) != need) continue;
        cs[k]->valid = 1;
        cs[k]->offset_ns = op_pb_int(v[4 + 3 * k]);
        cs[k]->uncertainty_ns = op_pb_int(v[5 + 3 * k]);
        cs[k]->at_ns = op_pb_int(v[6 + 3 * k]);
    }
    return 0;
}

int op_pf_track_event(pf_reader *r, pf_seq *s, op_pbr te, int64_t ns)
{
    pf_te f;
    if (fields(r, s, te, &f) != 0) return -1;
    uint32_t k;
    if (!f.has_track) return 0;
    if (r->last_track_ok && r->last_track == f.track) {
        k = r->last_track_k;
    } else {
        if (!op_map_get_u32(&r->track_ix, f.track, &k)) return 0; /* no track we know: skipped */
        r->last_track = f.track;
        r->last_track_k = k;
        r->last_track_ok = 1;
    }
    pf_track *tr = &r->tracks[k];
    switch (f.type) {
    case PF_TYPE_SLICE_BEGIN: return begin(r, s, te, &f, tr, ns);
    case PF_TYPE_SLICE_END: return end(r, s, te, &f, tr, ns);
    case PF_TYPE_INSTANT:
        if (tr->kind == PF_TK_META) return metadata(r, te);
        if (tr->kind != PF_TK_THREAD || f.skip_cat || !f.has_name) return 0;
        if (f.name_p ? f.name_n == 8 && memcmp(f.name_p, "[memory]", 8) == 0
                     : op_strtab_len(&r->t->str, f.name) == 8 && !memcmp(op_strtab_get(&r->t->str, f.name), "[memory]", 8))
            return memory(r, s, te, &f, tr, ns);
        return 0;
    default: return 0; /* counters (memory's are derived), unspecified types */
    }
}

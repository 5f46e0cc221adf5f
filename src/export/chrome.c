/* Chrome trace export in Kineto's dialect.
 *
 * Layout (one event a line, so that grep and diff work on traces):
 *
 *   {
 *     "schemaVersion": 1,
 *     "deviceProperties": [
 *     ],
 *     "distributedInfo": {"rank": 0, "world_size": 2},     when a rank is known
 *     "record_shapes": 1, ...                               options, as torch adds them
 *     "droppedEvents": 0,
 *     "displayTimeUnit": "ms",
 *     "baseTimeNanoseconds": 1719853884000000000,
 *     "traceEvents": [
 *     {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 7, "tid": 7, "ts": 1.250, "dur": 3.000,
 *      "args": {"External id": 1, "Input Dims": [[2, 3]], "Input type": ["float"], "Ev Idx": 0}},
 *     {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", ...},
 *     {"name": "process_name", "ph": "M", ...},
 *     ...
 *     ]
 *   }
 *
 * baseTimeNanoseconds and the options come before traceEvents so that a
 * streaming reader knows them before the first event.
 *
 * Speed: names are escaped once per distinct name, each thread's
 * `"pid": .., "tid": ..` text is made once, numbers are formatted with
 * integer arithmetic, and stored JSON fragments (shapes, types, imported
 * args) are validated once per distinct string. */
#define _GNU_SOURCE /* program_invocation_short_name */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "common/pfschema.h"
#include "common/rank_env.h"
#include "common/vec.h"
#include "export/chrome.h"
#include "export/options.h"
#include "export/out.h"
#include "export/pftrace.h"
#include "export/samples.h"
#include "model/model.h"

typedef struct cw {
    op_jw *w;
    const opprof_trace *t;
    /* Escaped names (with quotes) per strtab id: offset + 1 into arena. */
    uint32_t *name_at, *name_len;
    char *arena;
    size_t arena_n, arena_cap;
    /* Stored JSON fragments per strtab id: 0 unchecked, 1 valid, 2 invalid. */
    uint8_t *valid;
    /* `, "pid": P, "tid": T, "ts": ` per thread. */
    char (*thread_text)[80];
    uint8_t *thread_len;
    size_t nstr, nthr, cap_thr; /* strings cached for, threads made, room for threads */
    uint64_t ev_idx;
    uint64_t ops_before; /* a streamed trace's events written in earlier batches */
    int first;
    int number_ops; /* give operators their position as External id */
} cw;

static const char *const k_cat_prefix[] = {
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": ",
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": ",
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": ",
    "{\"ph\": \"X\", \"cat\": \"cuda_driver\", \"name\": ",
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": ",
    "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": ",
    "{\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": ",
    "{\"ph\": \"X\", \"cat\": \"cpu_instant_event\", \"name\": ",
    "{\"ph\": \"X\", \"cat\": \"other\", \"name\": ",
};

/* The escaped form of string id `id`, made on first use. NULL when out of
 * memory. */
static const char *escaped(cw *c, uint32_t id, uint32_t *len)
{
    if (c->name_at[id]) {
        *len = c->name_len[id];
        return c->arena + c->name_at[id] - 1;
    }
    const char *s = op_strtab_get(&c->t->str, id);
    size_t n = op_strtab_len(&c->t->str, id);
    size_t need = op_json_escaped_max(n);
    if (need > OP_JW_MAX_RESERVE) return NULL; /* too long to cache: the caller escapes it in place */
    /* Offsets into the arena are 32-bit. */
    if (c->arena_n + need > (size_t)1 << 31 || op_grow(&c->arena, &c->arena_cap, c->arena_n + need, 1)) return NULL;
    char *d = c->arena + c->arena_n;
    char *end = op_json_escape(d, s, n);
    c->name_at[id] = (uint32_t)c->arena_n + 1;
    c->name_len[id] = (uint32_t)(end - d);
    c->arena_n += (size_t)(end - d);
    *len = c->name_len[id];
    return d;
}

static void put_name(cw *c, uint32_t id)
{
    uint32_t len;
    const char *e = escaped(c, id, &len);
    if (e) op_jw_put(c->w, e, len);
    else op_jw_str(c->w, op_strtab_get(&c->t->str, id), op_strtab_len(&c->t->str, id));
}

/* A stored fragment: as is when it is one valid JSON value (or members, for
 * args), else as a JSON string so that the file stays valid. */
static void put_fragment(cw *c, uint32_t id, int members)
{
    const char *s = op_strtab_get(&c->t->str, id);
    size_t n = op_strtab_len(&c->t->str, id);
    if (!c->valid[id]) c->valid[id] = (members ? op_json_is_members(s, n) : op_json_is_value(s, n)) ? 1 : 2;
    if (c->valid[id] == 1) op_jw_put(c->w, s, n);
    else if (members) {
        OP_JW_LIT(c->w, "\"opprof invalid args\": ");
        op_jw_str(c->w, s, n);
    } else
        op_jw_str(c->w, s, n);
}

static void put_stack(cw *c, const op_stack *st)
{
    /* torch's "Call stack": frames joined by ';', innermost first. */
    size_t n = 0;
    for (uint32_t i = 0; i < st->nframes; i++) n += op_strtab_len(&c->t->str, st->frames[i]) + 1;
    char *buf = malloc(n + 1);
    if (!buf) {
        OP_JW_LIT(c->w, "\"\"");
        return;
    }
    size_t k = 0;
    for (uint32_t i = 0; i < st->nframes; i++) {
        if (i) buf[k++] = ';';
        size_t l = op_strtab_len(&c->t->str, st->frames[i]);
        memcpy(buf + k, op_strtab_get(&c->t->str, st->frames[i]), l);
        k += l;
    }
    op_jw_str(c->w, buf, k);
    free(buf);
}

static void begin_event(cw *c)
{
    if (c->first) {
        OP_JW_LIT(c->w, "\n  ");
        c->first = 0;
    } else {
        OP_JW_LIT(c->w, ",\n  ");
    }
}

static void put_event(cw *c, size_t i)
{
    const opprof_trace *t = c->t;
    const op_event *e = &t->ev[i];
    const op_evx *x = op_evx_of(t, e);
    op_jw *w = c->w;
    begin_event(c);
    const char *pre = k_cat_prefix[e->cat <= OPPROF_CAT_OTHER ? e->cat : OPPROF_CAT_OTHER];
    size_t npre = strlen(pre);
    if (e->flags & OP_EV_OPEN) { /* open when read (a flight dump): a "B" with no "E", as Chrome marks it */
        char b[64];
        memcpy(b, pre, npre);
        b[8] = 'B'; /* {"ph": "X" */
        op_jw_put(w, b, npre);
    } else {
        op_jw_put(w, pre, npre);
    }
    put_name(c, e->name);
    op_jw_need(w, 256);
    memcpy(w->p, c->thread_text[e->thread], c->thread_len[e->thread]);
    w->p += c->thread_len[e->thread];
    w->p = op_fmt_us3(w->p, e->start_ns);
    if (!(e->flags & OP_EV_OPEN)) {
        memcpy(w->p, ", \"dur\": ", 9);
        w->p = op_fmt_us3(w->p + 9, e->dur_ns);
    }
    memcpy(w->p, ", \"args\": {", 11);
    w->p += 11;
    if (e->flags & OP_EV_HAS_EXT) {
        memcpy(w->p, "\"External id\": ", 15);
        w->p = op_fmt_i64(w->p + 15, x->external_id);
        memcpy(w->p, ", ", 2);
        w->p += 2;
    } else if (c->number_ops && op_cat_is_host(e->cat)) {
        /* torch gives every operator an External id; in a trace with no
         * ids and no device events nothing links to it, so its position
         * serves. */
        memcpy(w->p, "\"External id\": ", 15);
        w->p = op_fmt_u64(w->p + 15, c->ops_before + (uint64_t)i + 1);
        memcpy(w->p, ", ", 2);
        w->p += 2;
    }
    if (e->flags & OP_EV_HAS_CORR) {
        memcpy(w->p, "\"correlation\": ", 15);
        w->p = op_fmt_i64(w->p + 15, x->correlation);
        memcpy(w->p, ", ", 2);
        w->p += 2;
    }
    if (x->shapes) {
        OP_JW_LIT(w, "\"Input Dims\": ");
        put_fragment(c, x->shapes, 0);
        OP_JW_LIT(w, ", ");
    }
    if (x->types) {
        OP_JW_LIT(w, "\"Input type\": ");
        put_fragment(c, x->types, 0);
        OP_JW_LIT(w, ", ");
    }
    if (x->stack && x->stack <= t->nstacks) {
        OP_JW_LIT(w, "\"Call stack\": ");
        put_stack(c, &t->stacks[x->stack - 1]);
        OP_JW_LIT(w, ", ");
    }
    if (x->flops) {
        OP_JW_LIT(w, "\"flops\": ");
        op_jw_u64(w, x->flops);
        OP_JW_LIT(w, ", ");
    }
    if (x->args && op_strtab_len(&t->str, x->args)) {
        put_fragment(c, x->args, 1);
        OP_JW_LIT(w, ", ");
    }
    OP_JW_LIT(w, "\"Ev Idx\": ");
    op_jw_u64(w, c->ev_idx++);
    OP_JW_LIT(w, "}}");
}

static void put_memory(cw *c, const op_mem_event *m)
{
    op_jw *w = c->w;
    begin_event(c);
    OP_JW_LIT(w, "{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\"");
    op_jw_need(w, 400);
    uint32_t th = m->thread < c->t->nthreads ? m->thread : 0;
    if (c->t->nthreads) {
        memcpy(w->p, c->thread_text[th], c->thread_len[th]);
        w->p += c->thread_len[th];
    } else {
        memcpy(w->p, ", \"pid\": 0, \"tid\": 0, \"ts\": ", 27);
        w->p += 27;
    }
    w->p = op_fmt_us3(w->p, m->ts_ns);
    memcpy(w->p, ", \"args\": {\"Total Allocated\": ", 30);
    w->p = op_fmt_i64(w->p + 30, m->total_allocated);
    memcpy(w->p, ", \"Bytes\": ", 11);
    w->p = op_fmt_i64(w->p + 11, m->bytes);
    memcpy(w->p, ", \"Addr\": ", 10);
    w->p = op_fmt_u64(w->p + 10, m->addr);
    memcpy(w->p, ", \"Device Id\": ", 15);
    w->p = op_fmt_i64(w->p + 15, m->device_id);
    memcpy(w->p, ", \"Device Type\": ", 17);
    w->p = op_fmt_i64(w->p + 17, m->device_type);
    memcpy(w->p, ", \"Ev Idx\": ", 12);
    w->p = op_fmt_u64(w->p + 12, c->ev_idx++);
    memcpy(w->p, "}}", 2);
    w->p += 2;
}

/* {"name": "<what>", "ph": "M", "ts": 0.000, "pid": P, "tid": T, "args": {"<key>": */
static void meta_head(cw *c, const char *what, int64_t pid, int64_t tid, const char *key)
{
    op_jw *w = c->w;
    begin_event(c);
    OP_JW_LIT(w, "{\"name\": \"");
    op_jw_put(w, what, strlen(what));
    OP_JW_LIT(w, "\", \"ph\": \"M\", \"ts\": 0.000, \"pid\": ");
    op_jw_i64(w, pid);
    OP_JW_LIT(w, ", \"tid\": ");
    op_jw_i64(w, tid);
    OP_JW_LIT(w, ", \"args\": {\"");
    op_jw_put(w, key, strlen(key));
    OP_JW_LIT(w, "\": ");
}

static void put_metadata(cw *c)
{
    const opprof_trace *t = c->t;
    op_jw *w = c->w;
    char buf[96];
    for (size_t i = 0; i < t->nthreads; i++) {
        const op_thread *th = &t->threads[i];
        size_t j = 0;
        while (j < i && t->threads[j].pid != th->pid) j++;
        if (j == i) { /* the first thread of its process */
            meta_head(c, "process_name", th->pid, 0, "name");
            if (th->pid_name && op_strtab_len(&t->str, th->pid_name)) {
                put_name(c, th->pid_name);
            } else if (th->device >= 0) {
                snprintf(buf, sizeof buf, "GPU %d", (int)th->device);
                op_jw_cstr(w, buf);
            } else if (th->pid == (int64_t)getpid()) {
                op_jw_cstr(w, program_invocation_short_name);
            } else {
                snprintf(buf, sizeof buf, "process %lld", (long long)th->pid);
                op_jw_cstr(w, buf);
            }
            OP_JW_LIT(w, "}}");
            meta_head(c, "process_sort_index", th->pid, 0, "sort_index");
            op_jw_i64(w, th->pid);
            OP_JW_LIT(w, "}}");
        }
        meta_head(c, "thread_name", th->pid, th->tid, "name");
        if (th->name && op_strtab_len(&t->str, th->name)) {
            put_name(c, th->name);
        } else {
            snprintf(buf, sizeof buf, "%s %lld", th->device >= 0 ? "stream" : "thread", (long long)th->tid);
            op_jw_cstr(w, buf);
        }
        OP_JW_LIT(w, "}}");
        meta_head(c, "thread_sort_index", th->pid, th->tid, "sort_index");
        op_jw_i64(w, th->tid);
        OP_JW_LIT(w, "}}");
    }
}

static void put_clock_sync(op_jw *w, const opprof_clock_sync *cs, const char *suffix)
{
    if (!cs->valid) return;
    size_t n = strlen(suffix);
    OP_JW_LIT(w, ", \"clock_offset");
    op_jw_put(w, suffix, n);
    OP_JW_LIT(w, "_ns\": ");
    op_jw_i64(w, cs->offset_ns);
    OP_JW_LIT(w, ", \"clock_uncertainty");
    op_jw_put(w, suffix, n);
    OP_JW_LIT(w, "_ns\": ");
    op_jw_i64(w, cs->uncertainty_ns);
    OP_JW_LIT(w, ", \"clock_sync");
    op_jw_put(w, suffix, n);
    OP_JW_LIT(w, "_at_ns\": ");
    op_jw_i64(w, cs->at_ns);
}

/* distributedInfo, as torch writes it ({"backend": "nccl", "rank": 0,
 * "world_size": 2, ...}) with opprof's clock measurements beside. The rank
 * given in the options wins over the trace's, which wins over the
 * launcher's environment. */
static void put_distributed(cw *c, const opprof_export_options *o)
{
    const opprof_trace *t = c->t;
    op_jw *w = c->w;
    int64_t rank = o->rank, world = o->world_size;
    op_rank_pick(&rank, &world, t->dist_rank, t->dist_world);
    if (rank < 0) return;
    OP_JW_LIT(w, "  \"distributedInfo\": {");
    if (t->dist_backend) {
        OP_JW_LIT(w, "\"backend\": ");
        put_name(c, t->dist_backend);
        OP_JW_LIT(w, ", ");
    }
    OP_JW_LIT(w, "\"rank\": ");
    op_jw_i64(w, rank);
    if (world > 0) {
        OP_JW_LIT(w, ", \"world_size\": ");
        op_jw_i64(w, world);
    }
    put_clock_sync(w, &t->clock_start, "");
    put_clock_sync(w, &t->clock_end, "_end");
    const opprof_clock_sync *a = &t->clock_start, *b = &t->clock_end;
    if (a->valid && b->valid && b->at_ns > a->at_ns) {
        char buf[48];
        double ppm = (double)(b->offset_ns - a->offset_ns) / (double)(b->at_ns - a->at_ns) * 1e6;
        snprintf(buf, sizeof buf, ", \"clock_drift_ppm\": %.3f", ppm);
        op_jw_put(w, buf, strlen(buf));
    }
    OP_JW_LIT(w, "},\n");
}

/* streamed: the trace is written as it is recorded, so what only its end
 * knows (dropped events, incomplete) comes after traceEvents instead. */
static void put_header(cw *c, const opprof_export_options *o, int streamed)
{
    const opprof_trace *t = c->t;
    op_jw *w = c->w;
    OP_JW_LIT(w, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n");
    if (t->device_props && op_strtab_len(&t->str, t->device_props)) { /* made by src/device from the driver */
        OP_JW_LIT(w, "    ");
        op_jw_put(w, op_strtab_get(&t->str, t->device_props), op_strtab_len(&t->str, t->device_props));
        OP_JW_LIT(w, "\n");
    }
    OP_JW_LIT(w, "  ],\n");
    put_distributed(c, o);
    if (t->options & OP_TRACE_SHAPES) OP_JW_LIT(w, "  \"record_shapes\": 1,\n");
    if (t->options & OP_TRACE_MEMORY) OP_JW_LIT(w, "  \"profile_memory\": 1,\n");
    if (t->options & OP_TRACE_STACK) OP_JW_LIT(w, "  \"with_stack\": 1,\n");
    if (t->options & OP_TRACE_FLOPS) OP_JW_LIT(w, "  \"with_flops\": 1,\n");
    if (!streamed && (t->options & OP_TRACE_INCOMPLETE)) OP_JW_LIT(w, "  \"incomplete\": 1,\n");
    if (!streamed) {
        OP_JW_LIT(w, "  \"droppedEvents\": ");
        op_jw_u64(w, t->dropped);
        OP_JW_LIT(w, ",\n");
    }
    OP_JW_LIT(w, "  \"displayTimeUnit\": \"ms\",\n");
    /* A stream whose base time is not known yet (a converted Kineto trace
     * gives it at its end) writes it at its end. */
    if (!streamed || t->base_time_ns) {
        OP_JW_LIT(w, "  \"baseTimeNanoseconds\": ");
        op_jw_i64(w, t->base_time_ns);
        OP_JW_LIT(w, ",\n");
    }
    OP_JW_LIT(w, "  \"traceEvents\": [");
}

/* Grows an array of n elements of size sz to m, zeroing the new ones. */
static int grow_zero(void *pp, size_t n, size_t m, size_t sz)
{
    void *p = realloc(*(void **)pp, m * sz);
    if (!p) return -1;
    memset((char *)p + n * sz, 0, (m - n) * sz);
    *(void **)pp = p;
    return 0;
}

/* Sizes the caches for t's strings and threads (a streamed trace's grow
 * from batch to batch). */
static int cw_fit(cw *c, const opprof_trace *t)
{
    c->t = t;
    size_t ns = t->str.count ? t->str.count : 1, nt = t->nthreads ? t->nthreads : 1;
    if (ns > c->nstr) {
        if (grow_zero(&c->name_at, c->nstr, ns, sizeof *c->name_at) ||
            grow_zero(&c->name_len, c->nstr, ns, sizeof *c->name_len) || grow_zero(&c->valid, c->nstr, ns, 1))
            return -1;
        c->nstr = ns;
    }
    if (nt > c->cap_thr) {
        if (grow_zero(&c->thread_text, c->cap_thr, nt, sizeof *c->thread_text) ||
            grow_zero(&c->thread_len, c->cap_thr, nt, 1))
            return -1;
        c->cap_thr = nt;
    }
    for (size_t i = c->nthr; i < t->nthreads; i++) {
        char *p = c->thread_text[i];
        memcpy(p, ", \"pid\": ", 9);
        p = op_fmt_i64(p + 9, t->threads[i].pid);
        memcpy(p, ", \"tid\": ", 9);
        p = op_fmt_i64(p + 9, t->threads[i].tid);
        memcpy(p, ", \"ts\": ", 8);
        c->thread_len[i] = (uint8_t)(p + 8 - c->thread_text[i]);
    }
    c->nthr = t->nthreads;
    return 0;
}

static int cw_init(cw *c, const opprof_trace *t, op_jw *w)
{
    memset(c, 0, sizeof *c);
    c->w = w;
    c->first = 1;
    if (cw_fit(c, t) != 0) return -1;
    c->number_ops = !(t->options & OP_TRACE_DEVICE);
    for (size_t i = 0; i < t->nev && c->number_ops; i++)
        if (t->ev[i].flags & OP_EV_HAS_EXT) c->number_ops = 0;
    return 0;
}

static void cw_free(cw *c)
{
    free(c->name_at);
    free(c->name_len);
    free(c->valid);
    free(c->thread_text);
    free(c->thread_len);
    free(c->arena);
}

/* One end of an ac2g flow: "s" at a launch, "f" (bound to the enclosing
 * slice, "bp": "e") at the device activity it launched, as Kineto writes them. */
static void put_flow_end(cw *c, const op_event *e, int finish)
{
    op_jw *w = c->w;
    begin_event(c);
    if (finish)
        OP_JW_LIT(w, "{\"ph\": \"f\", \"id\": ");
    else
        OP_JW_LIT(w, "{\"ph\": \"s\", \"id\": ");
    op_jw_i64(w, op_evx_of(c->t, e)->correlation);
    op_jw_need(w, 128);
    memcpy(w->p, c->thread_text[e->thread], c->thread_len[e->thread]);
    w->p += c->thread_len[e->thread];
    w->p = op_fmt_us3(w->p, e->start_ns);
    if (finish)
        OP_JW_LIT(w, ", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}");
    else
        OP_JW_LIT(w, ", \"cat\": \"ac2g\", \"name\": \"ac2g\"}");
}

typedef struct corr_ref {
    int64_t corr;
    size_t idx;
} corr_ref;

static int corr_cmp(const void *a, const void *b)
{
    const corr_ref *x = a, *y = b;
    if (x->corr != y->corr) return x->corr < y->corr ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* A flow from each launch to each device activity with its correlation. */
static int put_flows(cw *c)
{
    const opprof_trace *t = c->t;
    if (!(t->options & OP_TRACE_DEVICE)) return 0;
    corr_ref *l = malloc((t->nev ? t->nev : 1) * sizeof *l);
    if (!l) return -1;
    size_t n = 0;
    for (size_t i = 0; i < t->nev; i++)
        if (op_cat_is_launch(t->ev[i].cat) && (t->ev[i].flags & OP_EV_HAS_CORR))
            l[n++] = (corr_ref){op_evx_of(t, &t->ev[i])->correlation, i};
    qsort(l, n, sizeof *l, corr_cmp);
    for (size_t i = 0; i < t->nev && !c->w->status; i++) {
        const op_event *d = &t->ev[i];
        if (!op_cat_is_device(d->cat) || !(d->flags & OP_EV_HAS_CORR)) continue;
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (l[mid].corr < op_evx_of(t, d)->correlation) lo = mid + 1;
            else hi = mid;
        }
        if (lo == n || l[lo].corr != op_evx_of(t, d)->correlation) continue;
        put_flow_end(c, &t->ev[l[lo].idx], 0);
        put_flow_end(c, d, 1);
    }
    free(l);
    return 0;
}

/* Writes the whole trace into w; returns w's status (or NOMEM). */
static int write_trace(const opprof_trace *t, op_jw *w, const opprof_export_options *o)
{
    cw c;
    if (cw_init(&c, t, w) != 0) {
        cw_free(&c);
        return op_fail(OPPROF_E_NOMEM, "out of memory while exporting %zu events", t->nev);
    }
    put_header(&c, o, 0);
    size_t m = 0;
    for (size_t i = 0; i < t->nev && !w->status; i++) {
        /* Memory events in time order among the others, as torch has them. */
        for (; m < t->nmem && t->mem[m].ts_ns < t->ev[i].start_ns; m++) put_memory(&c, &t->mem[m]);
        put_event(&c, i);
    }
    for (; m < t->nmem && !w->status; m++) put_memory(&c, &t->mem[m]);
    if (put_flows(&c) != 0) {
        cw_free(&c);
        return op_fail(OPPROF_E_NOMEM, "out of memory while exporting flows");
    }
    if (op_chrome_write_samples(w, t, &c.first, 0) != 0) {
        cw_free(&c);
        return op_fail(OPPROF_E_NOMEM, "out of memory while exporting %zu samples", t->nsamples);
    }
    if (t->dropped) {
        char buf[160];
        snprintf(buf, sizeof buf, "opprof: %llu events dropped (event cap reached)", (unsigned long long)t->dropped);
        begin_event(&c);
        OP_JW_LIT(w, "{\"ph\": \"i\", \"s\": \"g\", \"name\": ");
        op_jw_cstr(w, buf);
        OP_JW_LIT(w, ", \"pid\": ");
        op_jw_i64(w, t->nthreads ? t->threads[0].pid : 0);
        OP_JW_LIT(w, ", \"tid\": 0, \"ts\": 0.000}");
    }
    put_metadata(&c);
    OP_JW_LIT(w, "\n  ]\n}\n");
    cw_free(&c);
    return w->status;
}

int opprof_export_chrome_trace_ex(const opprof_trace *t, const char *path, const opprof_export_options *user_o)
{
    opprof_export_options full; /* the program's options, defaults for those its struct does not have */
    int rc = op_export_options_in(&full, user_o, "opprof_export_chrome_trace");
    if (rc != OPPROF_OK) return rc;
    const opprof_export_options *o = &full;
    if (!t) return op_fail(OPPROF_E_INVAL, "opprof_export_chrome_trace: trace is NULL");
    if (op_trace_check(t, "opprof_export_chrome_trace")) return OPPROF_E_INVAL;
    if (!path || !*path) return op_fail(OPPROF_E_INVAL, "opprof_export_chrome_trace: no path given");
    int gz = o->gzip < 0 ? op_path_is_gz(path) : o->gzip != 0;
    op_out out;
    rc = op_out_open_path(&out, path, gz, o->gzip_level, o->fsync != 0);
    if (rc != OPPROF_OK) return rc;
    /* The name picks the format, as it picks compression. A .pftrace.gz
     * holds plain packets: the gzip around them compresses them better. */
    rc = op_pf_path(path) ? op_pf_write(t, &out.w, o, gz ? 0 : op_pf_zlevel(o)) : write_trace(t, &out.w, o);
    if (rc != OPPROF_OK) {
        op_out_discard(&out);
        return rc;
    }
    rc = op_out_close(&out);
    if (rc == OPPROF_OK) op_clear_error();
    return rc;
}

int opprof_export_chrome_trace(const opprof_trace *t, const char *path)
{
    return opprof_export_chrome_trace_ex(t, path, NULL);
}

int opprof_export_chrome_trace_stream(const opprof_trace *t, FILE *f, const opprof_export_options *user_o)
{
    if (op_trace_check(t, "opprof_export_chrome_trace_stream")) return OPPROF_E_INVAL;
    opprof_export_options full;
    int rc = op_export_options_in(&full, user_o, "opprof_export_chrome_trace_stream");
    if (rc != OPPROF_OK) return rc;
    const opprof_export_options *o = &full;
    if (!t) return op_fail(OPPROF_E_INVAL, "opprof_export_chrome_trace_stream: trace is NULL");
    op_out out;
    rc = op_out_open_stream(&out, f, o->gzip == 1, o->gzip_level);
    if (rc != OPPROF_OK) return rc;
    rc = write_trace(t, &out.w, o);
    if (rc != OPPROF_OK) {
        op_out_discard(&out);
        return rc;
    }
    rc = op_out_close(&out);
    if (rc == OPPROF_OK) op_clear_error();
    return rc;
}

/* A trace written while it is recorded (export/chrome.h). */
struct op_chrome_stream {
    cw c;
    int have; /* c is set up (on the first batch: its caches are for the events' trace) */
    op_jw *w;
    int64_t base_ns; /* the header's baseTimeNanoseconds */
};

int op_chrome_stream_begin(op_chrome_stream **out, op_jw *w, const opprof_trace *head, const opprof_export_options *o)
{
    *out = NULL;
    op_chrome_stream *s = calloc(1, sizeof *s);
    cw hc;
    if (!s || cw_init(&hc, head, w) != 0) {
        if (s) cw_free(&hc);
        free(s);
        return op_fail(OPPROF_E_NOMEM, "out of memory starting the streamed trace");
    }
    put_header(&hc, o, 1);
    cw_free(&hc);
    s->w = w;
    s->base_ns = head->base_time_ns;
    *out = s;
    return w->status;
}

int op_chrome_stream_events(op_chrome_stream *s, const opprof_trace *t)
{
    cw *c = &s->c;
    if (!s->have) {
        if (cw_init(c, t, s->w) != 0) return op_fail(OPPROF_E_NOMEM, "out of memory writing the streamed trace");
        s->have = 1;
    } else if (cw_fit(c, t) != 0) {
        return op_fail(OPPROF_E_NOMEM, "out of memory writing the streamed trace");
    }
    size_t m = 0;
    for (size_t i = 0; i < t->nev && !s->w->status; i++) {
        for (; m < t->nmem && t->mem[m].ts_ns < t->ev[i].start_ns; m++) put_memory(c, &t->mem[m]);
        put_event(c, i);
    }
    for (; m < t->nmem && !s->w->status; m++) put_memory(c, &t->mem[m]);
    c->ops_before += t->nev;
    return s->w->status;
}

int op_chrome_stream_end(op_chrome_stream *s, const opprof_trace *t, const opprof_trace *sampled, uint64_t dropped,
                         int incomplete)
{
    op_jw *w = s->w;
    int rc = t ? op_chrome_stream_events(s, t) : OPPROF_E_INVAL; /* NULL: giving up */
    if (rc == OPPROF_OK && op_chrome_write_samples(w, sampled, &s->c.first, 1) != 0)
        rc = op_fail(OPPROF_E_NOMEM, "out of memory writing the samples");
    if (rc == OPPROF_OK) {
        cw *c = &s->c;
        if (dropped) {
            char buf[160];
            snprintf(buf, sizeof buf, "opprof: %llu events dropped", (unsigned long long)dropped);
            begin_event(c);
            OP_JW_LIT(w, "{\"ph\": \"i\", \"s\": \"g\", \"name\": ");
            op_jw_cstr(w, buf);
            OP_JW_LIT(w, ", \"pid\": ");
            op_jw_i64(w, t->nthreads ? t->threads[0].pid : 0);
            OP_JW_LIT(w, ", \"tid\": 0, \"ts\": 0.000}");
        }
        put_metadata(c);
        OP_JW_LIT(w, "\n  ],\n");
        if (incomplete) OP_JW_LIT(w, "  \"incomplete\": 1,\n");
        if (!s->base_ns && t->base_time_ns) { /* not in the header (put_header) */
            OP_JW_LIT(w, "  \"baseTimeNanoseconds\": ");
            op_jw_i64(w, t->base_time_ns);
            OP_JW_LIT(w, ",\n");
        }
        if (t->filter_min_ns || t->filter_max_depth) { /* what the streamed file leaves out (stream.h) */
            OP_JW_LIT(w, "  \"opprofFiltered\": {\"minDurationNs\": ");
            op_jw_i64(w, t->filter_min_ns);
            OP_JW_LIT(w, ", \"maxDepth\": ");
            op_jw_u64(w, t->filter_max_depth);
            OP_JW_LIT(w, ", \"slices\": ");
            op_jw_u64(w, t->filtered);
            OP_JW_LIT(w, "},\n");
        }
        OP_JW_LIT(w, "  \"droppedEvents\": ");
        op_jw_u64(w, dropped);
        OP_JW_LIT(w, "\n}\n");
        rc = w->status;
    }
    if (s->have) cw_free(&s->c);
    free(s);
    return rc;
}

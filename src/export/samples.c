/* Samples into Chrome traces (see samples.h).
 *
 * The V8 CPU profile of Chrome's trace event format, as Chrome writes it for
 * its JavaScript profiler and chrome://tracing, speedscope and Perfetto read
 * it: per thread a "Profile" event (ph "P", its id, args.data.startTime in
 * us) and "ProfileChunk" events of the same id whose args.data hold
 * cpuProfile.nodes (id, parent, callFrame), cpuProfile.samples (node ids)
 * and timeDeltas (us since the previous sample, the first since startTime).
 *
 * A V8 sample holds the thread's stack until the next one, so viewers give
 * it the time to the next sample. Ours stands for the CPU time since the
 * thread's previous sample (op_sample_ns), ending when it was taken: each is
 * placed at its time less that CPU time, and where the next one begins
 * 100 us or more after it was taken an "(idle)" sample fills the gap. So a
 * viewer's time per function is CPU time (within those gaps), and a thread
 * that waits shows as idle, not as the function it waited in. */
#include "export/samples.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/map.h"
#include "common/vec.h"

#define CHUNK_SAMPLES 10000 /* per ProfileChunk: events stay a few hundred KiB */
#define IDLE_MIN_NS 100000  /* a shorter gap (the handler's own time, a wait for a core) is no "(idle)" */
#define CAT "\"disabled-by-default-v8.cpu_profiler\""

enum { NODE_ROOT = UINT32_MAX, NODE_IDLE = UINT32_MAX - 1, NODE_OWN = UINT32_MAX - 2 };

void op_frame_text_parse(const char *s, size_t n, op_frame_text *f)
{
    memset(f, 0, sizeof *f);
    f->where = "";
    const char *sep = NULL;
    size_t from = 0; /* past a bracketed module's own ": " ("[vdso: 1234]") */
    if (n && s[0] == '[')
        while (from < n && s[from] != ']') from++;
    for (size_t i = from; i + 1 < n; i++)
        if (s[i] == ':' && s[i + 1] == ' ') {
            sep = s + i;
            break;
        }
    if (!sep) {
        f->fn = s;
        f->fn_len = n;
        return;
    }
    f->fn = sep + 2;
    f->fn_len = n - (size_t)(sep + 2 - s);
    f->where = s;
    f->where_len = (size_t)(sep - s);
    /* "FILE(LINE)" or "MODULE(+0xOFF)": the part before the parenthesis */
    if (f->where_len > 2 && s[f->where_len - 1] == ')') {
        const char *open = NULL;
        for (size_t i = f->where_len - 1; i-- > 0;)
            if (s[i] == '(') {
                open = s + i;
                break;
            }
        if (open) {
            if (open[1] >= '0' && open[1] <= '9') f->line = atoi(open + 1);
            f->where_len = (size_t)(open - s);
        }
    }
}


int op_samples_by_thread(const opprof_trace *t, uint32_t **idx_out, size_t **first_out)
{
    size_t nt = t->nthreads;
    size_t *first = calloc(nt + 1, sizeof *first);
    size_t *fill = calloc(nt ? nt : 1, sizeof *fill);
    uint32_t *idx = malloc((t->nsamples ? t->nsamples : 1) * sizeof *idx);
    if (!first || !fill || !idx || t->nsamples > UINT32_MAX) {
        free(first);
        free(fill);
        free(idx);
        return -1;
    }
    for (size_t i = 0; i < t->nsamples; i++)
        if (t->samples[i].thread < nt) first[t->samples[i].thread + 1]++;
    for (size_t k = 0; k < nt; k++) first[k + 1] += first[k];
    for (size_t i = 0; i < t->nsamples; i++) {
        uint32_t th = t->samples[i].thread;
        if (th < nt) idx[first[th] + fill[th]++] = (uint32_t)i;
    }
    /* In time order per thread (the collector's are; insertion keeps them cheap) */
    for (size_t k = 0; k < nt; k++)
        for (size_t i = first[k] + 1; i < first[k + 1]; i++) {
            uint32_t v = idx[i];
            size_t j = i;
            while (j > first[k] && t->samples[idx[j - 1]].ts_ns > t->samples[v].ts_ns) {
                idx[j] = idx[j - 1];
                j--;
            }
            idx[j] = v;
        }
    free(fill);
    *idx_out = idx;
    *first_out = first;
    return 0;
}

/* One thread's profile being written. */
typedef struct prof {
    op_jw *w;
    const opprof_trace *t;
    uint32_t *node_frame, *node_parent; /* by node id - 1: its frame's string id (or NODE_*), parent id */
    size_t nnodes, cap_frame, cap_parent, written;
    op_map child;  /* parent id << 32 | frame id -> node id */
    op_map leaf;   /* model stack (index + 1) -> node id */
    uint32_t idle;
    uint32_t *pt_node;
    int64_t *pt_us;
    size_t npt, cap_node, cap_us;
    int64_t prev_us; /* the time the next delta counts from */
} prof;

static int64_t us_of(int64_t ns)
{
    return ns >= 0 ? ns / 1000 : -((-ns + 999) / 1000);
}

static uint32_t node_new(prof *p, uint32_t parent, uint32_t frame)
{
    if (op_grow(&p->node_frame, &p->cap_frame, p->nnodes + 1, sizeof *p->node_frame) ||
        op_grow(&p->node_parent, &p->cap_parent, p->nnodes + 1, sizeof *p->node_parent))
        return 0;
    p->node_frame[p->nnodes] = frame;
    p->node_parent[p->nnodes] = parent;
    return (uint32_t)++p->nnodes;
}

static uint32_t node_child(prof *p, uint32_t parent, uint32_t frame)
{
    int added;
    uint64_t *slot = op_map_at(&p->child, (uint64_t)parent << 32 | frame, &added);
    if (!slot) return 0;
    if (added && !(*slot = node_new(p, parent, frame))) return 0;
    return (uint32_t)*slot;
}

/* The node of model stack k (index + 1; 0: every frame was the profiler's). */
static uint32_t node_of_stack(prof *p, uint32_t k)
{
    uint32_t v;
    if (op_map_get_u32(&p->leaf, k, &v)) return v;
    uint32_t node = 1;
    if (!k || k > p->t->nstacks) {
        node = node_child(p, 1, NODE_OWN);
    } else {
        const op_stack *st = &p->t->stacks[k - 1];
        for (uint32_t i = st->nframes; i-- > 0 && node;) node = node_child(p, node, st->frames[i]);
    }
    if (!node || op_map_put(&p->leaf, k, node)) return 0;
    return node;
}

static int point(prof *p, int64_t us, uint32_t node)
{
    if (op_grow(&p->pt_node, &p->cap_node, p->npt + 1, sizeof *p->pt_node) ||
        op_grow(&p->pt_us, &p->cap_us, p->npt + 1, sizeof *p->pt_us))
        return -1;
    p->pt_node[p->npt] = node;
    p->pt_us[p->npt++] = us;
    return 0;
}

static void put_call_frame(prof *p, uint32_t frame)
{
    op_jw *w = p->w;
    OP_JW_LIT(w, "{\"functionName\": ");
    if (frame == NODE_ROOT || frame == NODE_IDLE || frame == NODE_OWN) {
        op_jw_cstr(w, frame == NODE_ROOT ? "(root)" : frame == NODE_IDLE ? "(idle)" : "(opprof)");
        OP_JW_LIT(w, ", \"url\": \"\", \"scriptId\": 0, \"lineNumber\": -1, \"columnNumber\": -1}");
        return;
    }
    const char *s = op_strtab_get(&p->t->str, frame);
    op_frame_text f;
    op_frame_text_parse(s, op_strtab_len(&p->t->str, frame), &f);
    if (f.fn_len == 2 && !memcmp(f.fn, "??", 2) && f.where_len) { /* as the function table names it */
        char buf[600];
        int n = snprintf(buf, sizeof buf, "?? (%.*s)", (int)(f.where_len < 500 ? f.where_len : 500), f.where);
        op_jw_str(w, buf, (size_t)n);
    } else {
        op_jw_str(w, f.fn, f.fn_len);
    }
    OP_JW_LIT(w, ", \"url\": ");
    op_jw_str(w, f.where, f.where_len);
    /* V8's lineNumber is where the function begins, and viewers key a
     * function by name, url and line: the line a frame was at when sampled
     * made each call site a function of its own (speedscope listed main
     * twice, once per callee). */
    OP_JW_LIT(w, ", \"scriptId\": 0, \"lineNumber\": -1, \"columnNumber\": -1}");
}

static void put_head(prof *p, int *first, const char *name, const op_thread *th, size_t id, int64_t ts_us)
{
    op_jw *w = p->w;
    if (*first) {
        OP_JW_LIT(w, "\n  ");
        *first = 0;
    } else {
        OP_JW_LIT(w, ",\n  ");
    }
    OP_JW_LIT(w, "{\"ph\": \"P\", \"cat\": " CAT ", \"name\": \"");
    op_jw_put(w, name, strlen(name));
    OP_JW_LIT(w, "\", \"id\": \"0x");
    char hex[24];
    int n = snprintf(hex, sizeof hex, "%zx", id);
    op_jw_put(w, hex, (size_t)n);
    OP_JW_LIT(w, "\", \"pid\": ");
    op_jw_i64(w, th->pid);
    OP_JW_LIT(w, ", \"tid\": ");
    op_jw_i64(w, th->tid);
    OP_JW_LIT(w, ", \"ts\": ");
    op_jw_i64(w, ts_us);
    OP_JW_LIT(w, ", \"args\": {\"data\": {");
}

/* Points [a, b) as a ProfileChunk, with the nodes made since the last one. */
static void put_chunk(prof *p, int *first, const op_thread *th, size_t id, size_t a, size_t b)
{
    op_jw *w = p->w;
    put_head(p, first, "ProfileChunk", th, id, p->pt_us[b - 1]);
    OP_JW_LIT(w, "\"cpuProfile\": {\"nodes\": [");
    for (size_t k = p->written; k < p->nnodes; k++) {
        if (k > p->written) OP_JW_LIT(w, ", ");
        OP_JW_LIT(w, "{\"id\": ");
        op_jw_u64(w, k + 1);
        if (p->node_parent[k]) {
            OP_JW_LIT(w, ", \"parent\": ");
            op_jw_u64(w, p->node_parent[k]);
        }
        OP_JW_LIT(w, ", \"callFrame\": ");
        put_call_frame(p, p->node_frame[k]);
        OP_JW_LIT(w, "}");
    }
    p->written = p->nnodes;
    OP_JW_LIT(w, "], \"samples\": [");
    for (size_t i = a; i < b; i++) {
        if (i > a) OP_JW_LIT(w, ", ");
        op_jw_u64(w, p->pt_node[i]);
    }
    OP_JW_LIT(w, "]}, \"timeDeltas\": [");
    for (size_t i = a; i < b; i++) {
        if (i > a) OP_JW_LIT(w, ", ");
        op_jw_i64(w, p->pt_us[i] - p->prev_us);
        p->prev_us = p->pt_us[i];
    }
    OP_JW_LIT(w, "]");
    if (b == p->npt) { /* the last chunk: the profile's end, as V8 gives it */
        OP_JW_LIT(w, ", \"endTime\": ");
        op_jw_i64(w, p->pt_us[b - 1]);
    }
    OP_JW_LIT(w, "}}}");
}

static void prof_reset(prof *p)
{
    op_map_free(&p->child);
    op_map_free(&p->leaf);
    p->nnodes = p->written = p->npt = 0;
    p->idle = 0;
}

static void prof_free(prof *p)
{
    prof_reset(p);
    free(p->node_frame);
    free(p->node_parent);
    free(p->pt_node);
    free(p->pt_us);
}

/* Thread th's samples idx[0..n) as its points: each at its time less its
 * CPU time, "(idle)" after it when the next one begins later. */
static int thread_points(prof *p, const uint32_t *idx, size_t n)
{
    const opprof_trace *t = p->t;
    if (!node_new(p, 0, NODE_ROOT)) return -1;
    int64_t last_end = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        const op_sample *s = &t->samples[idx[i]];
        int64_t start = s->ts_ns - op_sample_ns(s, t->sample_period_ns);
        if (start < last_end) start = last_end;
        uint32_t node = node_of_stack(p, s->stack);
        if (!node || point(p, us_of(start), node)) return -1;
        last_end = s->ts_ns;
        int64_t next = INT64_MAX;
        if (i + 1 < n) {
            const op_sample *q = &t->samples[idx[i + 1]];
            next = q->ts_ns - op_sample_ns(q, t->sample_period_ns);
        }
        if (next == INT64_MAX || next - s->ts_ns >= IDLE_MIN_NS) {
            if (!p->idle && !(p->idle = node_child(p, 1, NODE_IDLE))) return -1;
            if (point(p, us_of(s->ts_ns), p->idle)) return -1;
        }
    }
    return 0;
}

int op_chrome_write_samples(op_jw *w, const opprof_trace *t, int *first, int names)
{
    if (!t || !t->nsamples) return 0;
    uint32_t *idx;
    size_t *from;
    if (op_samples_by_thread(t, &idx, &from)) return -1;
    prof p;
    memset(&p, 0, sizeof p);
    p.w = w;
    p.t = t;
    int rc = 0;
    for (size_t k = 0; k < t->nthreads && rc == 0 && !w->status; k++) {
        size_t n = from[k + 1] - from[k];
        if (!n) continue;
        prof_reset(&p);
        if (thread_points(&p, idx + from[k], n)) {
            rc = -1;
            break;
        }
        const op_thread *th = &t->threads[k];
        if (names && th->name && op_strtab_len(&t->str, th->name)) {
            if (*first) OP_JW_LIT(w, "\n  ");
            else OP_JW_LIT(w, ",\n  ");
            *first = 0;
            /* "cat" as Chrome writes it on metadata: speedscope takes a
             * file for a Chrome timeline (and reads its CPU profiles) only
             * when the first event has pid, tid, ph and cat, and in a file
             * of samples only this is the first event. */
            OP_JW_LIT(w, "{\"name\": \"thread_name\", \"cat\": \"__metadata\", \"ph\": \"M\", \"ts\": 0.000, \"pid\": ");
            op_jw_i64(w, th->pid);
            OP_JW_LIT(w, ", \"tid\": ");
            op_jw_i64(w, th->tid);
            OP_JW_LIT(w, ", \"args\": {\"name\": ");
            op_jw_str(w, op_strtab_get(&t->str, th->name), op_strtab_len(&t->str, th->name));
            OP_JW_LIT(w, "}}");
        }
        p.prev_us = p.pt_us[0];
        put_head(&p, first, "Profile", th, k + 1, p.prev_us);
        OP_JW_LIT(w, "\"startTime\": ");
        op_jw_i64(w, p.prev_us);
        OP_JW_LIT(w, "}}}");
        for (size_t a = 0; a < p.npt && !w->status; a += CHUNK_SAMPLES)
            put_chunk(&p, first, th, k + 1, a, a + CHUNK_SAMPLES < p.npt ? a + CHUNK_SAMPLES : p.npt);
    }
    prof_free(&p);
    free(idx);
    free(from);
    return rc;
}

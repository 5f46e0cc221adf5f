/* A .pftrace written while it is recorded (pftrace_stream.h): the streamed
 * reader's batches become pieces of the threads' sequences.
 *
 * A batch holds one thread's records as they were read (several threads'
 * only at the end), in time order: a range's begin when its record is read,
 * its end when it is done. So a slice's begin packet is written before its
 * end is known, and a range open across batches (main, a loop) simply has
 * its end in a later piece. Each piece clears the sequence's incremental
 * state and interns what it uses again: a few hundred bytes per batch of
 * tens of thousands of records. Tracks belong to the file, not to the
 * sequence, so Perfetto and opprof's reader pair the begin and end across
 * pieces. */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "export/pftrace.h"
#include "export/pftrace_meta.h"
#include "export/pftrace_stream.h"

struct op_pf_stream {
    pf_writer pw;
    pf_wseq seq;
    size_t piece; /* the thread whose piece seq is writing, SIZE_MAX none */
    opprof_export_options o;
    opprof_trace *info; /* the head's metadata, written at the end */
};

static int nomem(void)
{
    return op_fail(OPPROF_E_NOMEM, "out of memory writing the streamed trace");
}

static void stream_free(op_pf_stream *s)
{
    op_pf_seq_free(&s->seq);
    op_pf_writer_free(&s->pw);
    opprof_trace_free(s->info);
    free(s);
}

/* The metadata the instant at the end needs, from the head (whose strings
 * are its own). */
static opprof_trace *info_of(const opprof_trace *head)
{
    opprof_trace *t = op_trace_new();
    if (!t) return NULL;
    t->base_time_ns = head->base_time_ns;
    t->dist_rank = head->dist_rank;
    t->dist_world = head->dist_world;
    t->clock_start = head->clock_start;
    t->clock_end = head->clock_end;
    if (head->dist_backend) {
        t->dist_backend = op_trace_intern(t, op_strtab_get(&head->str, head->dist_backend),
                                          op_strtab_len(&head->str, head->dist_backend));
        if (t->dist_backend == UINT32_MAX) {
            opprof_trace_free(t);
            return NULL;
        }
    }
    return t;
}

int op_pf_stream_begin(op_pf_stream **out, op_jw *w, const opprof_trace *head, const opprof_export_options *o,
                       int zlevel)
{
    *out = NULL;
    op_pf_stream *s = calloc(1, sizeof *s);
    if (!s) return nomem();
    s->o = *o;
    op_pf_writer_init(&s->pw, w, &s->o, zlevel, head->base_time_ns);
    s->seq.pw = &s->pw;
    s->piece = SIZE_MAX;
    if (!(s->info = info_of(head))) {
        stream_free(s);
        return nomem();
    }
    *out = s;
    return w->status;
}

static int64_t item_ts(const opprof_trace *t, uint32_t k)
{
    if (k & OP_ORDER_MEM) return t->mem[k & ~OP_ORDER_MEM].ts_ns;
    const op_event *e = &t->ev[k];
    return (e->flags & OP_EV_OPENING) ? e->start_ns : e->start_ns + e->dur_ns;
}

static uint32_t item_thread(const opprof_trace *t, uint32_t k)
{
    return (k & OP_ORDER_MEM) ? t->mem[k & ~OP_ORDER_MEM].thread : t->ev[k].thread;
}

static int batch(op_pf_stream *s, const opprof_trace *t, const uint32_t *order, size_t n)
{
    pf_writer *pw = &s->pw;
    pw->t = t;
    if (op_pf_seq_fit(&s->seq, t->str.count ? t->str.count : 1, t->nstacks ? t->nstacks : 1) != 0 ||
        op_pf_meta_threads(pw) != 0 || op_pf_meta_counters(pw) != 0)
        return -1;
    size_t cur = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        uint32_t k = order[i];
        if ((k & OP_ORDER_MEM) ? (k & ~OP_ORDER_MEM) >= t->nmem : k >= t->nev) return -1;
        uint32_t th = item_thread(t, k);
        if (th >= t->nthreads) return -1;
        if (th != cur && op_pf_seq_start(&s->seq, th, item_ts(t, k)) != 0) return -1;
        cur = th;
        s->piece = th;
        int rc;
        if (k & OP_ORDER_MEM) rc = op_pf_seq_memory(&s->seq, &t->mem[k & ~OP_ORDER_MEM]);
        else if (t->ev[k].flags & OP_EV_OPENING) rc = op_pf_seq_begin(&s->seq, &t->ev[k]);
        else rc = op_pf_seq_end(&s->seq, &t->ev[k]);
        if (rc != 0) return -1;
    }
    return 0;
}

/* The piece of th's sequence that a range read straight goes into, with
 * room for name's interning: the one being written, or a new one (its
 * thread's track described first) when the last was another thread's. */
static int piece_for(op_pf_stream *s, const opprof_trace *t, uint32_t th, uint32_t name, int64_t ts_ns)
{
    pf_writer *pw = &s->pw;
    pw->t = t;
    if (name != UINT32_MAX && name >= s->seq.cap_name &&
        op_pf_seq_fit(&s->seq, t->str.count ? t->str.count : 1, t->nstacks ? t->nstacks : 1) != 0)
        return -1;
    if (s->piece == th) return 0;
    if (th >= t->nthreads || op_pf_meta_threads(pw) != 0 || op_pf_seq_start(&s->seq, th, ts_ns) != 0) return -1;
    s->piece = th;
    return 0;
}

/* One item the short run below leaves: its piece and its interning found,
 * or its packet built, the general way. 0 or -1. */
static int range_begin(op_pf_stream *s, const opprof_trace *t, uint32_t th, uint32_t name, int cat, int64_t ts_ns)
{
    pf_wseq *q = &s->seq;
    if (s->piece == th && cat == OPPROF_CAT_CPU_OP && name < q->cap_name && q->name_gen[name] == q->gen &&
        op_pf_seq_quick(q, ts_ns, q->name_iid[name]) == 0)
        return 0;
    op_event e = {0};
    e.name = name;
    e.cat = (uint8_t)cat;
    e.thread = th;
    e.start_ns = ts_ns;
    e.flags = OP_EV_OPENING;
    return piece_for(s, t, th, name, ts_ns) != 0 || op_pf_seq_begin(&s->seq, &e) != 0 ? -1 : 0;
}

static int range_end(op_pf_stream *s, const opprof_trace *t, uint32_t th, int64_t ts_ns)
{
    if (s->piece == th && op_pf_seq_quick(&s->seq, ts_ns, 0) == 0) return 0;
    op_event e = {0};
    e.thread = th;
    e.start_ns = ts_ns;
    return piece_for(s, t, th, UINT32_MAX, ts_ns) != 0 || op_pf_seq_end(&s->seq, &e) != 0 ? -1 : 0;
}

/* The items from it on that op_pf_seq_quick would write into the batch as
 * they are, written in one loop with the writer's state in locals (through
 * the bytes it stores the compiler would read that state again at each
 * packet): those on the piece being written, of names interned in it, of
 * short deltas, while the batch has room. Returns how many it wrote. */
static size_t quick_run(op_pf_stream *s, const op_sdec_item *it, size_t n)
{
    pf_wseq *q = &s->seq;
    pf_writer *pw = &s->pw;
    op_buf *b = &pw->batch.out;
    size_t left = op_pf_batch_left(pw);
    if (pw->te.out.n || pw->in.out.n || q->id >= 128 || left < 16) return 0; /* room for a packet of 13 bytes */
    unsigned char *at = (unsigned char *)b->p + b->n, *stop = at + left - 16;
    const uint32_t *gen_of = q->name_gen, *iid_of = q->name_iid;
    uint32_t gen = q->gen, id = q->id;
    size_t cap_name = q->cap_name, piece = s->piece;
    uint64_t last = q->last_ts, base = (uint64_t)pw->base_ns;
    size_t i = 0;
    for (; i < n && at <= stop; i++) {
        const op_sdec_item *e = &it[i];
        uint32_t iid = 0;
        if (e->thread != piece) break;
        if (e->name != OP_SDEC_END) {
            if (e->cat != OPPROF_CAT_CPU_OP || e->name >= cap_name || gen_of[e->name] != gen) break;
            iid = iid_of[e->name];
            if (!iid || iid >= 128) break;
        }
        uint64_t ts = base + (uint64_t)e->ts_ns;
        if (ts < last) ts = last; /* as op_pf_seq_quick: the clock only goes forward */
        if (ts - last >= 16384) break;
        at += op_pf_put_quick(at, ts - last, iid, id);
        last = ts;
    }
    q->last_ts = last;
    b->n = (size_t)(at - (unsigned char *)b->p);
    return i;
}

int op_pf_stream_ranges(op_pf_stream *s, const opprof_trace *t, const op_sdec_item *it, size_t n)
{
    for (size_t i = quick_run(s, it, n); i < n; i += 1 + quick_run(s, it + i + 1, n - i - 1)) {
        const op_sdec_item *e = &it[i];
        int rc = e->name == OP_SDEC_END ? range_end(s, t, e->thread, e->ts_ns)
                                        : range_begin(s, t, e->thread, e->name, e->cat, e->ts_ns);
        if (rc != 0) return s->pw.w->status ? s->pw.w->status : nomem();
    }
    return s->pw.w->status;
}

int op_pf_stream_events(op_pf_stream *s, const opprof_trace *t, const uint32_t *order, size_t n)
{
    if (batch(s, t, order, n) != 0) return s->pw.w->status ? s->pw.w->status : nomem();
    return s->pw.w->status;
}

int op_pf_stream_model(op_pf_stream *s, const opprof_trace *t)
{
    pf_writer *pw = &s->pw;
    pw->t = t;
    s->piece = SIZE_MAX;
    if (op_pf_meta_threads(pw) != 0 || op_pf_meta_counters(pw) != 0 || op_pf_write_threads(pw) != 0)
        return pw->w->status ? pw->w->status : nomem();
    return pw->w->status;
}

int op_pf_stream_end(op_pf_stream *s, const opprof_trace *t, const uint32_t *order, size_t n,
                     const opprof_trace *sampled, uint64_t dropped, int incomplete)
{
    int rc = t ? op_pf_stream_events(s, t, order, n) : OPPROF_E_INVAL; /* NULL: giving up */
    if (rc == OPPROF_OK && op_pf_write_samples(&s->pw, sampled, 1) != 0)
        rc = s->pw.w->status ? s->pw.w->status : nomem();
    if (rc == OPPROF_OK) {
        s->info->dropped = dropped;
        s->info->filter_min_ns = t->filter_min_ns;
        s->info->filter_max_depth = t->filter_max_depth;
        s->info->filtered = t->filtered;
        if (incomplete) s->info->options |= OP_TRACE_INCOMPLETE;
        if (op_pf_meta_info(&s->pw, s->info) != 0 || op_pf_flush(&s->pw) != 0)
            rc = s->pw.w->status ? s->pw.w->status : nomem();
    }
    stream_free(s);
    return rc;
}

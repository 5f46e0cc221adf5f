/* The .pftrace reader (see pftrace.h): the file's packets read one at a
 * time from the source, each packet's sequence state (clocks, defaults,
 * interned ids), the track descriptors, then the model finished as the
 * Chrome reader finishes it. */
#include "import/pftrace.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/pfschema.h"
#include "common/satmath.h"
#include "common/vec.h"
#include "import/import.h"
#include "import/pftrace_ahead.h"

int op_pf_fail(pf_reader *r, int status, const unsigned char *p, const char *fmt, ...)
{
    if (r->status) return -1;
    r->status = status;
    uint64_t off = r->pkt_off + (uint64_t)(p - r->pkt);
    size_t k = 0;
    r->err_off = off;
    if (r->in_batch) { /* a byte of the inflated text means nothing in the file: name both */
        r->err_off = r->z_off;
        k = (size_t)snprintf(r->err, sizeof r->err, "compressed packets, inflated byte %" PRIu64 ": ", off);
        if (k >= sizeof r->err) k = sizeof r->err - 1;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err + k, sizeof r->err - k, fmt, ap);
    va_end(ap);
    return -1;
}

int op_pf_sniff(const unsigned char *b, size_t n)
{
    if (n < 2 || b[0] != ((PF_TRACE_PACKET << 3) | 2)) return 0;
    /* JSON: more white space, then '{' or '['. A packet's length is
     * followed by a field's tag, which is never '{' or '[' in a trace packet
     * (those would be groups). */
    size_t i = 1;
    while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n')) i++;
    return i < n && b[i] != '{' && b[i] != '[';
}

/* The state of sequence id, made when create (NULL when out of memory or
 * past PF_MAX_SEQS, failure recorded; or, without create, when it has none). */
static pf_seq *seq_of(pf_reader *r, uint64_t id, int create)
{
    uint32_t k;
    if (r->last_seq_ok && r->last_seq_id == id) return &r->seqs[r->last_seq_k];
    if (op_map_get_u32(&r->seq_ix, id, &k)) {
        r->last_seq_id = id;
        r->last_seq_k = k;
        r->last_seq_ok = 1;
        return &r->seqs[k];
    }
    if (!create) return NULL;
    if (r->nseqs >= PF_MAX_SEQS) {
        op_pf_fail(r, OPPROF_E_RANGE, r->pkt, "more than %zu packet sequences", PF_MAX_SEQS);
        return NULL;
    }
    if (op_grow(&r->seqs, &r->cap_seqs, r->nseqs + 1, sizeof *r->seqs) != 0 ||
        op_map_put(&r->seq_ix, id, (uint32_t)r->nseqs) != 0) {
        op_pf_fail(r, OPPROF_E_NOMEM, r->pkt, "out of memory");
        return NULL;
    }
    pf_seq *s = &r->seqs[r->nseqs++];
    memset(s, 0, sizeof *s);
    return s;
}

static void seq_clear(pf_seq *s)
{
    op_map_free(&s->names);
    op_map_free(&s->cats);
    op_map_free(&s->anns);
    op_map_free(&s->strs);
    free(s->name_q);
    free(s->clk);
    memset(s, 0, sizeof *s);
}

pf_clock *op_pf_clock(pf_seq *s, unsigned id)
{
    for (size_t i = 0; i < s->nclk; i++)
        if (s->clk[i].id == id) return &s->clk[i];
    return NULL;
}

/* Clock 64 + id of s, made (zeroed) when new; NULL when out of memory. */
static pf_clock *clock_add(pf_seq *s, unsigned id)
{
    pf_clock *k = op_pf_clock(s, id);
    if (k) return k;
    if (op_grow(&s->clk, &s->cap_clk, s->nclk + 1, sizeof *s->clk) != 0) return NULL;
    k = &s->clk[s->nclk++];
    memset(k, 0, sizeof *k);
    k->id = (uint8_t)id;
    return k;
}

/* "Sequence-scoped" clocks (64..127) are the ones a file of its own can
 * define; their offset to the trace's clock is the snapshot's difference to
 * the first other clock in it. */
static int clock_snapshot(pf_reader *r, pf_seq *s, op_pbr cs)
{
    op_pbf f, g;
    const char *why;
    int rc;
    int64_t ref = 0;
    int have_ref = 0;
    for (int pass = 0; pass < 2; pass++) {
        op_pbr it = cs;
        while ((rc = op_pbr_next(&it, &f, &why)) > 0) {
            if (f.field != PF_CS_CLOCKS || f.wire != OP_PB_LEN) continue;
            uint64_t id = 0, ts = 0, incr = 0, unit = 1;
            op_pbr c = f.sub;
            while ((rc = op_pbr_next(&c, &g, &why)) > 0) {
                if (g.wire != OP_PB_VARINT) continue;
                if (g.field == PF_CLK_ID) id = g.v;
                else if (g.field == PF_CLK_TIMESTAMP) ts = g.v;
                else if (g.field == PF_CLK_INCREMENTAL) incr = g.v;
                else if (g.field == PF_CLK_UNIT_NS) unit = g.v ? g.v : 1;
            }
            if (rc < 0) return op_pf_fail(r, OPPROF_E_PARSE, c.p, "clock snapshot: %s", why);
            int scoped = id >= PF_CLOCK_SEQ_FIRST && id < PF_CLOCK_SEQ_FIRST + 64;
            uint64_t ns;
            /* Times, as a packet's: within 2^61 ns, so that the offset between two fits. */
            if ((pass == 0 && !scoped && !have_ref) || (pass == 1 && scoped)) {
                if ((scoped ? __builtin_mul_overflow(ts, unit, &ns) : (ns = ts, 0)) || ns > (uint64_t)OP_TIME_LIMIT_NS)
                    return op_pf_fail(r, OPPROF_E_PARSE, f.sub.p, "clock snapshot: clock %" PRIu64 "'s time is out of "
                                      "range (more than 2^61 ns, about 73 years, from 0)", id);
            }
            if (pass == 0 && !scoped && !have_ref) {
                ref = (int64_t)ns;
                have_ref = 1;
            } else if (pass == 1 && scoped) {
                pf_clock *k = clock_add(s, (unsigned)(id - PF_CLOCK_SEQ_FIRST));
                if (!k) return op_pf_fail(r, OPPROF_E_NOMEM, f.sub.p, "out of memory");
                k->valid = 1;
                k->incremental = incr != 0;
                k->unit = unit;
                k->value = ns;
                k->offset = have_ref ? ref - (int64_t)ns : 0;
            }
        }
        if (rc < 0) return op_pf_fail(r, OPPROF_E_PARSE, it.p, "clock snapshot: %s", why);
    }
    return 0;
}

static int defaults(pf_reader *r, pf_seq *s, op_pbr d)
{
    op_pbf f, g;
    const char *why;
    int rc;
    while ((rc = op_pbr_next(&d, &f, &why)) > 0) {
        if (f.field == PF_DEF_CLOCK_ID && f.wire == OP_PB_VARINT) {
            s->def_clock = (uint32_t)f.v;
        } else if (f.field == PF_DEF_TRACK_EVENT && f.wire == OP_PB_LEN) {
            op_pbr e = f.sub;
            while ((rc = op_pbr_next(&e, &g, &why)) > 0) {
                if (g.field == PF_TED_TRACK_UUID && g.wire == OP_PB_VARINT) {
                    s->has_def_track = 1;
                    s->def_track = g.v;
                }
            }
            if (rc < 0) return op_pf_fail(r, OPPROF_E_PARSE, e.p, "packet defaults: %s", why);
        }
    }
    return rc < 0 ? op_pf_fail(r, OPPROF_E_PARSE, d.p, "packet defaults: %s", why) : 0;
}

static uint32_t category_of(const char *s, size_t n)
{
    for (int c = 0; c <= OPPROF_CAT_OTHER; c++) {
        const char *name = opprof_category_name(c);
        if (c != OPPROF_CAT_MEMORY && c != OPPROF_CAT_OTHER && strlen(name) == n && memcmp(name, s, n) == 0)
            return (uint32_t)c;
    }
    return UINT32_MAX; /* skipped, as the Chrome reader skips an unknown cat */
}

static uint32_t annotation_of(const char *s, size_t n)
{
    for (int a = 0; a < PF_ANN_COUNT_; a++)
        if (strlen(op_pf_ann_names[a]) == n && memcmp(op_pf_ann_names[a], s, n) == 0) return (uint32_t)a;
    return UINT32_MAX;
}

/* One entry of InternedData: iid and name/str into the map of its kind. */
static int interned_entry(pf_reader *r, pf_seq *s, uint32_t kind, op_pbr e)
{
    op_pbf f;
    const char *why;
    int rc;
    uint64_t iid = 0;
    const unsigned char *name = NULL;
    size_t n = 0;
    while ((rc = op_pbr_next(&e, &f, &why)) > 0) {
        if (f.field == PF_IN_IID && f.wire == OP_PB_VARINT) iid = f.v;
        else if (f.field == PF_IN_NAME && f.wire == OP_PB_LEN) {
            name = f.sub.p;
            n = (size_t)(f.sub.end - f.sub.p);
        }
    }
    if (rc < 0) return op_pf_fail(r, OPPROF_E_PARSE, e.p, "interned data: %s", why);
    if (kind == PF_ID_EVENT_NAMES && n > OP_IMPORT_MAX_NAME)
        return op_pf_fail(r, OPPROF_E_PARSE, name, "interned data: an event name longer than 1 MiB");
    if (!name) name = (const unsigned char *)"";
    uint32_t v;
    op_map *m;
    switch (kind) {
    case PF_ID_CATEGORIES: m = &s->cats; v = category_of((const char *)name, n); break;
    case PF_ID_ANNOTATION_NAMES: m = &s->anns; v = annotation_of((const char *)name, n); break;
    case PF_ID_EVENT_NAMES: m = &s->names; v = op_trace_intern(r->t, (const char *)name, n); break;
    default: m = &s->strs; v = op_trace_intern(r->t, (const char *)name, n); break;
    }
    if (v == UINT32_MAX && (m == &s->names || m == &s->strs)) return op_pf_fail(r, OPPROF_E_NOMEM, e.p, "out of memory");
    if (op_map_put(m, iid, v) != 0) return op_pf_fail(r, OPPROF_E_NOMEM, e.p, "out of memory");
    if (m == &s->names && iid < PF_QUICK_NAMES) {
        if (!s->name_q && !(s->name_q = calloc(PF_QUICK_NAMES, sizeof *s->name_q)))
            return op_pf_fail(r, OPPROF_E_NOMEM, e.p, "out of memory");
        s->name_q[iid] = v + 1;
    }
    return 0;
}

static int interned(pf_reader *r, pf_seq *s, op_pbr d)
{
    op_pbf f;
    const char *why;
    int rc;
    while ((rc = op_pbr_next(&d, &f, &why)) > 0) {
        if (f.wire != OP_PB_LEN) continue;
        if (f.field == PF_ID_CATEGORIES || f.field == PF_ID_EVENT_NAMES || f.field == PF_ID_ANNOTATION_NAMES ||
            f.field == PF_ID_STRING_VALUES) {
            if (interned_entry(r, s, f.field, f.sub) != 0) return -1;
        }
    }
    return rc < 0 ? op_pf_fail(r, OPPROF_E_PARSE, d.p, "interned data: %s", why) : 0;
}

static int add_track(pf_reader *r, uint64_t uuid, int kind, uint32_t thread, const unsigned char *at)
{
    uint32_t k;
    if (op_map_get_u32(&r->track_ix, uuid, &k)) return 0; /* declared again: the first stays */
    if (r->ntracks == r->cap_tracks) {
        size_t c = r->cap_tracks ? r->cap_tracks * 2 : 16;
        pf_track *t = realloc(r->tracks, c * sizeof *t);
        if (!t) return op_pf_fail(r, OPPROF_E_NOMEM, at, "out of memory");
        r->tracks = t;
        r->cap_tracks = c;
    }
    if (op_map_put(&r->track_ix, uuid, (uint32_t)r->ntracks) != 0)
        return op_pf_fail(r, OPPROF_E_NOMEM, at, "out of memory");
    r->tracks[r->ntracks++] = (pf_track){kind, thread, NULL, 0, 0, NULL, 0, 0, 0};
    return 0;
}

/* A thread's track, a track under a thread's (opprof's lanes for
 * overlapping ranges: the same thread), opprof's metadata track, or
 * another (its events are skipped). */
static int track_descriptor(pf_reader *r, op_pbr d)
{
    op_pbf f, g;
    const char *why;
    int rc;
    const unsigned char *at = d.p;
    uint64_t uuid = 0, parent = 0;
    int has_thread = 0, has_parent = 0, other = 0, meta = 0;
    int64_t pid = 0, tid = 0;
    const unsigned char *tname = NULL;
    size_t tname_n = 0;
    while ((rc = op_pbr_next(&d, &f, &why)) > 0) {
        if (f.field == PF_TD_UUID && f.wire == OP_PB_VARINT) uuid = f.v;
        else if (f.field == PF_TD_PARENT_UUID && f.wire == OP_PB_VARINT) {
            parent = f.v;
            has_parent = 1;
        } else if (f.field == PF_TD_NAME && f.wire == OP_PB_LEN) {
            size_t n = (size_t)(f.sub.end - f.sub.p);
            meta = n == strlen(PF_META_TRACK_NAME) && memcmp(f.sub.p, PF_META_TRACK_NAME, n) == 0;
        } else if ((f.field == PF_TD_PROCESS || f.field == PF_TD_COUNTER) && f.wire == OP_PB_LEN) {
            other = 1;
        } else if (f.field == PF_TD_THREAD && f.wire == OP_PB_LEN) {
            has_thread = 1;
            op_pbr th = f.sub;
            while ((rc = op_pbr_next(&th, &g, &why)) > 0) {
                if (g.field == PF_THD_PID && g.wire == OP_PB_VARINT) pid = (int32_t)g.v; /* an int32 */
                else if (g.field == PF_THD_TID && g.wire == OP_PB_VARINT) tid = op_pb_int(g.v);
                else if (g.field == PF_THD_NAME && g.wire == OP_PB_LEN) {
                    tname = g.sub.p;
                    tname_n = (size_t)(g.sub.end - g.sub.p);
                    if (tname_n > OP_IMPORT_MAX_NAME)
                        return op_pf_fail(r, OPPROF_E_PARSE, tname, "thread descriptor: a name longer than 1 MiB");
                }
            }
            if (rc < 0) return op_pf_fail(r, OPPROF_E_PARSE, th.p, "thread descriptor: %s", why);
        }
    }
    if (rc < 0) return op_pf_fail(r, OPPROF_E_PARSE, d.p, "track descriptor: %s", why);
    if (has_thread) {
        op_thread_key k = {pid, tid, 0, 0};
        int64_t th = op_thread_map_get(&r->threads, r->t, &k);
        if (th < 0) return op_pf_fail(r, OPPROF_E_NOMEM, at, "out of memory");
        if (tname) {
            uint32_t name = op_trace_intern(r->t, (const char *)tname, tname_n);
            if (name == UINT32_MAX) return op_pf_fail(r, OPPROF_E_NOMEM, at, "out of memory");
            r->t->threads[th].name = name;
        }
        return add_track(r, uuid, PF_TK_THREAD, (uint32_t)th, at);
    }
    uint32_t k;
    if (!other && has_parent && op_map_get_u32(&r->track_ix, parent, &k) && r->tracks[k].kind == PF_TK_THREAD)
        return add_track(r, uuid, PF_TK_THREAD, r->tracks[k].thread, at);
    return add_track(r, uuid, !other && !has_parent && meta ? PF_TK_META : PF_TK_OTHER, 0, at);
}

/* The packet's time in nanoseconds on the trace's clock; -1 when it has
 * none or it is out of range (failure recorded). */
static int packet_time(pf_reader *r, pf_seq *s, uint64_t ts, int has_clock, uint32_t clock, int64_t *ns)
{
    if (!has_clock) clock = s->def_clock;
    uint64_t v = ts;
    if (clock >= PF_CLOCK_SEQ_FIRST && clock < PF_CLOCK_SEQ_FIRST + 64) {
        pf_clock *k = op_pf_clock(s, clock - PF_CLOCK_SEQ_FIRST);
        if (!k || !k->valid)
            return op_pf_fail(r, OPPROF_E_PARSE, r->pkt, "a timestamp on clock %u, which no snapshot of its sequence "
                              "defines", clock);
        uint64_t step;
        if (op_pf_clock_ns(k, ts, &v, &step) != 0)
            return op_pf_fail(r, OPPROF_E_PARSE, r->pkt, "a timestamp is out of range");
        if (k->incremental) k->value += step;
    }
    if (v > (uint64_t)OP_TIME_LIMIT_NS) /* as the Chrome reader: sums and differences of times then fit */
        return op_pf_fail(r, OPPROF_E_PARSE, r->pkt, "a timestamp is out of range (more than 2^61 ns, about 73 "
                          "years, from 0)");
    *ns = (int64_t)v;
    return 0;
}

/* Hands the events read so far to the batch's writer, keeping the slices
 * still open (their tracks' indices follow them). */
static int flush(pf_reader *r)
{
    size_t n = 0;
    for (size_t k = 0; k < r->ntracks; k++) n += r->tracks[k].nopen;
    uint32_t **open = malloc((n ? n : 1) * sizeof *open);
    if (!open || op_thread_map_number(&r->threads, r->t) != 0) {
        free(open);
        return op_pf_fail(r, OPPROF_E_NOMEM, r->pkt, "out of memory");
    }
    n = 0;
    for (size_t k = 0; k < r->ntracks; k++)
        for (size_t i = 0; i < r->tracks[k].nopen; i++)
            if (r->tracks[k].open[i] != UINT32_MAX) open[n++] = &r->tracks[k].open[i];
    int rc = op_trace_batch_out(r->t, open, n, r->batch->fn, r->batch->ctx);
    free(open);
    if (rc == OPPROF_OK) return 0;
    r->status = rc; /* the writer's failure, in its own words */
    r->batch_failed = 1;
    snprintf(r->err, sizeof r->err, "%s", opprof_last_error());
    return -1;
}

/* A placed track event's end of the packet: its time, the event, the caps. */
static int placed_event(pf_reader *r, pf_seq *s, uint64_t ts, int has_clock, uint32_t clock, int has_te, op_pbr te)
{
    int64_t ns = 0;
    if (packet_time(r, s, ts, has_clock, clock, &ns) != 0) return -1;
    if (has_te && op_pf_track_event(r, s, te, ns) != 0) return -1;
    /* Checked per packet, so an oversized input stops here, not after it is all held. */
    if (r->max_events && op_pf_held(r) > r->max_events)
        return op_pf_fail(r, OPPROF_E_RANGE, r->pkt, "more than %" PRIu64 " events (the limit asked for)",
                          r->max_events);
    if (r->batch && r->t->nev + r->t->nmem >= r->batch->max) return flush(r);
    return 0;
}

/* A one-byte tag, then a varint: the varint's end, or NULL when the bytes
 * are not that (the general reader then reads the packet, and names any
 * fault). */
static inline const unsigned char *tag_varint(const unsigned char *p, const unsigned char *end, unsigned tag,
                                              uint64_t *v)
{
    if (p >= end || *p != tag) return NULL;
    op_pbr r = {p + 1, end};
    const char *why;
    return op_pbr_varint(&r, v, &why) == 0 ? r.p : NULL;
}

/* Most packets of a trace are a slice's begin or end as opprof and the
 * Perfetto SDK write them: timestamp, track_event, sequence id and (the
 * SDK's, and opprof's before zstd) flags, in that order and nothing else.
 * Such a packet is read here without the general loop's bookkeeping; 1
 * read (0 or -1 in *rc), 0 not this shape. */
static int slice_packet(pf_reader *r, op_pbr body, int *rc)
{
    const unsigned char *p = body.p, *end = body.end;
    uint64_t ts, n, seq_id, flags = 0;
    if (!(p = tag_varint(p, end, PF_PKT_TIMESTAMP << 3 | OP_PB_VARINT, &ts))) return 0;
    if (!(p = tag_varint(p, end, PF_PKT_TRACK_EVENT << 3 | OP_PB_LEN, &n)) || n > (uint64_t)(end - p)) return 0;
    op_pbr te = {p, p + n};
    p += n;
    if (!(p = tag_varint(p, end, PF_PKT_SEQUENCE_ID << 3 | OP_PB_VARINT, &seq_id))) return 0;
    if (p != end && !(p = tag_varint(p, end, PF_PKT_SEQUENCE_FLAGS << 3 | OP_PB_VARINT, &flags))) return 0;
    if (p != end) return 0;
    if (flags & PF_SEQ_INCREMENTAL_STATE_CLEARED) return 0;
    pf_seq *s = seq_of(r, seq_id, 0);
    if (!s && r->status) {
        *rc = -1;
        return 1;
    }
    *rc = placed_event(r, s ? s : &r->none, ts, 0, 0, 1, te);
    return 1;
}

int op_pf_packet(pf_reader *r, op_pbr body)
{
    int fast_rc;
    if (slice_packet(r, body, &fast_rc)) return fast_rc;
    op_pbf f;
    const char *why;
    int rc;
    uint64_t seq_id = 0, flags = 0, ts = 0;
    uint32_t clock = 0;
    int has_ts = 0, has_clock = 0;
    op_pbr te = {0}, in = {0}, def = {0}, td = {0}, cs = {0}, z = {0};
    int has_te = 0, has_in = 0, has_def = 0, has_td = 0, has_cs = 0, has_z = 0, has_perf = 0;
    while ((rc = op_pbr_next(&body, &f, &why)) > 0) {
        int len = f.wire == OP_PB_LEN, var = f.wire == OP_PB_VARINT;
        switch (f.field) {
        case PF_PKT_TIMESTAMP: if (var) { ts = f.v; has_ts = 1; } break;
        case PF_PKT_CLOCK_ID: if (var) { clock = (uint32_t)f.v; has_clock = 1; } break;
        case PF_PKT_SEQUENCE_ID: if (var) seq_id = f.v; break;
        case PF_PKT_SEQUENCE_FLAGS: if (var) flags |= f.v; break;
        case PF_PKT_INCREMENTAL_CLEARED: if (var && f.v) flags |= PF_SEQ_INCREMENTAL_STATE_CLEARED; break;
        case PF_PKT_TRACK_EVENT: if (len) { te = f.sub; has_te = 1; } break;
        case PF_PKT_INTERNED_DATA: if (len) { in = f.sub; has_in = 1; } break;
        case PF_PKT_DEFAULTS: if (len) { def = f.sub; has_def = 1; } break;
        case PF_PKT_TRACK_DESCRIPTOR: if (len) { td = f.sub; has_td = 1; } break;
        case PF_PKT_CLOCK_SNAPSHOT: if (len) { cs = f.sub; has_cs = 1; } break;
        case PF_PKT_COMPRESSED: if (len) { z = f.sub; has_z = 1; } break;
        case PF_PKT_ZSTD_COMPRESSED: if (len) { z = f.sub; has_z = 2; } break;
        case PF_PKT_PERF_SAMPLE: if (len) has_perf = 1; break;
        default: break;
        }
    }
    if (rc < 0) return op_pf_fail(r, OPPROF_E_PARSE, body.p, "trace packet: %s", why);
    /* Perfetto's compressing service writes nothing else in such a packet. */
    if (has_z) return op_pf_compressed(r, z, has_z == 2);
    /* State only for a sequence that sets some: clearing one that has none is nothing. */
    pf_seq *s = seq_of(r, seq_id, has_cs || has_def || has_in);
    if (!s && r->status) return -1;
    if (s && (flags & PF_SEQ_INCREMENTAL_STATE_CLEARED)) seq_clear(s);
    if (!s) s = &r->none;
    if (has_cs && clock_snapshot(r, s, cs) != 0) return -1;
    if (has_def && defaults(r, s, def) != 0) return -1;
    if (has_in && interned(r, s, in) != 0) return -1;
    if (has_td && track_descriptor(r, td) != 0) return -1;
    if (has_perf) { /* a sampled stack (opprof exec --sample): counted, not kept */
        r->t->samples_skipped++;
        return 0;
    }
    if (!has_ts) return 0; /* a track event without a time is not placed */
    return placed_event(r, s, ts, has_clock, clock, has_te, te);
}

/* The source's bytes, kept from the current packet on. */
typedef struct pf_input {
    op_source *src;
    unsigned char *buf;
    size_t cap, pos, len;
    uint64_t off; /* of buf[0] in the stream */
    int eof;
    /* A read that failed while topping up (read_ahead): the failure is
     * named when the bytes it withheld are needed, as without top-ups. */
    int rd_status;
    uint64_t rd_off;
    char rd_err[sizeof ((pf_reader *)0)->err];
    uint64_t scan; /* the stream's offset up to which batches were looked for */
} pf_input;

/* At least `need` bytes from pos, unless the input ends first; quiet: a
 * failed read is kept for later, not named. */
static int fill_as(pf_reader *r, pf_input *in, size_t need, int quiet)
{
    if (in->len - in->pos >= need) return 0;
    if (!in->eof) {
        if (in->pos) { /* only when more is needed: a move per refill, not per packet */
            memmove(in->buf, in->buf + in->pos, in->len - in->pos);
            in->off += in->pos;
            in->len -= in->pos;
            in->pos = 0;
        }
        if (need > in->cap) {
            size_t c = in->cap ? in->cap : 1 << 16;
            while (c < need) c *= 2;
            unsigned char *b = realloc(in->buf, c);
            if (!b) {
                if (quiet) return 0;
                return r->status = OPPROF_E_NOMEM, snprintf(r->err, sizeof r->err, "out of memory"), -1;
            }
            in->buf = b;
            in->cap = c;
        }
        while (in->len < need && !in->eof) {
            ssize_t n = op_source_read(in->src, in->buf + in->len, in->cap - in->len);
            if (n < 0) {
                in->rd_status = (int)n;
                in->rd_off = in->src->err_off;
                snprintf(in->rd_err, sizeof in->rd_err, "%s", in->src->err);
                n = 0;
            }
            if (n == 0) in->eof = 1;
            in->len += (size_t)n;
        }
    }
    if (!quiet && in->rd_status && in->len - in->pos < need) {
        r->status = in->rd_status;
        r->err_off = in->rd_off;
        memcpy(r->err, in->rd_err, sizeof r->err);
        return -1;
    }
    return 0;
}

static int fill(pf_reader *r, pf_input *in, size_t need)
{
    return fill_as(r, in, need, 0);
}

/* How far ahead of the packet being read batches are looked for. */
#define AHEAD_BYTES ((size_t)2 << 20)

/* Once the file has shown a batch: the bytes held kept at least half of
 * AHEAD_BYTES past the packet being read, and each whole packet in them
 * that is a batch given to the inflater (pftrace_ahead.h), in file order,
 * while it has room. A packet that does not parse stops the look (the
 * reader names it when it gets there); so does one still partly unread. */
static void read_ahead(pf_reader *r, pf_input *in)
{
    if (!r->ahead) return;
    if (in->len - in->pos < AHEAD_BYTES / 2) fill_as(r, in, AHEAD_BYTES, 1);
    uint64_t at = in->scan > in->off + in->pos ? in->scan : in->off + in->pos;
    while (at < in->off + in->len) {
        const unsigned char *base = in->buf + (at - in->off), *end = in->buf + in->len;
        op_pbr hdr = {base, end};
        uint64_t tag, n;
        const char *why;
        if (op_pbr_varint(&hdr, &tag, &why) != 0 || tag != (PF_TRACE_PACKET << 3 | OP_PB_LEN) ||
            op_pbr_varint(&hdr, &n, &why) != 0 || n > (uint64_t)(end - hdr.p))
            break;
        op_pbr body = {hdr.p, hdr.p + n};
        op_pbf f;
        op_pbr z = {0};
        int rc, zstd = 0;
        while ((rc = op_pbr_next(&body, &f, &why)) > 0) /* as op_pf_packet finds it: the last one */
            if ((f.field == PF_PKT_COMPRESSED || f.field == PF_PKT_ZSTD_COMPRESSED) && f.wire == OP_PB_LEN) {
                z = f.sub;
                zstd = f.field == PF_PKT_ZSTD_COMPRESSED;
            }
        if (rc < 0) break;
        if (z.p && op_pf_ahead_give(r->ahead, at + (uint64_t)(z.p - base), zstd, z.p, (size_t)(z.end - z.p)) == 1)
            break;
        at += (uint64_t)(hdr.p - base) + n;
    }
    in->scan = at;
}

static int read_packets(pf_reader *r, pf_input *in)
{
    static const unsigned char none[1];
    uint64_t packets = 0;
    for (;;) {
        if (fill(r, in, 20) != 0) return -1;
        if (in->len == in->pos) break;
        const unsigned char *base = in->buf + in->pos;
        op_pbr hdr = {base, in->buf + in->len};
        r->pkt = base;
        r->pkt_off = in->off + in->pos;
        uint64_t tag, n = 0;
        const char *why;
        if (op_pbr_varint(&hdr, &tag, &why) != 0) return op_pf_fail(r, OPPROF_E_PARSE, hdr.p, "%s", why);
        int wire = (int)(tag & 7);
        if (wire == OP_PB_LEN && op_pbr_varint(&hdr, &n, &why) != 0)
            return op_pf_fail(r, OPPROF_E_PARSE, hdr.p, "%s", why);
        if (tag >> 3 != PF_TRACE_PACKET || wire != OP_PB_LEN)
            return op_pf_fail(r, OPPROF_E_PARSE, base, "not a Trace.packet (field %" PRIu64 ", wire type %d)",
                              tag >> 3, wire);
        if (n > PF_MAX_PACKET)
            return op_pf_fail(r, OPPROF_E_RANGE, base, "a packet of %" PRIu64 " bytes (at most %zu are read)", n,
                              PF_MAX_PACKET);
        size_t head = (size_t)(hdr.p - base);
        if (fill(r, in, head + (size_t)n) != 0) return -1; /* may move the buffer */
        base = in->buf + in->pos;
        if (in->len - in->pos < head + n) {
            r->pkt = none; /* the offset of the end of the input */
            r->pkt_off = in->off + in->len;
            return op_pf_fail(r, OPPROF_E_PARSE, none, "the input ends inside a packet of %" PRIu64 " bytes", n);
        }
        read_ahead(r, in); /* may move the buffer too */
        base = in->buf + in->pos;
        r->pkt = base;
        r->pkt_off = in->off + in->pos;
        if (op_pf_packet(r, (op_pbr){base + head, base + head + n}) != 0) return -1;
        in->pos += head + (size_t)n;
        packets++;
    }
    if (!packets) {
        r->pkt = none;
        r->pkt_off = 0;
        return op_pf_fail(r, OPPROF_E_PARSE, none, "the Perfetto trace has no packets");
    }
    return 0;
}

/* Open slices end with the trace. */
static void close_open(pf_reader *r)
{
    opprof_trace *t = r->t;
    for (size_t k = 0; k < r->ntracks; k++) {
        pf_track *tr = &r->tracks[k];
        for (size_t i = 0; i < tr->nopen; i++) {
            if (tr->open[i] == UINT32_MAX) continue;
            op_event *e = &t->ev[tr->open[i]];
            e->dur_ns = r->t_max > e->start_ns ? r->t_max - e->start_ns : 0;
        }
        tr->nopen = 0;
    }
}

/* Times start at 0 as the model wants. */
static void finish_times(pf_reader *r)
{
    opprof_trace *t = r->t;
    close_open(r);
    int64_t t0 = r->any_time ? r->t_min : 0;
    for (size_t i = 0; i < t->nev; i++) t->ev[i].start_ns -= t0;
    for (size_t i = 0; i < t->nmem; i++) t->mem[i].ts_ns -= t0;
    t->base_time_ns = t0;
    t->duration_ns = r->any_time ? r->t_max - t0 : 0;
    t->mem_totals_given = t->nmem > 0 && r->mem_totals == t->nmem;
}

static void reader_free(pf_reader *r)
{
    for (size_t i = 0; i < r->nseqs; i++) seq_clear(&r->seqs[i]);
    for (size_t i = 0; i < r->ntracks; i++) {
        free(r->tracks[i].open);
        free(r->tracks[i].fo);
    }
    free(r->seqs);
    free(r->tracks);
    op_map_free(&r->seq_ix);
    op_map_free(&r->call_stacks);
    op_map_free(&r->track_ix);
    op_thread_map_free(&r->threads);
    op_buf_free(&r->scratch);
    op_pf_inflate_free(r);
}

/* The whole input into *out: finished, or with a batch, its last events
 * handed out and nothing finished, or with a fold, its sums. */
static int import(op_source *src, const char *label, uint64_t max_events, const struct op_import_batch *b,
                  const opprof_avg_options *fold, opprof_trace **out)
{
    *out = NULL;
    pf_reader r;
    memset(&r, 0, sizeof r);
    r.max_events = max_events;
    r.batch = b;
    const char *ahead = getenv("OPPROF_READ_AHEAD");
    r.ahead_off = ahead && !strcmp(ahead, "0");
    pf_input in = {.src = src};
    r.t = op_trace_new();
    int rc = r.t ? 0 : (r.status = OPPROF_E_NOMEM, snprintf(r.err, sizeof r.err, "out of memory"), -1);
    if (rc == 0 && fold && !(r.fold = op_pf_fold_new(fold)))
        rc = (r.status = OPPROF_E_NOMEM, snprintf(r.err, sizeof r.err, "out of memory"), -1);
    if (rc == 0) rc = read_packets(&r, &in);
    free(in.buf);
    op_source_close(src);
    if (rc == 0 && fold) {
        rc = op_pf_fold_finish(&r);
    } else if (rc == 0 && b) {
        close_open(&r);
        rc = flush(&r);
    } else if (rc == 0 && op_thread_map_number(&r.threads, r.t) != 0) {
        r.status = OPPROF_E_NOMEM;
        snprintf(r.err, sizeof r.err, "out of memory");
        rc = -1;
    }
    if (rc == 0 && !b && !fold) finish_times(&r);
    op_pf_fold_free(r.fold);
    reader_free(&r);
    if (rc != 0) {
        opprof_trace_free(r.t);
        if (r.status == PF_NEED_MODEL) return PF_NEED_MODEL;
        if (r.batch_failed) return op_fail(r.status, "%s", r.err);
        return op_fail(r.status, "%s: byte %" PRIu64 ": %s", label, r.err_off, r.err);
    }
    if (b) {
        *out = r.t;
        return OPPROF_OK;
    }
    rc = op_trace_finish(r.t);
    if (rc != 0) {
        opprof_trace_free(r.t);
        return rc;
    }
    *out = r.t;
    return OPPROF_OK;
}

int op_import_pftrace(op_source *src, const char *label, uint64_t max_events, opprof_trace **out)
{
    return import(src, label, max_events, NULL, NULL, out);
}

int op_import_pftrace_batches(op_source *src, const char *label, const struct op_import_batch *b, opprof_trace **out)
{
    return import(src, label, 0, b, NULL, out);
}

int op_import_pftrace_fold(op_source *src, const char *label, uint64_t max_events, const opprof_avg_options *opt,
                           opprof_trace **out)
{
    static const opprof_avg_options by_name; /* opt NULL: the default grouping, still a fold */
    return import(src, label, max_events, NULL, opt ? opt : &by_name, out);
}

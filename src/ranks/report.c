/* The ranks report: operators across ranks, collectives matched across
 * ranks with their straggler and each rank's wait, and each rank's
 * communication, computation and their overlap (opprof_trace.h section 14 gives
 * the definitions). */
#define _GNU_SOURCE /* qsort_r */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/satmath.h"
#include "common/vec.h"
#include "ranks/intervals.h"
#include "ranks/ranks.h"
#include "ranks/report.h"

/* One rank's part in a collective, before matching. */
typedef struct part {
    uint32_t group, name, coll;
    int64_t seq, rank_idx, arrive, end, req, bytes;
} part;

/* A call completing a non-blocking operation (MPI_Wait, MPI_Test, ...). */
typedef struct completion {
    int64_t req, s, e;
    int done;
} completion;

typedef struct rank_scan {
    completion *c;
    size_t n, cap;
} rank_scan;

typedef struct builder {
    opprof_ranks_report *r;
    part *parts;
    size_t nparts, cap_parts;
    rank_scan *scans;
    int oom;
} builder;

static uint32_t intern_raw(builder *b, const char *s, size_t n)
{
    uint32_t id = op_strtab_intern(&b->r->str, s, n);
    if (id == UINT32_MAX) b->oom = 1;
    return id == UINT32_MAX ? 0 : id;
}

static uint32_t arg_str_id(builder *b, const char *args, const char *key)
{
    const char *s;
    size_t n;
    return op_args_str(args, key, &s, &n) ? intern_raw(b, s, n) : 0;
}

/* Room for one more element at *pp; out of memory sets b->oom. */
static int room(builder *b, void *pp, size_t *cap, size_t n, size_t elem)
{
    if (op_grow(pp, cap, n + 1, elem) == 0) return 1;
    b->oom = 1;
    return 0;
}

static void add_part(builder *b, const part *p)
{
    if (room(b, &b->parts, &b->cap_parts, b->nparts, sizeof *b->parts)) b->parts[b->nparts++] = *p;
}

static void add_completion(builder *b, rank_scan *rs, const completion *c)
{
    if (room(b, &rs->c, &rs->cap, rs->n, sizeof *rs->c)) rs->c[rs->n++] = *c;
}

static int by_req(const void *x, const void *y)
{
    const completion *a = x, *b = y;
    if (a->req != b->req) return (a->req > b->req) - (a->req < b->req);
    return (a->s > b->s) - (a->s < b->s);
}

/* The first completion of req, NULL when none. */
static const completion *first_completion(const rank_scan *rs, int64_t req)
{
    size_t lo = 0, hi = rs->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (rs->c[mid].req < req) lo = mid + 1;
        else hi = mid;
    }
    return lo < rs->n && rs->c[lo].req == req ? &rs->c[lo] : NULL;
}

/* Communication, computation and collectives of rank k. */
static void scan_rank(builder *b, const op_rank_trace *rt, size_t k, int64_t origin)
{
    const opprof_trace *t = rt->t;
    opprof_rank_stats *st = &b->r->ranks[k];
    rank_scan *rs = &b->scans[k];
    size_t nth = t->nthreads ? t->nthreads : 1;
    op_ivals *calls = calloc(nth, sizeof *calls), *cpu = calloc(nth, sizeof *cpu);
    op_ivals comm = {0}, compute = {0};
    if (!calls || !cpu) {
        b->oom = 1;
        free(calls);
        free(cpu);
        return;
    }
    /* Posts of non-blocking operations: their span runs to their completion. */
    completion *posts = NULL;
    size_t nposts = 0, cap_posts = 0;
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (size_t i = 0; i < t->nev; i++) {
        const op_event *e = &t->ev[i];
        if (!op_cat_is_host(e->cat)) continue;
        int64_t s = op_rank_time(rt, e->start_ns) - origin, end = s + e->dur_ns;
        if (s < first) first = s;
        if (end > last) last = end;
        const char *args = op_strtab_get(&t->str, op_evx_of(t, e)->args);
        if (!op_args_is_comm(args)) {
            if (e->cat == OPPROF_CAT_CPU_OP) op_ivals_add(&cpu[e->thread], s, end);
            continue;
        }
        op_ivals_add(&calls[e->thread], s, end);
        int64_t req = 0, done = 1, seq = 0;
        op_args_int(args, "Request id", &req);
        if (op_args_int(args, "Completed", &done)) {
            if (req > 0) add_completion(b, rs, &(completion){req, s, end, done != 0});
            continue;
        }
        if (req > 0) {
            if (room(b, &posts, &cap_posts, nposts, sizeof *posts)) posts[nposts++] = (completion){req, s, end, 0};
        }
        uint32_t group = arg_str_id(b, args, "Process Group Name");
        if (!group || !op_args_int(args, "Seq", &seq) || seq < 1) continue;
        part p = {group, intern_raw(b, op_strtab_get(&t->str, e->name), op_strtab_len(&t->str, e->name)),
                  arg_str_id(b, args, "Collective name"), seq, (int64_t)k, s, end, req, 0};
        op_args_int(args, "In msg bytes", &p.bytes);
        add_part(b, &p);
    }
    if (rs->n) qsort(rs->c, rs->n, sizeof *rs->c, by_req);
    for (size_t i = 0; i < nposts; i++) {
        int64_t end = posts[i].e;
        for (const completion *c = first_completion(rs, posts[i].req); c && c < rs->c + rs->n && c->req == posts[i].req;
             c++) {
            if (c->e > end) end = c->e;
            if (c->done) break;
        }
        op_ivals_add(&comm, posts[i].s, end);
    }
    for (size_t th = 0; th < nth; th++) {
        op_ivals_union(&calls[th]);
        op_ivals_union(&cpu[th]);
        op_ivals_subtract(&cpu[th], &calls[th], &compute);
        for (size_t i = 0; i < calls[th].n; i++) op_ivals_add(&comm, calls[th].v[i].s, calls[th].v[i].e);
        b->oom |= calls[th].oom | cpu[th].oom;
        op_ivals_free(&calls[th]);
        op_ivals_free(&cpu[th]);
    }
    op_ivals_union(&comm);
    op_ivals_union(&compute);
    b->oom |= comm.oom | compute.oom;
    st->rank = rt->rank;
    st->span_ns = last > first ? last - first : 0;
    st->comm_ns = op_ivals_length(&comm);
    st->compute_ns = op_ivals_length(&compute);
    st->overlap_ns = op_ivals_overlap(&comm, &compute);
    st->clock_offset_ns = rt->d.clock_start.valid ? rt->d.clock_start.offset_ns : 0;
    st->clock_uncertainty_ns = rt->d.clock_start.valid ? rt->d.clock_start.uncertainty_ns : 0;
    op_ivals_free(&comm);
    op_ivals_free(&compute);
    free(posts);
    free(calls);
    free(cpu);
}

static int by_instance(const void *x, const void *y, void *ctx)
{
    const part *a = x, *b = y;
    const op_strtab *str = ctx;
    if (a->group != b->group) {
        int c = strcmp(op_strtab_get(str, a->group), op_strtab_get(str, b->group));
        if (c) return c;
    }
    if (a->seq != b->seq) return (a->seq > b->seq) - (a->seq < b->seq);
    return (a->rank_idx > b->rank_idx) - (a->rank_idx < b->rank_idx);
}

/* How long rank p waited for the last arrival at `last`. */
static int64_t wait_of(const builder *b, const part *p, int64_t last)
{
    if (!p->req) {
        int64_t w = (p->end < last ? p->end : last) - p->arrive;
        return w > 0 ? w : 0;
    }
    const rank_scan *rs = &b->scans[p->rank_idx];
    int64_t w = 0;
    for (const completion *c = first_completion(rs, p->req); c && c < rs->c + rs->n && c->req == p->req; c++) {
        int64_t s = c->s > p->arrive ? c->s : p->arrive, e = c->e < last ? c->e : last;
        if (e > s) w = op_sat_add(w, e - s, &b->r->saturated);
    }
    return w;
}

static int match_collectives(builder *b)
{
    opprof_ranks_report *r = b->r;
    if (b->nparts) qsort_r(b->parts, b->nparts, sizeof *b->parts, by_instance, &r->str);
    size_t ninst = 0;
    for (size_t i = 0; i < b->nparts; i++)
        if (i == 0 || b->parts[i].group != b->parts[i - 1].group || b->parts[i].seq != b->parts[i - 1].seq) ninst++;
    r->coll = calloc(ninst ? ninst : 1, sizeof *r->coll);
    r->wait = malloc((ninst ? ninst : 1) * r->nranks * sizeof *r->wait);
    if (!r->coll || !r->wait) return -1;
    for (size_t i = 0; i < b->nparts;) {
        size_t j = i;
        while (j < b->nparts && b->parts[j].group == b->parts[i].group && b->parts[j].seq == b->parts[i].seq) j++;
        op_coll_rec *c = &r->coll[r->ncoll];
        int64_t *w = &r->wait[r->ncoll * r->nranks];
        for (size_t k = 0; k < r->nranks; k++) w[k] = -1;
        c->name = b->parts[i].name;
        c->coll = b->parts[i].coll;
        c->group = b->parts[i].group;
        c->seq = b->parts[i].seq;
        c->first = INT64_MAX;
        c->last = INT64_MIN;
        for (size_t k = i; k < j; k++) {
            const part *p = &b->parts[k];
            if (p->arrive < c->first) c->first = p->arrive;
            if (p->arrive >= c->last) {
                c->last = p->arrive;
                c->straggler = r->ranks[p->rank_idx].rank;
            }
            if (p->bytes > c->bytes) c->bytes = p->bytes;
        }
        c->ranks = (unsigned)(j - i);
        for (size_t k = i; k < j; k++) {
            const part *p = &b->parts[k];
            int64_t wt = wait_of(b, p, c->last);
            w[p->rank_idx] = wt;
            c->wait = op_sat_add(c->wait, wt, &r->saturated);
            if (c->ranks < 2) continue; /* only one rank's trace holds it: nothing to compare */
            opprof_rank_stats *st = &r->ranks[p->rank_idx];
            st->wait_ns = op_sat_add(st->wait_ns, wt, &r->saturated);
            st->collectives++;
            if (st->rank == c->straggler) st->straggler_count++;
        }
        r->ncoll++;
        i = j;
    }
    return 0;
}

static int by_mean_desc(const void *x, const void *y)
{
    const op_op_rec *a = x, *b = y;
    return (a->mean_ns < b->mean_ns) - (a->mean_ns > b->mean_ns);
}

/* Each operator's total time on each rank, from the rank's key averages. */
static int compare_ops(builder *b, const op_rank_trace *rt, size_t n)
{
    opprof_ranks_report *r = b->r;
    size_t cap_ops = 0;
    uint32_t *slot = NULL; /* strtab id -> op index + 1 */
    size_t nslot = 0;
    for (size_t k = 0; k < n; k++) {
        opprof_key_averages *ka = NULL;
        int rc = opprof_key_averages_new(rt[k].t, NULL, &ka);
        if (rc != OPPROF_OK) {
            free(slot);
            return rc;
        }
        for (size_t i = 0; i < opprof_key_averages_count(ka); i++) {
            opprof_avg_row row;
            opprof_key_averages_row(ka, i, &row);
            if (row.count == 0 || row.device_time_total_ns > row.cpu_time_total_ns) continue; /* device rows */
            uint32_t id = intern_raw(b, row.name, strlen(row.name));
            if (id >= nslot) {
                size_t old = nslot;
                if (op_grow(&slot, &nslot, (size_t)id + 1, sizeof *slot)) {
                    b->oom = 1;
                    break;
                }
                memset(slot + old, 0, (nslot - old) * sizeof *slot);
            }
            if (!slot[id]) {
                if (!room(b, &r->ops, &cap_ops, r->nops, sizeof *r->ops)) break;
                r->ops[r->nops] =
                    (op_op_rec){.name = id, .min_ns = INT64_MAX, .max_ns = INT64_MIN, .min_rank = -1, .max_rank = -1};
                slot[id] = (uint32_t)++r->nops;
            }
            op_op_rec *o = &r->ops[slot[id] - 1];
            int64_t v = row.cpu_time_total_ns;
            o->ranks++;
            o->calls = op_sat_addu(o->calls, row.count, &r->saturated);
            o->sum_ns += (long double)v;
            if (v == INT64_MAX) r->saturated = 1; /* the rank's own key average saturated */
            /* the first rank sets both: a time at the limit is not below the initial INT64_MAX */
            if (o->ranks == 1 || v < o->min_ns) o->min_ns = v, o->min_rank = rt[k].rank;
            if (o->ranks == 1 || v > o->max_ns) o->max_ns = v, o->max_rank = rt[k].rank;
        }
        opprof_key_averages_free(ka);
    }
    free(slot);
    for (size_t i = 0; i < r->nops; i++) { /* between the min and max: it fits */
        op_op_rec *o = &r->ops[i];
        o->mean_ns = o->ranks ? (int64_t)(o->sum_ns / o->ranks) : 0;
    }
    if (r->nops) qsort(r->ops, r->nops, sizeof *r->ops, by_mean_desc);
    return OPPROF_OK;
}

int opprof_ranks_report_new(const opprof_trace *const *traces, size_t n, opprof_ranks_report **out)
{
    if (!out) return op_fail(OPPROF_E_INVAL, "opprof_ranks_report_new: NULL out");
    *out = NULL;
    op_rank_trace *rt;
    int rc = op_ranks_order(traces, n, &rt);
    if (rc != OPPROF_OK) return rc;
    builder b = {0};
    b.r = calloc(1, sizeof *b.r);
    b.scans = calloc(n, sizeof *b.scans);
    if (!b.r || !b.scans || op_strtab_init(&b.r->str) != 0) {
        free(b.r);
        free(b.scans);
        free(rt);
        return op_fail(OPPROF_E_NOMEM, "out of memory");
    }
    opprof_ranks_report *r = b.r;
    r->nranks = n;
    r->ranks = calloc(n, sizeof *r->ranks);
    if (!r->ranks) b.oom = 1;
    if (rt[0].d.backend) r->backend = intern_raw(&b, rt[0].d.backend, strlen(rt[0].d.backend));
    int64_t origin = op_ranks_origin(rt, n);
    for (size_t k = 0; k < n && !b.oom; k++) scan_rank(&b, &rt[k], k, origin);
    if (!b.oom && match_collectives(&b) != 0) b.oom = 1;
    rc = b.oom ? op_fail(OPPROF_E_NOMEM, "out of memory comparing %zu ranks", n) : compare_ops(&b, rt, n);
    if (rc == OPPROF_OK && b.oom) rc = op_fail(OPPROF_E_NOMEM, "out of memory comparing %zu ranks", n);
    for (size_t k = 0; k < n; k++) free(b.scans[k].c);
    free(b.scans);
    free(b.parts);
    free(rt);
    if (rc != OPPROF_OK) {
        opprof_ranks_report_free(r);
        return rc;
    }
    *out = r;
    return OPPROF_OK;
}

void opprof_ranks_report_free(opprof_ranks_report *r)
{
    if (!r) return;
    op_strtab_free(&r->str);
    free(r->ranks);
    free(r->coll);
    free(r->wait);
    free(r->ops);
    free(r);
}

/* The ranks report's accessors and its text and JSON forms. */
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/textesc.h"
#include "ranks/report.h"

size_t opprof_ranks_report_rank_count(const opprof_ranks_report *r)
{
    return r ? r->nranks : 0;
}

int opprof_ranks_report_rank(const opprof_ranks_report *r, size_t i, opprof_rank_stats *out)
{
    if (!r || !out) return op_fail(OPPROF_E_INVAL, "opprof_ranks_report_rank: NULL argument");
    if (i >= r->nranks) return op_fail(OPPROF_E_RANGE, "rank index %zu of %zu", i, r->nranks);
    *out = r->ranks[i];
    return OPPROF_OK;
}

size_t opprof_ranks_report_collective_count(const opprof_ranks_report *r)
{
    return r ? r->ncoll : 0;
}

int opprof_ranks_report_collective(const opprof_ranks_report *r, size_t i, opprof_collective_stats *out)
{
    if (!r || !out) return op_fail(OPPROF_E_INVAL, "opprof_ranks_report_collective: NULL argument");
    if (i >= r->ncoll) return op_fail(OPPROF_E_RANGE, "collective %zu of %zu", i, r->ncoll);
    const op_coll_rec *c = &r->coll[i];
    out->name = op_strtab_get(&r->str, c->name);
    out->collective = op_strtab_get(&r->str, c->coll);
    out->group = op_strtab_get(&r->str, c->group);
    out->seq = c->seq;
    out->bytes = c->bytes;
    out->ranks = c->ranks;
    out->straggler = c->straggler;
    out->first_arrival_ns = c->first;
    out->last_arrival_ns = c->last;
    out->wait_ns = c->wait;
    return OPPROF_OK;
}

int64_t opprof_ranks_report_wait_ns(const opprof_ranks_report *r, size_t i, size_t k)
{
    if (!r || i >= r->ncoll || k >= r->nranks) return -1;
    return r->wait[i * r->nranks + k];
}

size_t opprof_ranks_report_op_count(const opprof_ranks_report *r)
{
    return r ? r->nops : 0;
}

int opprof_ranks_report_op(const opprof_ranks_report *r, size_t i, opprof_rank_op_stats *out)
{
    if (!r || !out) return op_fail(OPPROF_E_INVAL, "opprof_ranks_report_op: NULL argument");
    if (i >= r->nops) return op_fail(OPPROF_E_RANGE, "operator %zu of %zu", i, r->nops);
    const op_op_rec *o = &r->ops[i];
    out->name = op_strtab_get(&r->str, o->name);
    out->ranks = o->ranks;
    out->calls = o->calls;
    out->mean_ns = o->mean_ns;
    out->min_ns = o->min_ns;
    out->max_ns = o->max_ns;
    out->min_rank = o->min_rank;
    out->max_rank = o->max_rank;
    return OPPROF_OK;
}

static double ms(int64_t ns)
{
    return (double)ns / 1e6;
}

static double pct(int64_t part, int64_t whole)
{
    return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

/* Collectives by arrival spread, largest first. */
static int by_spread(const void *x, const void *y, void *ctx)
{
    const opprof_ranks_report *r = ctx;
    const op_coll_rec *a = &r->coll[*(const size_t *)x], *b = &r->coll[*(const size_t *)y];
    int64_t sa = a->last - a->first, sb = b->last - b->first;
    if (sa != sb) return (sa < sb) - (sa > sb);
    return (*(const size_t *)x > *(const size_t *)y) - (*(const size_t *)x < *(const size_t *)y);
}

static void write_text(const opprof_ranks_report *r, FILE *f, int row_limit)
{
    const char *backend = op_strtab_get(&r->str, r->backend);
    fprintf(f, "%zu ranks%s%s%s, times on rank 0's clock\n\n", r->nranks, *backend ? " (" : "", backend,
            *backend ? ")" : "");
    fprintf(f, "Operators across ranks: total time per rank (ms)\n");
    int name_w = 40; /* names are never cut: the column grows to the longest */
    for (size_t i = 0; i < r->nops; i++) {
        const char *name = op_strtab_get(&r->str, r->ops[i].name);
        size_t len = op_text_escape(name, strlen(name), NULL, 0);
        if (len > (size_t)name_w) name_w = len > 4096 ? 4096 : (int)len;
    }
    fprintf(f, "%-*s %6s %10s %12s %12s %12s %12s\n", name_w, "Name", "Ranks", "Calls", "Mean", "Min", "Max",
            "Max/Min");
    for (size_t i = 0; i < r->nops; i++) {
        const op_op_rec *o = &r->ops[i];
        char mn[40], mx[40];
        snprintf(mn, sizeof mn, "%.3f (r%" PRId64 ")", ms(o->min_ns), o->min_rank);
        snprintf(mx, sizeof mx, "%.3f (r%" PRId64 ")", ms(o->max_ns), o->max_rank);
        const char *name = op_strtab_get(&r->str, o->name);
        size_t nlen = strlen(name);
        char *owned; /* escaped (common/textesc.h) and never cut */
        const char *shown = op_text_shown(name, nlen, &owned);
        fprintf(f, "%-*s %6u %10" PRIu64 " %12.3f %12s %12s %12.2f\n", name_w, shown ? shown : name,
                o->ranks, o->calls, ms(o->mean_ns), mn, mx,
                o->min_ns > 0 ? (double)o->max_ns / (double)o->min_ns : 0.0);
        free(owned);
    }
    fprintf(f, "\nRanks (ms)\n");
    fprintf(f, "%5s %10s %10s %10s %10s %9s %10s %12s %11s %14s\n", "Rank", "Span", "Comm", "Compute", "Overlap",
            "Overlap%", "Wait", "Collectives", "Straggler", "Clock offset");
    for (size_t k = 0; k < r->nranks; k++) {
        const opprof_rank_stats *s = &r->ranks[k];
        char off[48];
        snprintf(off, sizeof off, "%+.1f+-%.1f us", (double)s->clock_offset_ns / 1e3,
                 (double)s->clock_uncertainty_ns / 1e3);
        fprintf(f, "%5" PRId64 " %10.3f %10.3f %10.3f %10.3f %8.1f%% %10.3f %12" PRIu64 " %11" PRIu64 " %14s\n",
                s->rank, ms(s->span_ns), ms(s->comm_ns), ms(s->compute_ns), ms(s->overlap_ns),
                pct(s->overlap_ns, s->comm_ns), ms(s->wait_ns), s->collectives, s->straggler_count, off);
    }
    size_t *order = malloc((r->ncoll ? r->ncoll : 1) * sizeof *order);
    if (!order) return;
    for (size_t i = 0; i < r->ncoll; i++) order[i] = i;
    if (r->ncoll) qsort_r(order, r->ncoll, sizeof *order, by_spread, (void *)r);
    size_t shown = row_limit < 0 || (size_t)row_limit > r->ncoll ? r->ncoll : (size_t)row_limit;
    fprintf(f, "\nCollectives: %zu matched; the %zu with the largest arrival spread (ms)\n", r->ncoll, shown);
    fprintf(f, "%-8s %6s %-26s %12s %9s %10s  %s\n", "Group", "Seq", "Name", "Bytes", "Straggler", "Spread",
            "Wait per rank");
    for (size_t n = 0; n < shown; n++) {
        const op_coll_rec *c = &r->coll[order[n]];
        char grp[64], name[128];
        const char *gs = op_strtab_get(&r->str, c->group), *ns = op_strtab_get(&r->str, c->name);
        op_text_escape(gs, strlen(gs), grp, sizeof grp);
        op_text_escape(ns, strlen(ns), name, sizeof name);
        fprintf(f, "%-8.8s %6" PRId64 " %-26.26s %12" PRId64 " %9" PRId64 " %10.3f ",
                grp, c->seq, name, c->bytes, c->straggler,
                ms(c->last - c->first));
        for (size_t k = 0; k < r->nranks; k++) {
            int64_t w = r->wait[order[n] * r->nranks + k];
            if (w >= 0) fprintf(f, " r%" PRId64 ":%.3f", r->ranks[k].rank, ms(w));
        }
        fputc('\n', f);
    }
    free(order);
    if (r->saturated) fprintf(f, "\nSaturated: some sums passed the 64-bit range and are shown at its limit\n");
}

static void write_json(const opprof_ranks_report *r, FILE *f)
{
    fprintf(f, "{\"backend\": ");
    op_fput_json_string(f, op_strtab_get(&r->str, r->backend));
    fprintf(f, ",\n \"ranks\": [");
    for (size_t k = 0; k < r->nranks; k++) {
        const opprof_rank_stats *s = &r->ranks[k];
        fprintf(f,
                "%s\n  {\"rank\": %" PRId64 ", \"span_ns\": %" PRId64 ", \"comm_ns\": %" PRId64
                ", \"compute_ns\": %" PRId64 ", \"overlap_ns\": %" PRId64 ", \"wait_ns\": %" PRId64
                ", \"collectives\": %" PRIu64 ", \"straggler_count\": %" PRIu64 ", \"clock_offset_ns\": %" PRId64
                ", \"clock_uncertainty_ns\": %" PRId64 "}",
                k ? "," : "", s->rank, s->span_ns, s->comm_ns, s->compute_ns, s->overlap_ns, s->wait_ns,
                s->collectives, s->straggler_count, s->clock_offset_ns, s->clock_uncertainty_ns);
    }
    fprintf(f, "],\n \"operators\": [");
    for (size_t i = 0; i < r->nops; i++) {
        opprof_rank_op_stats o;
        opprof_ranks_report_op(r, i, &o);
        fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
        op_fput_json_string(f, o.name);
        fprintf(f,
                ", \"ranks\": %u, \"calls\": %" PRIu64 ", \"mean_ns\": %" PRId64 ", \"min_ns\": %" PRId64
                ", \"min_rank\": %" PRId64 ", \"max_ns\": %" PRId64 ", \"max_rank\": %" PRId64 "}",
                o.ranks, o.calls, o.mean_ns, o.min_ns, o.min_rank, o.max_ns, o.max_rank);
    }
    fprintf(f, "],\n \"collectives\": [");
    for (size_t i = 0; i < r->ncoll; i++) {
        opprof_collective_stats c;
        opprof_ranks_report_collective(r, i, &c);
        fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
        op_fput_json_string(f, c.name);
        fprintf(f, ", \"collective\": ");
        op_fput_json_string(f, c.collective);
        fprintf(f, ", \"group\": ");
        op_fput_json_string(f, c.group);
        fprintf(f,
                ", \"seq\": %" PRId64 ", \"bytes\": %" PRId64 ", \"ranks\": %u, \"straggler\": %" PRId64
                ", \"first_arrival_ns\": %" PRId64 ", \"last_arrival_ns\": %" PRId64 ", \"wait_ns\": {",
                c.seq, c.bytes, c.ranks, c.straggler, c.first_arrival_ns, c.last_arrival_ns);
        int first = 1;
        for (size_t k = 0; k < r->nranks; k++) {
            int64_t w = r->wait[i * r->nranks + k];
            if (w < 0) continue;
            fprintf(f, "%s\"%" PRId64 "\": %" PRId64, first ? "" : ", ", r->ranks[k].rank, w);
            first = 0;
        }
        fprintf(f, "}}");
    }
    fprintf(f, "]%s\n}\n", r->saturated ? ",\n \"saturated\": true" : "");
}

int opprof_ranks_report_write(const opprof_ranks_report *r, FILE *f, int format, int row_limit)
{
    if (!r || !f) return op_fail(OPPROF_E_INVAL, "opprof_ranks_report_write: NULL argument");
    if (format != OPPROF_FORMAT_JSON && format != OPPROF_FORMAT_TEXT)
        return op_fail(OPPROF_E_INVAL, "unknown report format %d (OPPROF_FORMAT_TEXT or OPPROF_FORMAT_JSON)", format);
    errno = 0;
    if (format == OPPROF_FORMAT_JSON) write_json(r, f);
    else write_text(r, f, row_limit);
    /* Flushed here so that a full disk is reported with its reason, not
     * found later by a caller who no longer knows what was being written. */
    if (fflush(f) != 0 || ferror(f))
        return op_fail(OPPROF_E_IO, "cannot write the ranks report%s%s", errno ? ": " : "", errno ? strerror(errno) : "");
    return OPPROF_OK;
}

/* export_stacks: flame-graph input in the "folded" (collapsed) format that
 * FlameGraph's flamegraph.pl and speedscope read: one line per event,
 *
 *     root_frame;...;innermost_frame;op_name VALUE
 *
 * with PyTorch's rules (torch.autograd.profiler_util.EventList.export_stacks):
 * frames root first, joined by ';'; in each frame ' ', ';', tab and newline
 * become '_'; the value is the metric in microseconds truncated to an
 * integer, and lines whose value is not positive are left out. Two
 * differences: the operator's name ends the line, so that the flame graph's
 * leaves are operators (PyTorch stops at the calling line); and each
 * distinct stack is one line (in order of first appearance) whose value is
 * its events' exact nanoseconds added up, then truncated to microseconds
 * once. PyTorch writes a line per event, each truncated, so that a stack
 * of many sub-microsecond events vanishes from the flame graph. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/textesc.h"
#include "common/vec.h"
#include "export/stacksum.h"
#include "model/model.h"

enum { METRIC_SELF_CPU, METRIC_SELF_DEVICE };

static const char *const k_metrics[] = {"self_cpu_time_total", "self_cuda_time_total", "self_device_time_total"};
static const int k_metric_kind[] = {METRIC_SELF_CPU, METRIC_SELF_DEVICE, METRIC_SELF_DEVICE};

static int parse_metric(const char *metric, int *kind)
{
    if (!metric) metric = k_metrics[0];
    for (size_t i = 0; i < sizeof k_metrics / sizeof *k_metrics; i++) {
        if (!strcmp(metric, k_metrics[i])) {
            *kind = k_metric_kind[i];
            return OPPROF_OK;
        }
    }
    return op_fail(OPPROF_E_INVAL, "export_stacks: unknown metric '%s'; valid: self_cpu_time_total, "
                   "self_cuda_time_total, self_device_time_total", metric);
}

/* Appends s with the separators of the format (space, ';', tab, line
 * break) replaced by '_' and the other control characters escaped
 * (common/textesc.h): a folded file is text that people read. */
static int put_frame(op_buf *b, const char *s)
{
    size_t n = strlen(s);
    char *esc = NULL;
    if (op_text_needs_escape(s, n)) {
        /* tab and line break are separators here: '_' as before, not escaped */
        char *plain = malloc(n + 1);
        if (!plain) return -1;
        for (size_t i = 0; i <= n; i++) plain[i] = s[i] == '\t' || s[i] == '\n' ? '_' : s[i];
        s = op_text_shown(plain, n, &esc);
        if (esc != NULL || !s) free(plain);
        else esc = plain; /* nothing else to escape: plain is what is shown */
        if (!s) return -1;
        n = strlen(s);
    }
    int rc = op_buf_reserve(b, n + 1);
    for (size_t i = 0; rc == 0 && i < n; i++) b->p[b->n++] = s[i] == ' ' || s[i] == ';' ? '_' : s[i];
    free(esc);
    return rc;
}

static int64_t metric_ns(const opprof_trace *t, const op_event *e, int kind)
{
    return kind == METRIC_SELF_CPU ? e->self_ns : op_evx_of(t, e)->dev_self_ns;
}

/* A stack's frames, root first, then the operator's name. */
static int line_of_stack(op_buf *b, const opprof_trace *t, uint32_t stack, uint32_t name)
{
    const op_stack *st = &t->stacks[stack - 1];
    for (uint32_t k = st->nframes; k-- > 0;)
        if (put_frame(b, op_strtab_get(&t->str, st->frames[k])) != 0 || op_buf_putc(b, ';') != 0) return -1;
    return put_frame(b, op_strtab_get(&t->str, name));
}

/* The captured call stack, root first, then the operator. */
static int line_calls(op_buf *b, const opprof_trace *t, const op_event *e)
{
    return line_of_stack(b, t, op_evx_of(t, e)->stack, e->name);
}

/* The enclosing operators, outermost first, then the operator. */
static int line_operators(op_buf *b, const opprof_trace *t, size_t i, int32_t **chain, size_t *cap)
{
    size_t n = 0;
    for (int64_t j = (int64_t)i; j >= 0; j = t->ev[j].parent) {
        if (op_grow(chain, cap, n + 1, sizeof **chain)) return -1;
        (*chain)[n++] = (int32_t)j;
    }
    while (n-- > 0) {
        if (put_frame(b, op_strtab_get(&t->str, t->ev[(*chain)[n]].name)) != 0) return -1;
        if (n && op_buf_putc(b, ';') != 0) return -1;
    }
    return 0;
}

/* A trace of sums (opprof_config.aggregate): a row per key, whose stack is
 * the captured one (with_stack) or the enclosing call path
 * (OPPROF_AGGREGATE_PATHS); its self time, exact, added up per line. Sums
 * hold no device time. */
static int sum_rows(const opprof_trace *t, int kind, op_stacksum *sum)
{
    op_buf line = {0};
    int rc = 0;
    for (size_t i = 0; i < t->nagg && rc == 0; i++) {
        const op_aggrow *r = &t->agg[i];
        if (kind != METRIC_SELF_CPU || r->self_ns <= 0 || r->stack > t->nstacks || !op_cat_is_host(r->cat)) continue;
        line.n = 0;
        rc = r->stack ? line_of_stack(&line, t, r->stack, r->name) : put_frame(&line, op_strtab_get(&t->str, r->name));
        if (rc == 0) rc = op_stacksum_add(sum, line.p, line.n, r->self_ns);
    }
    op_buf_free(&line);
    return rc;
}

/* Every event's exact nanoseconds, added up per line. */
static int sum_lines(const opprof_trace *t, int kind, int frames, op_stacksum *sum)
{
    if (!t->nev && t->nagg) return sum_rows(t, kind, sum);
    int32_t *chain = NULL;
    size_t cap = 0;
    op_buf line = {0};
    int rc = 0;
    for (size_t i = 0; i < t->nev && rc == 0; i++) {
        const op_event *e = &t->ev[i];
        uint32_t stack = op_evx_of(t, e)->stack;
        if (frames == OPPROF_STACKS_CALLS ? !stack || stack > t->nstacks : !op_cat_is_host(e->cat)) continue;
        int64_t ns = metric_ns(t, e, kind);
        if (ns <= 0) continue;
        line.n = 0;
        rc = frames == OPPROF_STACKS_CALLS ? line_calls(&line, t, e) : line_operators(&line, t, i, &chain, &cap);
        if (rc == 0) rc = op_stacksum_add(sum, line.p, line.n, ns);
    }
    free(chain);
    op_buf_free(&line);
    return rc;
}

int opprof_write_stacks(const opprof_trace *t, FILE *f, const char *metric, int frames)
{
    if (op_trace_check(t, "export_stacks")) return OPPROF_E_INVAL;
    if (!t || !f) return op_fail(OPPROF_E_INVAL, "export_stacks: NULL argument");
    if (frames != OPPROF_STACKS_CALLS && frames != OPPROF_STACKS_OPERATORS)
        return op_fail(OPPROF_E_INVAL, "export_stacks: frames must be OPPROF_STACKS_CALLS or OPPROF_STACKS_OPERATORS");
    if (!t->finished) return op_fail(OPPROF_E_INVAL, "export_stacks: the trace is not finished");
    if (!t->nev && t->nagg) { /* sums: their stacks are of one kind */
        int have = frames == OPPROF_STACKS_CALLS ? (t->options & OP_TRACE_STACK) != 0 : (t->options & OP_TRACE_PATHS) != 0;
        if (!have)
            return op_fail(OPPROF_E_INVAL, "export_stacks: a trace of sums has %s only with %s",
                           frames == OPPROF_STACKS_CALLS ? "call stacks" : "a call tree",
                           frames == OPPROF_STACKS_CALLS ? "with_stack" : "aggregate = OPPROF_AGGREGATE_PATHS");
    }
    int kind;
    int rc = parse_metric(metric, &kind);
    if (rc != OPPROF_OK) return rc;
    op_stacksum sum = {0};
    if (sum_lines(t, kind, frames, &sum) != 0) {
        op_stacksum_free(&sum);
        return op_fail(OPPROF_E_NOMEM, "export_stacks: out of memory");
    }
    for (size_t i = 0; i < sum.n; i++) {
        int64_t us = sum.lines[i].ns / 1000; /* Python's int(): toward zero */
        if (us <= 0) continue;
        fwrite(sum.text.p + sum.lines[i].off, 1, sum.lines[i].len, f);
        fprintf(f, " %" PRId64 "\n", us);
    }
    op_stacksum_free(&sum);
    if (ferror(f)) return op_fail(OPPROF_E_IO, "export_stacks: write failed: %s", strerror(errno));
    return OPPROF_OK;
}

typedef struct stacks_job {
    const opprof_trace *t;
    const char *metric;
} stacks_job;

static int write_job(FILE *f, void *ctx)
{
    const stacks_job *j = ctx;
    return opprof_write_stacks(j->t, f, j->metric, OPPROF_STACKS_CALLS);
}

int opprof_export_stacks(const opprof_trace *t, const char *path, const char *metric)
{
    if (op_trace_check(t, "export_stacks")) return OPPROF_E_INVAL;
    if (!t || !path) return op_fail(OPPROF_E_INVAL, "export_stacks: NULL argument");
    int kind;
    int rc = parse_metric(metric, &kind);
    if (rc != OPPROF_OK) return rc;
    stacks_job j = {t, metric};
    rc = opprof_write_file(path, write_job, &j);
    if (rc == OPPROF_OK) op_clear_error();
    return rc;
}

/* Samples by function (opprof_trace_functions): a trace of sums whose rows
 * are functions and their callers, so key averages, tables, group_by_stack
 * and folded stacks read samples as they read an aggregating session. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/map.h"
#include "common/vec.h"
#include "model/collect_agg.h"
#include "model/model.h"

/* Does thread th pass the filter (comma-separated ids or name patterns)? */
static int thread_selected(const opprof_trace *t, uint32_t th, const char *threads)
{
    if (!threads || !*threads) return 1;
    const op_thread *ot = &t->threads[th];
    const char *name = op_strtab_get(&t->str, ot->name);
    char item[256];
    for (const char *p = threads; *p;) {
        size_t n = strcspn(p, ",");
        snprintf(item, sizeof item, "%.*s", (int)(n < sizeof item ? n : sizeof item - 1), p);
        char *end;
        long long id = strtoll(item, &end, 10);
        if (*item && !*end ? id == ot->tid : fnmatch(item, name, 0) == 0) return 1;
        p += n;
        if (*p == ',') p++;
    }
    return 0;
}

/* The function a frame's text names ("FILE(LINE): FUNC", "MODULE: FUNC",
 * "MODULE(+0xOFF): ??"): FUNC, or "?? (MODULE)" without a symbol. */
static uint32_t function_of(opprof_trace *o, const char *frame)
{
    const char *sep = strstr(frame, ": ");
    if (!sep) return op_trace_intern(o, frame, strlen(frame));
    const char *fn = sep + 2;
    if (strcmp(fn, "??") != 0) return op_trace_intern(o, fn, strlen(fn));
    if (frame[0] == '0' && frame[1] == 'x') return op_trace_intern(o, "?? (no module: JIT code)", 24);
    size_t mlen = (size_t)(sep - frame);
    const char *paren = memchr(frame, '(', mlen);
    if (paren) mlen = (size_t)(paren - frame);
    char buf[600];
    int n = snprintf(buf, sizeof buf, "?? (%.*s)", (int)(mlen < 500 ? mlen : 500), frame);
    return op_trace_intern(o, buf, (size_t)n);
}

typedef struct view {
    const opprof_trace *t;
    opprof_trace *o;
    op_map rows;       /* name << 32 | callers' stack -> row index + 1 */
    op_strtab seqs;    /* callers' sequences -> seq id */
    uint32_t *seq_stack; /* seq id -> stack of o (index + 1) */
    size_t cap_seq;
} view;

/* o's stack (index + 1) of callers f[0..n), innermost first; 0 for none,
 * UINT32_MAX when out of memory. */
static uint32_t callers_stack(view *v, const uint32_t *f, size_t n)
{
    if (!n) return 0;
    uint32_t seq = op_strtab_intern(&v->seqs, (const char *)f, n * sizeof *f);
    if (seq == UINT32_MAX) return UINT32_MAX;
    if (seq >= v->cap_seq) {
        size_t old = v->cap_seq;
        if (op_grow(&v->seq_stack, &v->cap_seq, (size_t)seq + 1, sizeof *v->seq_stack)) return UINT32_MAX;
        memset(v->seq_stack + old, 0, (v->cap_seq - old) * sizeof *v->seq_stack);
    }
    if (!v->seq_stack[seq] && !(v->seq_stack[seq] = op_trace_add_stack(v->o, f, (uint32_t)n))) return UINT32_MAX;
    return v->seq_stack[seq];
}

/* The rows of one stack of t seen c periods' worth standing for ns of CPU
 * time, first at first_ns. */
static int add_stack(view *v, const op_stack *st, uint64_t c, int64_t ns, int64_t first_ns)
{
    uint32_t *f = malloc((st->nframes ? st->nframes : 1) * sizeof *f);
    if (!f) return -1;
    size_t n = 0;
    for (uint32_t i = 0; i < st->nframes; i++) {
        uint32_t id = function_of(v->o, op_strtab_get(&v->t->str, st->frames[i]));
        if (id == UINT32_MAX) {
            free(f);
            return -1;
        }
        f[n++] = id;
    }
    for (size_t i = 0; i < n; i++) {
        int again = 0; /* recursion: a function counts once per sample */
        for (size_t j = 0; j < i && !again; j++) again = f[j] == f[i];
        if (again) continue;
        uint32_t callers = callers_stack(v, f + i + 1, n - i - 1);
        int added;
        uint64_t *slot = callers == UINT32_MAX ? NULL : op_map_at(&v->rows, (uint64_t)f[i] << 32 | callers, &added);
        if (!slot) {
            free(f);
            return -1;
        }
        op_aggrow *r;
        if (added) {
            if (!(r = op_trace_add_agg(v->o))) {
                free(f);
                return -1;
            }
            *slot = v->o->nagg;
            r->name = f[i];
            r->stack = callers;
            r->cat = OPPROF_CAT_CPU_OP;
            r->first_start_ns = first_ns;
            r->first_end_ns = first_ns + v->t->sample_period_ns;
        }
        r = &v->o->agg[*slot - 1];
        r->count += c;
        r->total_ns += ns;
        if (i == 0) r->self_ns += ns;
        if (first_ns < r->first_start_ns) {
            r->first_start_ns = first_ns;
            r->first_end_ns = first_ns + v->t->sample_period_ns;
        }
    }
    free(f);
    return 0;
}

/* Was sample s taken inside a range named within (id, any depth)? */
static int inside(const opprof_trace *t, const op_sample *s, uint32_t within)
{
    for (int32_t i = s->ev; i >= 0 && (size_t)i < t->nev; i = t->ev[i].parent)
        if (t->ev[i].name == within) return 1;
    return 0;
}

static int build(view *v, const char *threads, const char *within)
{
    const opprof_trace *t = v->t;
    uint32_t wid = within ? op_strtab_find(&t->str, within, strlen(within)) : 0;
    uint64_t *count = calloc(t->nstacks + 1, sizeof *count);
    int64_t *ns = calloc(t->nstacks + 1, sizeof *ns);
    int64_t *first = malloc((t->nstacks + 1) * sizeof *first);
    uint8_t *pick = calloc(t->nthreads + 1, 1);
    int rc = count && ns && first && pick ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < t->nthreads; i++) pick[i] = (uint8_t)thread_selected(t, (uint32_t)i, threads);
    for (size_t i = 0; rc == 0 && i < t->nsamples; i++) {
        const op_sample *s = &t->samples[i];
        if (!s->stack || s->stack > t->nstacks || !pick[s->thread]) continue;
        if (within && (wid == UINT32_MAX || !inside(t, s, wid))) continue;
        if (!count[s->stack] || s->ts_ns < first[s->stack]) first[s->stack] = s->ts_ns;
        count[s->stack] += s->weight;
        ns[s->stack] += op_sample_ns(s, t->sample_period_ns);
    }
    for (size_t k = 1; rc == 0 && k <= t->nstacks; k++)
        if (count[k]) rc = add_stack(v, &t->stacks[k - 1], count[k], ns[k], first[k]);
    free(count);
    free(ns);
    free(first);
    free(pick);
    return rc;
}

int opprof_trace_functions(const opprof_trace *t0, const char *threads, const char *within, opprof_trace **out)
{
    if (out) *out = NULL;
    if (op_trace_check(t0, "opprof_trace_functions")) return OPPROF_E_INVAL;
    const opprof_trace *t = op_trace_model(t0);
    if (!t || !out) return op_fail(OPPROF_E_INVAL, "opprof_trace_functions: NULL argument");
    if (!t->sample_period_ns)
        return op_fail(OPPROF_E_INVAL, "opprof_trace_functions: the trace was not sampled (opprof_config.sample_hz, "
                                       "opprof exec --sample)");
    view v = {.t = t, .o = op_trace_new()};
    int rc = v.o && op_strtab_init(&v.seqs) == 0 ? build(&v, threads, within) : -1;
    if (v.o) op_strtab_free(&v.seqs);
    op_map_free(&v.rows);
    free(v.seq_stack);
    if (rc == 0) {
        opprof_trace *o = v.o;
        o->options = OP_TRACE_STACK | (t->options & OP_TRACE_INCOMPLETE);
        o->sample_period_ns = t->sample_period_ns;
        o->samples_dropped = t->samples_dropped;
        o->sample_signal_lost = t->sample_signal_lost;
        o->base_time_ns = t->base_time_ns;
        o->duration_ns = t->duration_ns;
        o->step_num = t->step_num;
        op_collect_agg_sort(o);
        if (op_trace_finish(o) == OPPROF_OK) {
            *out = o;
            return OPPROF_OK;
        }
    }
    opprof_trace_free(v.o);
    return op_fail(OPPROF_E_NOMEM, "opprof_trace_functions: out of memory");
}

size_t opprof_trace_sample_count(const opprof_trace *t)
{
    t = op_trace_model(t);
    return t ? t->nsamples : 0;
}

int64_t opprof_trace_sample_period_ns(const opprof_trace *t)
{
    t = op_trace_model(t);
    return t ? t->sample_period_ns : 0;
}

int opprof_trace_sample_note(const opprof_trace *t, const char *who, FILE *f)
{
    t = op_trace_model(t);
    if (!t || !f) return OPPROF_OK;
    if (!who) who = "opprof";
    int bad = 0;
    if (t->samples_dropped)
        bad |= fprintf(f, "%s: %llu samples were not kept (a thread's sample buffer was full, or past 4096 threads)\n",
                       who, (unsigned long long)t->samples_dropped) < 0;
    if (t->samples_skipped)
        bad |= fprintf(f, "%s: %llu sample events of the file (sampled stacks) were read past: the tables are "
                          "of its ranges\n",
                       who, (unsigned long long)t->samples_skipped) < 0;
    if (t->sample_signal_lost)
        bad |= fprintf(f, "%s: the program installed its own handler for signal %d, which sampling used: sampling "
                          "stopped there (OPPROF_SAMPLE_SIGNAL picks another)\n",
                       who, t->sample_signal_lost) < 0;
    return bad ? op_fail(OPPROF_E_IO, "sample note: cannot write") : OPPROF_OK;
}

/* A sampled trace's samples in a .pftrace (pftrace.h: op_pf_write_samples):
 * PerfSample packets, as Perfetto's own perf data source writes them, on a
 * sequence of their own, so that Perfetto's UI shows them as the threads'
 * CPU samples with a flame graph.
 *
 * What Perfetto's schema asks: a sample names its callstack by an iid
 * interned on its sequence; a callstack is frame iids, outermost first; a
 * frame a function name (interned string), a mapping and, where known, a
 * source file and line; a mapping its path (interned strings). The model
 * keeps frames as the symbolizer's text, not addresses: a frame's iid is
 * its text's string id + 1; function names, source files and modules (a
 * mapping and its path) are interned once per distinct text; the mapping
 * is the frame's module ("[unknown module]" for a frame with a source line,
 * whose module the text does not keep); a callstack's iid is its model
 * stack's index + 1. Each is interned with the first sample that uses it. Times are deltas on the sequence's incremental clock, in time
 * order across threads; timebase_count is the CPU time (ns) the sample
 * stands for, as for perf's cpu-clock event. */
#include <stdlib.h>
#include <string.h>

#include "common/pfschema.h"
#include "common/vec.h"
#include "export/pftrace.h"
#include "export/samples.h"

#define PF_UUID_SAMPLED_THREAD(k) (0x5000000000000000ull + (uint64_t)(k))
#define NO_MODULE "[unknown module]"

typedef struct sorted {
    int64_t ts;
    uint32_t i;
} sorted;

static int by_time(const void *a, const void *b)
{
    const sorted *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static void interned_str(op_pbw *in, uint32_t field, uint64_t iid, const char *s, size_t n)
{
    op_pbw_begin(in, field);
    op_pbw_uint(in, PF_IN_IID, iid);
    op_pbw_bytes(in, PF_IN_NAME, s, n);
    op_pbw_end(in);
}

/* What the frames name, each interned once: function names, modules
 * (a mapping and its path, of one iid) and source files, by their text. */
typedef struct names {
    op_strtab text;
    uint8_t *done; /* by text id: NAME_* bits interned */
    size_t cap;
} names;

enum { NAME_FN = 1, NAME_MAP = 2, NAME_SRC = 4 };

/* The iid of text s as `kind`, interned into in when new; 0 out of memory. */
static uint64_t name_iid(names *nm, op_pbw *in, int kind, const char *s, size_t n)
{
    uint32_t id = op_strtab_intern(&nm->text, s, n);
    if (id == UINT32_MAX) return 0;
    if (id >= nm->cap) {
        size_t old = nm->cap;
        if (op_grow(&nm->done, &nm->cap, (size_t)id + 1, 1)) return 0;
        memset(nm->done + old, 0, nm->cap - old);
    }
    uint64_t iid = (uint64_t)id + 1;
    if (!(nm->done[id] & kind)) {
        nm->done[id] |= (uint8_t)kind;
        if (kind == NAME_FN) {
            interned_str(in, PF_ID_FUNCTION_NAMES, iid, s, n);
        } else if (kind == NAME_SRC) {
            interned_str(in, PF_ID_SOURCE_PATHS, iid, s, n);
        } else {
            interned_str(in, PF_ID_MAPPING_PATHS, iid, s, n);
            op_pbw_begin(in, PF_ID_MAPPINGS);
            op_pbw_uint(in, PF_IN_IID, iid);
            op_pbw_uint(in, PF_MAP_PATH_STRING_IDS, iid);
            op_pbw_end(in);
        }
    }
    return iid;
}

/* Frame of string id `id` into in, with its function name, mapping and
 * source file. -1 out of memory. */
static int intern_frame(const opprof_trace *t, op_pbw *in, names *nm, uint32_t id)
{
    op_frame_text f;
    op_frame_text_parse(op_strtab_get(&t->str, id), op_strtab_len(&t->str, id), &f);
    uint64_t fn = name_iid(nm, in, NAME_FN, f.fn, f.fn_len);
    uint64_t map = f.where_len && f.line <= 0 ? name_iid(nm, in, NAME_MAP, f.where, f.where_len)
                                              : name_iid(nm, in, NAME_MAP, NO_MODULE, sizeof NO_MODULE - 1);
    uint64_t src = f.line > 0 ? name_iid(nm, in, NAME_SRC, f.where, f.where_len) : 1;
    if (!fn || !map || !src) return -1;
    op_pbw_begin(in, PF_ID_FRAMES);
    op_pbw_uint(in, PF_IN_IID, (uint64_t)id + 1);
    op_pbw_uint(in, PF_FR_FUNCTION_NAME_ID, fn);
    op_pbw_uint(in, PF_FR_MAPPING_ID, map);
    if (f.line > 0) {
        op_pbw_uint(in, PF_FR_SOURCE_PATH_IID, src);
        op_pbw_uint(in, PF_FR_LINE_NUMBER, (uint64_t)f.line);
    }
    op_pbw_end(in);
    return 0;
}

/* Model stack k (index + 1) as a callstack, its frames interned first. */
static int intern_stack(const opprof_trace *t, op_pbw *in, uint32_t k, uint8_t *frame_done, names *nm)
{
    const op_stack *st = &t->stacks[k - 1];
    for (uint32_t i = 0; i < st->nframes; i++) {
        uint32_t id = st->frames[i];
        if (frame_done[id]) continue;
        frame_done[id] = 1;
        if (intern_frame(t, in, nm, id)) return -1;
    }
    op_pbw_begin(in, PF_ID_CALLSTACKS);
    op_pbw_uint(in, PF_IN_IID, k);
    for (uint32_t i = st->nframes; i-- > 0;) op_pbw_uint(in, PF_CALLSTACK_FRAME_IDS, (uint64_t)st->frames[i] + 1);
    op_pbw_end(in);
    return 0;
}

/* A thread descriptor for each sampled thread. */
static int describe_threads(pf_writer *pw, const opprof_trace *t, const uint8_t *sampled)
{
    op_pbw *p = &pw->pkt;
    for (size_t k = 0; k < t->nthreads; k++) {
        if (!sampled[k]) continue;
        const op_thread *th = &t->threads[k];
        op_pbw_uint(p, PF_PKT_SEQUENCE_ID, PF_SEQ_SAMPLES);
        op_pbw_begin(p, PF_PKT_TRACK_DESCRIPTOR);
        op_pbw_uint(p, PF_TD_UUID, PF_UUID_SAMPLED_THREAD(k));
        op_pbw_begin(p, PF_TD_THREAD);
        op_pbw_int(p, PF_THD_PID, th->pid);
        op_pbw_int(p, PF_THD_TID, th->tid);
        if (th->name && op_strtab_len(&t->str, th->name))
            op_pbw_bytes(p, PF_THD_NAME, op_strtab_get(&t->str, th->name), op_strtab_len(&t->str, th->name));
        op_pbw_end(p);
        op_pbw_end(p);
        if (op_pf_emit(pw) != 0) return -1;
    }
    return 0;
}

int op_pf_write_samples(pf_writer *pw, const opprof_trace *t, int describe)
{
    if (!t || !t->nsamples) return 0;
    sorted *order = malloc(t->nsamples * sizeof *order);
    uint8_t *frame_done = calloc(t->str.count ? t->str.count : 1, 1);
    uint8_t *stack_done = calloc(t->nstacks + 1, 1);
    uint8_t *sampled = calloc(t->nthreads ? t->nthreads : 1, 1);
    names nm;
    memset(&nm, 0, sizeof nm);
    int rc = order && frame_done && stack_done && sampled && t->nsamples <= UINT32_MAX && !op_strtab_init(&nm.text)
                 ? 0
                 : -1;
    int nm_ready = rc == 0;
    for (size_t i = 0; rc == 0 && i < t->nsamples; i++) {
        order[i].ts = t->samples[i].ts_ns;
        order[i].i = (uint32_t)i;
        if (t->samples[i].thread < t->nthreads) sampled[t->samples[i].thread] = 1;
    }
    if (rc == 0) qsort(order, t->nsamples, sizeof *order, by_time);
    if (rc == 0 && describe) rc = describe_threads(pw, t, sampled);
    op_pbw *p = &pw->pkt;
    uint64_t last = 0;
    if (rc == 0) {
        /* The sequence's first packet: state cleared, its clock. */
        last = (uint64_t)pw->base_ns + (uint64_t)order[0].ts;
        op_pbw_uint(p, PF_PKT_SEQUENCE_ID, PF_SEQ_SAMPLES);
        op_pbw_uint(p, PF_PKT_SEQUENCE_FLAGS, PF_SEQ_INCREMENTAL_STATE_CLEARED);
        op_pf_put_clocks(pw, last);
        op_pbw_begin(p, PF_PKT_DEFAULTS);
        op_pbw_uint(p, PF_DEF_CLOCK_ID, PF_CLOCK_SEQ_FIRST);
        op_pbw_end(p);
        rc = op_pf_emit(pw);
    }
    for (size_t i = 0; rc == 0 && i < t->nsamples; i++) {
        const op_sample *s = &t->samples[order[i].i];
        if (s->thread >= t->nthreads) continue;
        const op_thread *th = &t->threads[s->thread];
        uint64_t ts = (uint64_t)pw->base_ns + (uint64_t)s->ts_ns;
        if (ts < last) ts = last;
        uint32_t k = s->stack <= t->nstacks ? s->stack : 0;
        op_pbw_uint(p, PF_PKT_TIMESTAMP, ts - last);
        last = ts;
        if (k && !stack_done[k]) {
            stack_done[k] = 1;
            op_pbw_reset(&pw->in);
            if (intern_stack(t, &pw->in, k, frame_done, &nm) || pw->in.out.failed) {
                rc = -1;
                break;
            }
            op_pbw_bytes(p, PF_PKT_INTERNED_DATA, pw->in.out.p, pw->in.out.n);
            op_pbw_reset(&pw->in);
        }
        op_pbw_begin(p, PF_PKT_PERF_SAMPLE);
        op_pbw_uint(p, PF_PS_PID, (uint64_t)(uint32_t)th->pid);
        op_pbw_uint(p, PF_PS_TID, (uint64_t)(uint32_t)th->tid);
        if (k) op_pbw_uint(p, PF_PS_CALLSTACK_IID, k);
        op_pbw_uint(p, PF_PS_CPU_MODE, PF_CPU_MODE_USER);
        op_pbw_uint(p, PF_PS_TIMEBASE_COUNT, (uint64_t)op_sample_ns(s, t->sample_period_ns));
        op_pbw_end(p);
        op_pbw_uint(p, PF_PKT_SEQUENCE_ID, PF_SEQ_SAMPLES);
        op_pbw_uint(p, PF_PKT_SEQUENCE_FLAGS, PF_SEQ_NEEDS_INCREMENTAL_STATE);
        rc = op_pf_emit(pw);
    }
    if (nm_ready) op_strtab_free(&nm.text);
    free(nm.done);
    free(order);
    free(frame_done);
    free(stack_done);
    free(sampled);
    return rc;
}

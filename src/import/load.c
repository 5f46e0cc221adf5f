/* The public entry points of the trace reader: walk the document (a
 * top-level array of events, or an object whose "traceEvents" holds them),
 * hand each event to the mapping, then finish the model. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/pfschema.h"
#include "common/satmath.h"
#include "import/import.h"
#include "import/number.h"
#include "import/pftrace.h"

static int read_events(op_importer *im)
{
    for (;;) {
        op_jtok t = op_json_next(&im->j);
        if (t == OP_JT_ARR_END) return 0;
        if (t == OP_JT_ERROR) return -1;
        if (t != OP_JT_OBJ_BEGIN) {
            op_json_fail(&im->j, OPPROF_E_PARSE, im->j.off, "an event is not an object");
            return -1;
        }
        if (op_read_event(&im->j, &im->ev) != 0 || op_import_event(im) != 0) return -1;
        if (im->batch && im->t->nev + im->t->nmem >= im->batch->max && op_import_flush(im) != 0) return -1;
        /* Checked per event, so an oversized input stops here, not after it is all held. */
        if (im->max_events && im->t->nev + im->t->nmem > im->max_events) {
            op_json_fail(&im->j, OPPROF_E_RANGE, im->j.off, "more than %" PRIu64 " events (the limit asked for)",
                         im->max_events);
            return -1;
        }
    }
}

/* distributedInfo: backend, rank, world_size and opprof's clock
 * measurements (chrome.c writes them); anything else (pg_config, ...) and
 * values of the wrong type are skipped, since they only decorate. */
static int read_distributed(op_importer *im)
{
    static const char *const keys[] = {
        "rank", "world_size",
        "clock_offset_ns", "clock_uncertainty_ns", "clock_sync_at_ns",
        "clock_offset_end_ns", "clock_uncertainty_end_ns", "clock_sync_end_at_ns",
    };
    opprof_trace *t = im->t;
    int64_t v[8];
    int have = 0;
    for (;;) {
        op_jtok tok = op_json_next(&im->j);
        if (tok == OP_JT_OBJ_END) break;
        if (tok != OP_JT_KEY) return -1;
        int which = -1;
        if (OP_JSON_KEY_IS(&im->j, "backend")) which = 8;
        for (int k = 0; k < 8 && which < 0; k++)
            if (op_json_key_is(&im->j, keys[k], strlen(keys[k]))) which = k;
        tok = op_json_next(&im->j);
        if (tok == OP_JT_ERROR) return -1;
        if (which == 8 && tok == OP_JT_STRING) {
            t->dist_backend = op_trace_intern(t, im->j.s, im->j.n);
            if (t->dist_backend == UINT32_MAX) {
                op_json_fail(&im->j, OPPROF_E_NOMEM, im->j.off, "out of memory");
                return -1;
            }
        } else if (which >= 0 && which < 8 && tok == OP_JT_NUMBER) {
            if (op_num_int(im->j.s, im->j.n, &v[which]) != 0) continue;
            /* clock values are times: kept in the range where they add up */
            if (which >= 2 && (v[which] > OP_TIME_LIMIT_NS || v[which] < -OP_TIME_LIMIT_NS)) {
                op_json_fail(&im->j, OPPROF_E_PARSE, im->j.off,
                             "distributedInfo \"%s\" is out of range (more than 2^61 ns from 0)", keys[which]);
                return -1;
            }
            have |= 1 << which;
        } else if (op_json_skip(&im->j, tok) == OP_JT_ERROR) {
            return -1;
        }
    }
    if (have & 1) t->dist_rank = v[0];
    if (have & 2) t->dist_world = v[1];
    opprof_clock_sync *cs[2] = {&t->clock_start, &t->clock_end};
    for (int k = 0; k < 2; k++) {
        int need = 7 << (2 + 3 * k);
        if ((have & need) != need) continue;
        cs[k]->valid = 1;
        cs[k]->offset_ns = v[2 + 3 * k];
        cs[k]->uncertainty_ns = v[3 + 3 * k];
        cs[k]->at_ns = v[4 + 3 * k];
    }
    return 0;
}

/* A JSON number's text is nonzero when a digit other than 0 comes before
 * its exponent. */
static int number_nonzero(const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i] != 'e' && s[i] != 'E'; i++)
        if (s[i] >= '1' && s[i] <= '9') return 1;
    return 0;
}

/* opprof's own metadata: "droppedEvents" (a count) and "incomplete"
 * (true or a nonzero number). Values of another type are ignored, as for
 * any member the reader does not use. */
static int read_meta(op_importer *im, int which, op_jtok t)
{
    if (which == 4 && t == OP_JT_NUMBER) {
        uint64_t n;
        if (op_num_u64(im->j.s, im->j.n, &n) != 0) {
            op_json_fail(&im->j, OPPROF_E_PARSE, im->j.off, "\"droppedEvents\" is not a count");
            return -1;
        }
        im->t->dropped = n;
    } else if (which == 5 && (t == OP_JT_TRUE || (t == OP_JT_NUMBER && number_nonzero(im->j.s, im->j.n)))) {
        im->t->options |= OP_TRACE_INCOMPLETE;
    }
    return op_json_skip(&im->j, t) == OP_JT_ERROR ? -1 : 0;
}

static int top_key(const op_json *j)
{
    if (OP_JSON_KEY_IS(j, "traceEvents")) return 1;
    if (OP_JSON_KEY_IS(j, "baseTimeNanoseconds")) return 2;
    if (OP_JSON_KEY_IS(j, "distributedInfo")) return 3;
    if (OP_JSON_KEY_IS(j, "droppedEvents")) return 4;
    if (OP_JSON_KEY_IS(j, "incomplete")) return 5;
    return 0;
}

/* The members of a top-level object: traceEvents, baseTimeNanoseconds,
 * distributedInfo and opprof's metadata are read, the rest
 * (deviceProperties, ...) skipped. */
static int read_object(op_importer *im)
{
    int seen = 0;
    for (;;) {
        op_jtok t = op_json_next(&im->j);
        if (t == OP_JT_OBJ_END) break;
        if (t != OP_JT_KEY) return -1;
        int which = top_key(&im->j);
        t = op_json_next(&im->j);
        if (t == OP_JT_ERROR) return -1;
        if (which == 1) {
            /* Python's json would keep the last one; a streaming reader has
             * kept the first's events already, so two are refused. */
            if (seen) {
                op_json_fail(&im->j, OPPROF_E_PARSE, im->j.off, "a second \"traceEvents\" array");
                return -1;
            }
            if (t != OP_JT_ARR_BEGIN) {
                op_json_fail(&im->j, OPPROF_E_PARSE, im->j.off, "\"traceEvents\" is not an array");
                return -1;
            }
            if (read_events(im) != 0) return -1;
            seen = 1;
        } else if (which == 2 && t == OP_JT_NUMBER) {
            if (op_num_scaled(im->j.s, im->j.n, 0, &im->base_ns) != 0) {
                op_json_fail(&im->j, OPPROF_E_PARSE, im->j.off, "\"baseTimeNanoseconds\" is out of range");
                return -1;
            }
        } else if (which == 3 && t == OP_JT_OBJ_BEGIN) {
            if (read_distributed(im) != 0) return -1;
        } else if (which >= 4) {
            if (read_meta(im, which, t) != 0) return -1;
        } else if (op_json_skip(&im->j, t) == OP_JT_ERROR) {
            return -1;
        }
    }
    if (!seen) {
        op_json_fail(&im->j, OPPROF_E_PARSE, im->j.off, "the trace object has no \"traceEvents\" array");
        return -1;
    }
    return 0;
}

static int read_document(op_importer *im)
{
    op_jtok t = op_json_next(&im->j);
    if (t == OP_JT_ARR_BEGIN) {
        if (read_events(im) != 0) return -1;
    } else if (t == OP_JT_OBJ_BEGIN) {
        if (read_object(im) != 0) return -1;
    } else {
        if (t != OP_JT_ERROR)
            op_json_fail(&im->j, OPPROF_E_PARSE, im->j.off,
                         "a trace is a JSON array of events or an object with \"traceEvents\"");
        return -1;
    }
    t = op_json_next(&im->j); /* only white space may follow */
    return t == OP_JT_EOF ? 0 : -1;
}

int op_import_flush(op_importer *im)
{
    opprof_trace *t = im->t;
    if (op_thread_map_number(&im->threads, t) != 0)
        return op_json_fail(&im->j, OPPROF_E_NOMEM, im->j.off, "out of memory"), -1;
    t->base_time_ns = im->base_ns; /* the file's, as far as it has said */
    uint32_t **open = malloc((im->nopen ? im->nopen : 1) * sizeof *open);
    if (!open) return op_json_fail(&im->j, OPPROF_E_NOMEM, im->j.off, "out of memory"), -1;
    size_t n = 0;
    for (size_t i = 0; i < im->open.n; i++)
        if (im->open.v[i].ev != UINT32_MAX) open[n++] = &im->open.v[i].ev;
    int rc = op_trace_batch_out(t, open, n, im->batch->fn, im->batch->ctx);
    free(open);
    if (rc == OPPROF_OK) return 0;
    /* The writer's failure, in its own words. */
    op_json_fail(&im->j, rc, im->j.off, "%s", opprof_last_error());
    im->batch_failed = 1;
    return -1;
}

/* Times from the earliest one kept; the model wants the trace's start at 0. */
static void rebase(op_importer *im, int64_t base_ns)
{
    opprof_trace *t = im->t;
    int64_t t0 = im->any_time ? im->t_min : 0;
    for (size_t i = 0; i < t->nev; i++) t->ev[i].start_ns -= t0;
    for (size_t i = 0; i < t->nmem; i++) t->mem[i].ts_ns -= t0;
    /* Kineto's wall clock is baseTimeNanoseconds + ts; without it the file's
     * own origin is kept, so start_ns + base_time_ns gives back its ts. */
    if (__builtin_add_overflow(base_ns, t0, &t->base_time_ns)) t->base_time_ns = base_ns;
    t->duration_ns = im->any_time ? im->t_max - t0 : 0;
    t->mem_totals_given = t->nmem > 0 && im->mem_totals == t->nmem;
}

/* The first bytes, given back to the source: Perfetto's protobuf or
 * JSON? 1 Perfetto, 0 JSON, or a negative status when the read fails. */
static int sniff_pftrace(op_source *src, const char *label)
{
    unsigned char b[sizeof src->back];
    size_t have = 0;
    while (have < sizeof b) {
        ssize_t n = op_source_read(src, b + have, sizeof b - have);
        if (n < 0) return op_fail((int)n, "%s: byte %" PRIu64 ": %s", label, src->err_off, src->err);
        if (n == 0) break;
        have += (size_t)n;
    }
    memcpy(src->back, b, have);
    src->nback = have;
    return op_pf_sniff(b, have);
}

int op_import_source(op_source *src, const char *label, size_t chunk, opprof_trace **out)
{
    return op_import_source_max(src, label, chunk, 0, out);
}

/* The document into im->t, ranges still open ended at the last time, thread
 * ids numbered (the last batch handed out with a batch); frees what only
 * the reading needs. 0, or -1 with the failure in im->j. */
static int read_json(op_importer *im)
{
    int rc = read_document(im);
    op_json_free(&im->j);
    op_buf_free(&im->ev.text);
    op_buf_free(&im->ev.extra);
    if (rc == 0) op_import_close_open(im);
    if (rc == 0 && im->batch) {
        rc = op_import_flush(im);
    } else if (rc == 0 && op_thread_map_number(&im->threads, im->t) != 0) {
        im->j.status = OPPROF_E_NOMEM;
        snprintf(im->j.err, sizeof im->j.err, "out of memory");
        rc = -1;
    }
    op_thread_map_free(&im->threads);
    op_map_free(&im->call_stacks);
    op_vec_free(&im->open);
    free(im->open_top);
    return rc;
}

/* src (owned, closed), JSON or Perfetto by its first bytes, into *out: read
 * whole (rebased and finished), or handed to b in batches (then *out keeps
 * what the end needs). */
static int import_source(op_source *src, const char *label, size_t chunk, uint64_t max_events,
                         const op_import_batch *b, opprof_trace **out)
{
    *out = NULL;
    int pf = sniff_pftrace(src, label);
    if (pf < 0) {
        op_source_close(src);
        return pf;
    }
    if (pf) return b ? op_import_pftrace_batches(src, label, b, out) : op_import_pftrace(src, label, max_events, out);
    op_importer im;
    memset(&im, 0, sizeof im);
    im.max_events = max_events;
    im.batch = b;
    im.t = op_trace_new();
    if (!im.t || op_json_init(&im.j, src, chunk) != 0) {
        opprof_trace_free(im.t);
        op_json_free(&im.j);
        op_source_close(src);
        return op_fail(OPPROF_E_NOMEM, "%s: out of memory", label);
    }
    int rc = read_json(&im);
    op_source_close(src);
    if (rc != 0) {
        opprof_trace_free(im.t);
        if (im.batch_failed) return op_fail(im.j.status, "%s", im.j.err);
        return op_fail(im.j.status, "%s: byte %" PRIu64 ": %s", label, im.j.err_off, im.j.err);
    }
    if (!b) {
        rebase(&im, im.base_ns);
        if ((rc = op_trace_finish(im.t)) != 0) {
            opprof_trace_free(im.t);
            return rc;
        }
    }
    *out = im.t;
    return OPPROF_OK;
}

int op_import_source_max(op_source *src, const char *label, size_t chunk, uint64_t max_events, opprof_trace **out)
{
    return import_source(src, label, chunk, max_events, NULL, out);
}

/* Prefixes the source's detail with the input's name. */
static int fail_open(int rc, const char *label)
{
    char detail[256];
    snprintf(detail, sizeof detail, "%s", opprof_last_error());
    return op_fail(rc, "%s: %s", label, detail);
}

int opprof_trace_load_max(const char *path, uint64_t max_events, opprof_trace **out)
{
    if (!out) return op_fail(OPPROF_E_INVAL, "opprof_trace_load: NULL out");
    *out = NULL;
    if (!path) return op_fail(OPPROF_E_INVAL, "opprof_trace_load: NULL path");
    const char *label = strcmp(path, "-") == 0 ? "<stdin>" : path;
    op_source *src;
    int rc = op_source_open_path(path, &src);
    if (rc != 0) return fail_open(rc, label);
    /* The name decides where it says Perfetto; else the first bytes do. */
    if (op_pf_path(path)) return op_import_pftrace(src, label, max_events, out);
    return op_import_source_max(src, label, OP_IMPORT_CHUNK, max_events, out);
}

int opprof_trace_load_table(const char *path, uint64_t max_events, const opprof_avg_options *opt, opprof_trace **out)
{
    if (!out) return op_fail(OPPROF_E_INVAL, "opprof_trace_load_table: NULL out");
    *out = NULL;
    if (!path) return op_fail(OPPROF_E_INVAL, "opprof_trace_load_table: NULL path");
    /* A .pftrace named as one is folded as it is read; stdin could not be
     * read again when the fold gives up. Rows of the top level or by stack
     * need the call tree and the stacks: the model. */
    const char *env = getenv("OPPROF_READ_FOLD");
    int fold = op_pf_path(path) && strcmp(path, "-") != 0 && !(env && !strcmp(env, "0")) &&
               !(opt && (opt->top_level_only || opt->group_by_stack_n > 0));
    if (fold) {
        op_source *src;
        int rc = op_source_open_path(path, &src);
        if (rc != 0) return fail_open(rc, path);
        rc = op_import_pftrace_fold(src, path, max_events, opt, out);
        if (rc != PF_NEED_MODEL) return rc;
    }
    return opprof_trace_load_max(path, max_events, out);
}

int opprof_trace_load(const char *path, opprof_trace **out)
{
    return opprof_trace_load_max(path, 0, out);
}

int opprof_trace_load_buffer(const void *buf, size_t len, opprof_trace **out)
{
    if (!out) return op_fail(OPPROF_E_INVAL, "opprof_trace_load_buffer: NULL out");
    *out = NULL;
    if (!buf && len) return op_fail(OPPROF_E_INVAL, "opprof_trace_load_buffer: NULL buffer");
    op_source *src;
    int rc = op_source_open_memory(buf, len, 0, &src);
    if (rc != 0) return fail_open(rc, "<buffer>");
    return op_import_source(src, "<buffer>", OP_IMPORT_CHUNK, out);
}

int op_import_batches(const char *path, const op_import_batch *b, opprof_trace **out)
{
    *out = NULL;
    if (!path || !b || !b->max || !b->fn) return op_fail(OPPROF_E_INVAL, "op_import_batches: bad arguments");
    const char *label = strcmp(path, "-") == 0 ? "<stdin>" : path;
    op_source *src;
    int rc = op_source_open_path(path, &src);
    if (rc != 0) return fail_open(rc, label);
    /* The name decides where it says Perfetto; else the first bytes do. */
    if (op_pf_path(path)) return op_import_pftrace_batches(src, label, b, out);
    return import_source(src, label, OP_IMPORT_CHUNK, 0, b, out);
}

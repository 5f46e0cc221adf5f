/* opprof_report_write: one self-contained HTML file. The page (markup, style,
 * script) is compiled in; the data follows as inert blocks: a JSON meta
 * object, each trace's string table, and its event and memory columns as
 * base64 varints (deflated when big). A trace of more events than the page
 * can draw at once is merged down to REP_PAGE_SLICES slices (rep_layout.c).
 * The file is replaced atomically (opprof_write_file), so a failed write
 * never leaves a truncated report. */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "export/pftrace_zq.h"
#include "report/rep.h"

/* Binary blocks bigger than this go in deflated; the page inflates them
 * with the browser's DecompressionStream. */
#define REP_DEFLATE_MIN (1u << 20)

static int trace_prepare(rep_trace *r, const opprof_trace *t, size_t budget)
{
    memset(r, 0, sizeof *r);
    r->t = t;
    if (rep_layout_build(r, budget) != 0 || rep_strings_build(r) != 0 || rep_launches_build(r) != 0 ||
        rep_events_build(r) != 0 || rep_memory_build(r) != 0)
        return -1;
    return 0;
}

void rep_trace_free(rep_trace *r)
{
    free(r->strs.map);
    free(r->strs.ids);
    free(r->launch_op);
    free(r->order);
    free(r->pos);
    free(r->levels);
    free(r->blocks);
    op_buf_free(&r->ev);
    op_buf_free(&r->mem);
}

static void options_json(rep_out *o, const opprof_trace *t)
{
    rep_printf(o,
               ",\"options\":{\"shapes\":%d,\"memory\":%d,\"flops\":%d,\"stack\":%d,\"device\":%d,"
               "\"incomplete\":%d}",
               !!(t->options & OP_TRACE_SHAPES), !!(t->options & OP_TRACE_MEMORY), !!(t->options & OP_TRACE_FLOPS),
               !!(t->options & OP_TRACE_STACK), !!(t->options & OP_TRACE_DEVICE),
               !!(t->options & OP_TRACE_INCOMPLETE));
}

static int trace_meta_json(rep_out *o, const rep_trace *r, const char *label)
{
    const opprof_trace *t = r->t;
    rep_puts(o, "{\"label\":");
    rep_json_cstr(o, label);
    /* the wall-clock base exceeds 2^53: a string keeps every digit */
    rep_printf(o,
               ",\"nev\":%zu,\"nmem\":%zu,\"durationNs\":%lld,\"baseTimeNs\":\"%lld\",\"stepNum\":%lld,"
               "\"dropped\":%llu,\"attempted\":%llu",
               t->nev, t->nmem, (long long)t->duration_ns, (long long)t->base_time_ns, (long long)t->step_num,
               (unsigned long long)t->dropped, (unsigned long long)t->attempted);
    rep_printf(o, ",\"memUnknownFrees\":%llu,\"memDoubleFrees\":%llu,\"memReallocs\":%llu",
               (unsigned long long)t->mem_unknown_frees, (unsigned long long)t->mem_double_frees,
               (unsigned long long)t->mem_reallocs);
    options_json(o, t);
    rep_threads_json(o, r);
    rep_levels_json(o, r);
    rep_stacks_json(o, r);
    rep_steps_json(o, r);
    rep_puts(o, ",\"events\":");
    rep_cols_json(o, r->npage, r->ev_cols, r->ev_ncols);
    rep_lod_json(o, r);
    rep_memory_json(o, r);
    int rc = rep_ops_json(o, r);
    if (rc != OPPROF_OK) return rc;
    if (rep_devices_json(o, r) != 0) return op_fail(OPPROF_E_NOMEM, "out of memory while writing the report");
    rep_puts(o, "}");
    return OPPROF_OK;
}

/* One binary block in base64; a big one deflated (zlib's format, which
 * DecompressionStream("deflate") reads), its size before in data-size. */
static int binary_block(rep_out *o, const char *what, size_t k, const op_buf *b)
{
    rep_printf(o, "<script type=\"application/octet-stream\" id=\"opprof-%s-%zu\"", what, k);
    if (b->n < REP_DEFLATE_MIN) {
        rep_puts(o, ">");
        rep_base64(o, (const uint8_t *)b->p, b->n);
        rep_puts(o, "</script>\n");
        return 0;
    }
    pf_packer z = {0, 6, NULL}; /* zlib's format at 6 */
    unsigned char *out = NULL;
    size_t cap = 0, zn = op_pf_pack(&z, b->p, b->n, &out, &cap);
    op_pf_packer_free(&z);
    if (!zn) {
        free(out);
        return -1;
    }
    rep_printf(o, " data-deflate=\"%zu\">", b->n);
    rep_base64(o, out, zn);
    rep_puts(o, "</script>\n");
    free(out);
    return 0;
}

static int data_blocks(rep_out *o, rep_trace *rt, size_t n, const char *const *labels,
                       const opprof_report_options *opt)
{
    rep_puts(o, "<script type=\"application/json\" id=\"opprof-meta\">{\"version\":1,\"generator\":");
    rep_printf(o, "\"opprof %d.%d.%d\",\"created\":%lld,\"title\":", OPPROF_VERSION_MAJOR, OPPROF_VERSION_MINOR,
               OPPROF_VERSION_PATCH, (long long)time(NULL));
    rep_json_cstr(o, opt && opt->title ? opt->title : "opprof report");
    rep_puts(o, ",\"config\":[");
    for (size_t i = 0; opt && opt->config && opt->config[i] && opt->config[i + 1]; i += 2) {
        rep_puts(o, i ? ",[" : "[");
        rep_json_cstr(o, opt->config[i]);
        rep_puts(o, ",");
        rep_json_cstr(o, opt->config[i + 1]);
        rep_puts(o, "]");
    }
    rep_puts(o, "],\"traces\":[");
    for (size_t k = 0; k < n; k++) {
        if (k) rep_puts(o, ",\n");
        int rc = trace_meta_json(o, &rt[k], labels[k]);
        if (rc != OPPROF_OK) return rc;
    }
    rep_puts(o, "]}</script>\n");
    for (size_t k = 0; k < n; k++) {
        rep_printf(o, "<script type=\"application/json\" id=\"opprof-strings-%zu\">", k);
        rep_strings_json(o, &rt[k]);
        rep_puts(o, "</script>\n");
        if (binary_block(o, "events", k, &rt[k].ev) != 0 || binary_block(o, "memory", k, &rt[k].mem) != 0)
            return op_fail(OPPROF_E_NOMEM, "out of memory while compressing the report");
    }
    return OPPROF_OK;
}

/* The page template with its @@MARKER@@s filled in. */
static int write_page(rep_out *o, rep_trace *rt, size_t n, const char *const *labels,
                      const opprof_report_options *opt)
{
    const char *p = (const char *)op_report_html, *end = p + op_report_html_len;
    while (p < end) {
        const char *m = memmem(p, (size_t)(end - p), "@@", 2);
        if (!m) {
            rep_write(o, p, (size_t)(end - p));
            break;
        }
        rep_write(o, p, (size_t)(m - p));
        const char *close = memmem(m + 2, (size_t)(end - m - 2), "@@", 2);
        if (!close) return op_fail(OPPROF_E_PARSE, "report template: unclosed marker");
        size_t len = (size_t)(close - m - 2);
        if (len == 11 && !memcmp(m + 2, "SCRIPT_HASH", len)) rep_puts(o, op_report_js_sha256);
        else if (len == 5 && !memcmp(m + 2, "STYLE", len)) rep_write(o, op_report_css, op_report_css_len);
        else if (len == 6 && !memcmp(m + 2, "SCRIPT", len)) rep_write(o, op_report_js, op_report_js_len);
        else if (len == 4 && !memcmp(m + 2, "DATA", len)) {
            int rc = data_blocks(o, rt, n, labels, opt);
            if (rc != OPPROF_OK) return rc;
        } else
            return op_fail(OPPROF_E_PARSE, "report template: unknown marker %.*s", (int)len, m + 2);
        p = close + 2;
    }
    return OPPROF_OK;
}

typedef struct page_job {
    rep_trace *rt;
    size_t n;
    const char *const *labels;
    const opprof_report_options *opt;
} page_job;

static int page_to(FILE *f, void *ctx)
{
    page_job *j = ctx;
    rep_out o = {f, 0};
    int rc = write_page(&o, j->rt, j->n, j->labels, j->opt);
    /* A failed write shows in ferror(f): opprof_write_file names the path and the reason. */
    return rc;
}

int opprof_report_write(const opprof_trace *a, const opprof_trace *b, const opprof_report_options *opt,
                        const char *path)
{
    return rep_report_write(a, b, opt, path, REP_PAGE_SLICES);
}

int rep_report_write(const opprof_trace *a, const opprof_trace *b, const opprof_report_options *opt,
                     const char *path, size_t budget)
{
    if (op_trace_check(a, "opprof_report_write") || op_trace_check(b, "opprof_report_write")) return OPPROF_E_INVAL;
    if (!a || !path || !*path) return op_fail(OPPROF_E_INVAL, "opprof_report_write: NULL trace or path");
    if (!a->finished || (b && !b->finished)) return op_fail(OPPROF_E_INVAL, "opprof_report_write: unfinished trace");
    const opprof_trace *traces[2] = {a, b};
    const char *labels[2] = {opt && opt->label_a ? opt->label_a : (b ? "base" : "trace"),
                             opt && opt->label_b ? opt->label_b : "test"};
    size_t n = b ? 2 : 1;
    rep_trace rt[2];
    memset(rt, 0, sizeof rt);
    int rc = OPPROF_OK;
    for (size_t k = 0; k < n && rc == OPPROF_OK; k++)
        if (trace_prepare(&rt[k], traces[k], budget) != 0)
            rc = op_fail(OPPROF_E_NOMEM, "out of memory while preparing the report (%zu events)", traces[k]->nev);
    page_job job = {rt, n, labels, opt};
    if (rc == OPPROF_OK) rc = opprof_write_file(path, page_to, &job);
    for (size_t k = 0; k < n; k++) rep_trace_free(&rt[k]);
    return rc;
}

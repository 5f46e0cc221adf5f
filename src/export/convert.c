/* opprof_trace_convert: a trace file written in another format as it is
 * read. The reader hands its events out in batches (import.h,
 * op_import_batches) and the streamed trace's writers write each batch as
 * a piece, Chrome JSON (export/chrome.h) or .pftrace (export/pftrace.h), so
 * memory holds one batch, the ranges still open and what is kept once per
 * distinct name, thread and stack: not the file. */
#include <string.h>

#include "common/error.h"
#include "common/pfschema.h"
#include "export/chrome.h"
#include "export/convert.h"
#include "export/options.h"
#include "export/out.h"
#include "export/pftrace.h"
#include "export/pftrace_stream.h"
#include "import/import.h"

size_t op_convert_batch = (size_t)1 << 20;

typedef struct conv {
    op_out out;
    const opprof_export_options *o;
    int pftrace, gz;
    op_chrome_stream *cs;
    op_pf_stream *pf;
    int begun;
} conv;

/* The writer's header, from what the reader knows by the first batch
 * (options, baseTimeNanoseconds when the file gives it first, distributedInfo). */
static int begin(conv *c, const opprof_trace *head)
{
    c->begun = 1;
    return c->pftrace ? op_pf_stream_begin(&c->pf, &c->out.w, head, c->o, c->gz ? 0 : op_pf_zlevel(c->o))
                      : op_chrome_stream_begin(&c->cs, &c->out.w, head, c->o);
}

static int write_batch(opprof_trace *t, void *ctx)
{
    conv *c = ctx;
    int rc = c->begun ? OPPROF_OK : begin(c, t);
    /* In the model's order: each thread's ranges nest as the writers expect. */
    if (rc == OPPROF_OK && op_order_events(t) != 0) rc = op_fail(OPPROF_E_NOMEM, "out of memory");
    if (rc == OPPROF_OK) rc = c->pf ? op_pf_stream_model(c->pf, t) : op_chrome_stream_events(c->cs, t);
    return rc;
}

/* The end: threads' names and what only the end knows. t NULL: giving up. */
static int end(conv *c, const opprof_trace *t)
{
    int rc = OPPROF_OK;
    if (t && !c->begun) rc = begin(c, t); /* a trace without events is still a trace */
    int incomplete = t && (t->options & OP_TRACE_INCOMPLETE);
    uint64_t dropped = t ? t->dropped : 0;
    if (c->pf) rc = op_pf_stream_end(c->pf, rc == OPPROF_OK ? t : NULL, NULL, 0, NULL, dropped, incomplete);
    else if (c->cs) rc = op_chrome_stream_end(c->cs, rc == OPPROF_OK ? t : NULL, NULL, dropped, incomplete);
    c->pf = NULL;
    c->cs = NULL;
    return rc;
}

int opprof_trace_convert(const char *in, const char *out, const opprof_export_options *user_o)
{
    opprof_export_options full;
    int rc = op_export_options_in(&full, user_o, "opprof_trace_convert");
    if (rc != OPPROF_OK) return rc;
    if (!in || !*in || !out || !*out) return op_fail(OPPROF_E_INVAL, "opprof_trace_convert: no path given");
    if (!strcmp(in, out)) return op_fail(OPPROF_E_INVAL, "opprof_trace_convert: %s is both the input and the output", in);
    conv c;
    memset(&c, 0, sizeof c);
    c.o = &full;
    c.pftrace = op_pf_path(out);
    c.gz = full.gzip < 0 ? op_path_is_gz(out) : full.gzip != 0;
    rc = op_out_open_path(&c.out, out, c.gz, full.gzip_level, full.fsync != 0);
    if (rc != OPPROF_OK) return rc;
    op_import_batch b = {op_convert_batch ? op_convert_batch : 1, write_batch, &c};
    opprof_trace *rest = NULL;
    rc = op_import_batches(in, &b, &rest);
    int erc = end(&c, rc == OPPROF_OK ? rest : NULL);
    if (rc == OPPROF_OK) rc = erc;
    opprof_trace_free(rest);
    if (rc != OPPROF_OK) {
        op_out_discard(&c.out);
        return rc;
    }
    rc = op_out_close(&c.out);
    if (rc == OPPROF_OK) op_clear_error();
    return rc;
}

/* What the model knows about memory over a whole trace: totals, the peak and
 * the operator it counted for, and the timeline of live bytes. */
#include <inttypes.h>
#include <string.h>

#include "common/error.h"
#include "common/textesc.h"
#include "model/model.h"

static const char *op_name_of(const opprof_trace *t, int32_t op)
{
    return op >= 0 && (size_t)op < t->nev ? op_strtab_get(&t->str, t->ev[op].name) : "[memory]";
}

int opprof_trace_memory_stats(const opprof_trace *t, opprof_memory_stats *out)
{
    if (op_trace_check(t, "opprof_trace_memory_stats")) return OPPROF_E_INVAL;
    if (!t || !out) return op_fail(OPPROF_E_INVAL, "opprof_trace_memory_stats: NULL argument");
    memset(out, 0, sizeof *out);
    out->peak_op = "";
    int64_t peak = INT64_MIN;
    for (size_t i = 0; i < t->nmem; i++) {
        const op_mem_event *m = &t->mem[i];
        if (m->bytes >= 0) {
            out->allocations++;
            out->bytes_allocated += m->bytes;
        } else {
            out->frees++;
            out->bytes_freed -= m->bytes;
        }
        if (m->total_allocated > peak) {
            peak = m->total_allocated;
            out->peak_bytes = peak;
            out->peak_time_ns = m->ts_ns;
            out->peak_op = op_name_of(t, m->op);
        }
        out->final_bytes = m->total_allocated;
    }
    out->unknown_frees = t->mem_unknown_frees;
    out->double_frees = t->mem_double_frees;
    out->reallocs = t->mem_reallocs;
    return OPPROF_OK;
}

int opprof_memory_timeline_write(const opprof_trace *t, FILE *f, int format)
{
    if (op_trace_check(t, "opprof_memory_timeline_write")) return OPPROF_E_INVAL;
    if (!t || !f) return op_fail(OPPROF_E_INVAL, "opprof_memory_timeline_write: NULL argument");
    if (format != OPPROF_FORMAT_CSV && format != OPPROF_FORMAT_JSON)
        return op_fail(OPPROF_E_INVAL, "memory timeline format %d: use OPPROF_FORMAT_CSV or OPPROF_FORMAT_JSON", format);
    if (format == OPPROF_FORMAT_CSV)
        fputs("ts_us,addr,bytes,total_allocated,tid,op\n", f);
    else
        fputs("{\"memory_timeline\": [", f);
    for (size_t i = 0; i < t->nmem; i++) {
        const op_mem_event *m = &t->mem[i];
        int64_t tid = m->thread < t->nthreads ? t->threads[m->thread].tid : -1;
        const char *op = op_name_of(t, m->op);
        if (format == OPPROF_FORMAT_CSV) {
            fprintf(f, "%" PRId64 ".%03" PRId64 ",0x%" PRIx64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",", m->ts_ns / 1000,
                    (m->ts_ns < 0 ? -m->ts_ns : m->ts_ns) % 1000, m->addr, m->bytes, m->total_allocated, tid);
            op_fput_csv_field(f, op);
            fputc('\n', f);
        } else {
            fprintf(f, "%s\n  {\"ts_us\": %" PRId64 ".%03" PRId64 ", \"addr\": \"0x%" PRIx64 "\", \"bytes\": %" PRId64
                       ", \"total_allocated\": %" PRId64 ", \"tid\": %" PRId64 ", \"op\": ",
                    i ? "," : "", m->ts_ns / 1000, (m->ts_ns < 0 ? -m->ts_ns : m->ts_ns) % 1000, m->addr, m->bytes,
                    m->total_allocated, tid);
            op_fput_json_string(f, op);
            fputc('}', f);
        }
    }
    if (format == OPPROF_FORMAT_JSON) {
        opprof_memory_stats st;
        opprof_trace_memory_stats(t, &st);
        fprintf(f, "\n], \"peak_bytes\": %" PRId64 ", \"peak_ts_us\": %" PRId64 ".%03" PRId64 ", \"peak_op\": ",
                st.peak_bytes, st.peak_time_ns / 1000, (st.peak_time_ns < 0 ? -st.peak_time_ns : st.peak_time_ns) % 1000);
        op_fput_json_string(f, st.peak_op);
        fputs("}\n", f);
    }
    return ferror(f) ? op_fail(OPPROF_E_IO, "memory timeline: write failed") : OPPROF_OK;
}

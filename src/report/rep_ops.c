/* The operators view's rows: the key averages (section 8 of opprof_trace.h), by
 * name and by name and input shapes. Both groupings go into the page, so the
 * toggle is instant and both show exactly what `opprof summary` prints. */
#include <stdlib.h>

#include "report/rep.h"

typedef struct avg_rows {
    opprof_avg_row *r;
    size_t n;
} avg_rows;

#define COLUMN(key, fmt, expr)                                                \
    do {                                                                      \
        rep_puts(o, ",\"" key "\":[");                                        \
        for (size_t i = 0; i < rows->n; i++) {                                \
            const opprof_avg_row *r = &rows->r[i];                            \
            rep_printf(o, "%s" fmt, i ? "," : "", expr);                      \
        }                                                                     \
        rep_puts(o, "]");                                                     \
    } while (0)

static void rows_json(rep_out *o, const avg_rows *rows, int by_shape)
{
    rep_printf(o, "{\"n\":%zu,\"name\":[", rows->n);
    for (size_t i = 0; i < rows->n; i++) {
        if (i) rep_puts(o, ",");
        rep_json_cstr(o, rows->r[i].name);
    }
    rep_puts(o, "]");
    if (by_shape) {
        rep_puts(o, ",\"shapes\":[");
        for (size_t i = 0; i < rows->n; i++) {
            if (i) rep_puts(o, ",");
            rep_json_cstr(o, rows->r[i].input_shapes);
        }
        rep_puts(o, "]");
    }
    COLUMN("count", "%llu", (unsigned long long)r->count);
    COLUMN("selfCpu", "%lld", (long long)r->self_cpu_time_total_ns);
    COLUMN("cpu", "%lld", (long long)r->cpu_time_total_ns);
    COLUMN("selfDev", "%lld", (long long)r->self_device_time_total_ns);
    COLUMN("dev", "%lld", (long long)r->device_time_total_ns);
    COLUMN("mem", "%lld", (long long)r->cpu_memory_usage);
    COLUMN("selfMem", "%lld", (long long)r->self_cpu_memory_usage);
    COLUMN("flops", "%llu", (unsigned long long)r->flops);
    rep_puts(o, "}");
}

int rep_ops_json(rep_out *o, const rep_trace *rt)
{
    for (int by_shape = 0; by_shape < 2; by_shape++) {
        opprof_avg_options opt = {.group_by_input_shape = by_shape};
        opprof_key_averages *ka = NULL;
        int rc = opprof_key_averages(rt->t, &opt, &ka);
        if (rc != OPPROF_OK) return rc;
        avg_rows rows = {NULL, opprof_key_averages_count(ka)};
        rows.r = malloc((rows.n ? rows.n : 1) * sizeof *rows.r);
        if (!rows.r) {
            opprof_key_averages_free(ka);
            return op_fail(OPPROF_E_NOMEM, "out of memory while writing the report");
        }
        for (size_t i = 0; i < rows.n; i++) opprof_key_averages_row(ka, i, &rows.r[i]);
        rep_puts(o, by_shape ? ",\"opsByShape\":" : ",\"ops\":");
        rows_json(o, &rows, by_shape);
        free(rows.r);
        opprof_key_averages_free(ka);
    }
    return OPPROF_OK;
}

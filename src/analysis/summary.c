/* Key averages for programs rather than people: CSV (RFC 4180) and JSON with
 * the field names of the fixtures' reference summaries. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/keyavg.h"
#include "analysis/pyfmt.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/textesc.h"
#include "common/writeall.h"

/* A name for a spreadsheet: control characters and bidi overrides escaped
 * (common/textesc.h), then quoted as RFC 4180 asks when it holds a comma or
 * a quote. */
static void csv_field(op_buf *b, const char *s)
{
    char *esc;
    if (!(s = op_text_shown(s, strlen(s), &esc))) {
        op_buf_fail(b);
        return;
    }
    if (!s[strcspn(s, ",\"")]) {
        op_buf_puts(b, s);
    } else {
        op_buf_put(b, "\"", 1);
        for (const char *q; (q = strchr(s, '"')); s = q + 1) {
            op_buf_put(b, s, (size_t)(q - s));
            op_buf_put(b, "\"\"", 2);
        }
        op_buf_puts(b, s);
        op_buf_put(b, "\"", 1);
    }
    free(esc);
}

static void json_string(op_buf *b, const char *s)
{
    op_buf_put(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            op_buf_put(b, esc, 2);
        } else if (c == '\n') {
            op_buf_put(b, "\\n", 2);
        } else if (c < 0x20 || c == 0x7f) {
            op_buf_printf(b, "\\u%04x", c);
        } else if (op_is_kept_nul((const unsigned char *)s, 2)) {
            op_buf_put(b, "\\u0000", 6);
            s++;
        } else {
            op_buf_put(b, s, 1);
        }
    }
    op_buf_put(b, "\"", 1);
}

/* The numeric fields in both formats: the same text, only the separator and
 * the field names around it differ. */
static void numbers(op_buf *b, const opprof_avg_row *r, int json)
{
    static const char *const names[] = {"count", "self_cpu_time_total_us", "cpu_time_total_us",
                                        "self_device_time_total_us", "device_time_total_us",
                                        "cpu_memory_usage", "self_cpu_memory_usage", "flops"};
    char v[8][48];
    snprintf(v[0], sizeof v[0], "%" PRIu64, r->count);
    snprintf(v[1], sizeof v[1], "%.3f", op_ns_to_us(r->self_cpu_time_total_ns));
    snprintf(v[2], sizeof v[2], "%.3f", op_ns_to_us(r->cpu_time_total_ns));
    snprintf(v[3], sizeof v[3], "%.3f", op_ns_to_us(r->self_device_time_total_ns));
    snprintf(v[4], sizeof v[4], "%.3f", op_ns_to_us(r->device_time_total_ns));
    snprintf(v[5], sizeof v[5], "%" PRId64, r->cpu_memory_usage);
    snprintf(v[6], sizeof v[6], "%" PRId64, r->self_cpu_memory_usage);
    snprintf(v[7], sizeof v[7], "%" PRIu64, r->flops);
    for (size_t i = 0; i < 8; i++) {
        if (json)
            op_buf_printf(b, ", \"%s\": %s", names[i], v[i]);
        else
            op_buf_printf(b, ",%s", v[i]);
    }
}

static int flush(op_buf *b, FILE *f, const char *what)
{
    int rc = OPPROF_OK;
    if (b->failed)
        rc = op_fail(OPPROF_E_NOMEM, "out of memory writing %s", what);
    else if (b->n && op_write_all_stream(f, b->p, b->n) != 0)
        rc = op_fail(OPPROF_E_IO, "could not write %s (%zu bytes): %s", what, b->n, strerror(errno));
    op_buf_free(b);
    return rc;
}

int opprof_key_averages_write_csv(const opprof_key_averages *ka, FILE *f)
{
    if (!ka || !f) return op_fail(OPPROF_E_INVAL, "opprof_key_averages_write_csv: NULL argument");
    op_buf b = {0};
    op_buf_puts(&b, "name,count,self_cpu_time_total_us,cpu_time_total_us,self_device_time_total_us,"
                        "device_time_total_us,cpu_memory_usage,self_cpu_memory_usage,flops,input_shapes");
    /* Rows split by stack differ only there: the column tells them apart. */
    int stack = ka->opt.group_by_stack_n > 0;
    op_buf_puts(&b, stack ? ",stack\n" : "\n");
    for (size_t i = 0; i < ka->n; i++) {
        const opprof_avg_row *r = &ka->rows[i].r;
        csv_field(&b, r->name);
        numbers(&b, r, 0);
        op_buf_put(&b, ",", 1);
        csv_field(&b, r->input_shapes);
        if (stack) {
            op_buf_put(&b, ",", 1);
            csv_field(&b, r->stack);
        }
        op_buf_put(&b, "\n", 1);
    }
    return flush(&b, f, "the key averages CSV");
}

int opprof_key_averages_write_json(const opprof_key_averages *ka, FILE *f)
{
    if (!ka || !f) return op_fail(OPPROF_E_INVAL, "opprof_key_averages_write_json: NULL argument");
    op_buf b = {0};
    op_buf_put(&b, "[", 1);
    for (size_t i = 0; i < ka->n; i++) {
        const opprof_avg_row *r = &ka->rows[i].r;
        op_buf_puts(&b, i ? ",\n  {\"name\": " : "\n  {\"name\": ");
        json_string(&b, r->name);
        numbers(&b, r, 1);
        op_buf_puts(&b, ", \"input_shapes\": ");
        json_string(&b, r->input_shapes);
        if (ka->opt.group_by_stack_n > 0) {
            op_buf_puts(&b, ", \"stack\": ");
            json_string(&b, r->stack);
        }
        op_buf_put(&b, "}", 1);
    }
    op_buf_puts(&b, ka->n ? "\n]\n" : "]\n");
    return flush(&b, f, "the key averages JSON");
}

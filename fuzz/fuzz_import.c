/* libFuzzer target for the trace reader. Each input is read twice: whole,
 * and a few bytes at a time through a tiny buffer, so every token also
 * crosses refill boundaries. Both must agree (same event count, or the same
 * error message), and a failure must name a byte offset. Sanitizers catch
 * the rest. Build and run with scripts/fuzz.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/import.h"
#include "opprof_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_model(const opprof_trace *t)
{
    for (size_t i = 0; i < t->nev; i++) {
        const op_event *e = &t->ev[i];
        if (e->thread >= t->nthreads || e->dur_ns < 0 || (e->parent >= 0 && (size_t)e->parent >= i)) abort();
    }
    for (size_t i = 0; i < t->nmem; i++)
        if (t->mem[i].thread >= t->nthreads) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char whole_err[600];
    opprof_trace *whole = NULL, *cut = NULL;
    int rc_whole = opprof_trace_load_buffer(data, size, &whole);
    if (rc_whole != 0) {
        const char *e = opprof_last_error();
        if (strncmp(e, "<buffer>: ", 10) != 0) abort();
        snprintf(whole_err, sizeof whole_err, "%s", e + 10);
        if (rc_whole == OPPROF_E_PARSE && strncmp(whole_err, "byte ", 5) != 0) abort();
    } else {
        check_model(whole);
        /* the sums over the model (key averages, the table's totals) meet
         * the same numbers: each must saturate, never overflow */
        opprof_key_averages *ka = NULL;
        char *table = NULL;
        if (opprof_key_averages(whole, NULL, &ka) == 0 && opprof_table_string(ka, NULL, -1, &table) == 0 && !table)
            abort();
        free(table);
        opprof_key_averages_free(ka);
    }
    op_source *src;
    if (op_source_open_memory(data, size, 1 + size % 7, &src) != 0) abort();
    int rc_cut = op_import_source(src, "<buffer>", 16, &cut);
    if (rc_cut != rc_whole) abort();
    if (rc_cut != 0 && strcmp(opprof_last_error() + 10, whole_err) != 0) abort();
    if (rc_cut == 0 && (cut->nev != whole->nev || cut->nmem != whole->nmem || cut->nthreads != whole->nthreads))
        abort();
    opprof_trace_free(whole);
    opprof_trace_free(cut);
    return 0;
}

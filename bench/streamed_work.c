/* A streamed session of N ranges (default 120M): a loop of outer > mid >
 * 2 x leaf through the public API, its trace streamed to the .pftrace
 * given. bench_summary_pftrace.sh makes its big trace with it (SLICES=N),
 * to show that the summary's memory does not grow with the trace. The
 * loop is tests/support/nested_ranges.h, the test's own.
 *   streamed_work OUT.pftrace [N] */
#include <stdio.h>
#include <stdlib.h>

#include "opprof.h"
#include "opprof_trace.h"
#include "nested_ranges.h" /* tests/support: the shape test_pftrace_fold sums */

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: streamed_work OUT.pftrace [RANGES]\n");
        return 2;
    }
    long n = argc == 3 ? atol(argv[2]) : 120000000L;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.stream_trace = argv[1];
    if (opprof_start(&cfg) != OPPROF_OK) {
        fprintf(stderr, "streamed_work: %s\n", opprof_last_error());
        return 1;
    }
    nested_ranges(n);
    opprof_trace *t = NULL;
    int rc = opprof_stop(&t);
    int streamed = rc == OPPROF_OK && opprof_trace_streamed(t); /* which also links the trace writer */
    if (rc != OPPROF_OK) fprintf(stderr, "streamed_work: %s\n", opprof_last_error());
    opprof_trace_free(t);
    return streamed ? 0 : 1;
}

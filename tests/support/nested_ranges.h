/* n ranges through the public API as a loop of outer > mid > 2 x leaf (n
 * a multiple of 4): the streamed session that test_pftrace_fold sums and
 * bench/streamed_work records for bench_summary_pftrace.sh. */
#ifndef OPPROF_TESTS_NESTED_RANGES_H
#define OPPROF_TESTS_NESTED_RANGES_H

#include "opprof.h"

OPPROF_SITE(nested_outer, "outer");
OPPROF_SITE(nested_mid, "mid");
OPPROF_SITE(nested_leaf, "leaf");

static inline void nested_ranges(long n)
{
    for (long i = 0; i < n / 4; i++) {
        opprof_begin(&nested_outer);
        opprof_begin(&nested_mid);
        opprof_begin(&nested_leaf);
        opprof_end(&nested_leaf);
        opprof_begin(&nested_leaf);
        opprof_end(&nested_leaf);
        opprof_end(&nested_mid);
        opprof_end(&nested_outer);
    }
}

#endif

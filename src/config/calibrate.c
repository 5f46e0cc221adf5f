/* Overhead compensation's figures, measured (opprof_calibrate_overhead,
 * opprof_trace.h section 11).
 *
 * One recorded call costs its clock reads and what runs around them: the
 * hooks' call, the site lookup, the record or the sums. The part between a
 * range's own two clock reads (inside) lands in the range's duration; the
 * rest (outside) in its caller's self time, once per call. Each round is a
 * short session of the kind the program's will be (sums, or records: a
 * streamed trace records) in which a block of bare calls and a block of
 * instrumented ones are timed: the difference per call is the whole cost,
 * and the recorded durations, less a bare call, the inside part. Each
 * block's fastest round gives its figure, the one least disturbed by other
 * work on the machine (as bench/ takes its floors); the figures are the
 * differences of those minima, not the minimum of each round's difference,
 * which one preempted bare block drives below zero. */
#include <math.h>
#include <stddef.h>
#include <time.h>

#include "common/error.h"
#include "opprof_trace.h"

/* Calls per block: long enough that what the calls write leaves the
 * caches, as it does in a long run. One that records writes 24 bytes a
 * call: with blocks of 20k (480 KiB, within L2) the records stayed hot
 * from round to round, and bench_trace_cost's twothread_work showed
 * cmp_keys (a ~10 ns leaf) +38.5% self time with --trace against the
 * table alone. Sums are calibrated over as many calls, so that the two
 * modes' figures are measured alike: with 200k calls for both, +6.6% and
 * +14.6% (two runs); with 200k for records and 20k for sums, +35.1% and
 * +37.3%, the table's share moving instead. */
#define CAL_CALLS 200000
#define CAL_ROUNDS 7

static double mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double per_call_ns(void (*fn)(void *), void *ctx)
{
    double t0 = mono_ns();
    for (int i = 0; i < CAL_CALLS; i++) fn(ctx);
    return (mono_ns() - t0) / CAL_CALLS;
}

/* The recorded duration of the round's calls, per call: the row that holds
 * them all. -1 when no row does (the call recorded nothing). */
static double recorded_ns(const opprof_trace *t)
{
    opprof_key_averages *ka = NULL;
    if (opprof_key_averages(t, NULL, &ka) != OPPROF_OK) return -1;
    double best = -1;
    for (size_t i = 0; i < opprof_key_averages_count(ka); i++) {
        opprof_avg_row r;
        if (opprof_key_averages_row(ka, i, &r) == OPPROF_OK && r.count == CAL_CALLS)
            best = (double)r.cpu_time_total_ns / (double)r.count;
    }
    opprof_key_averages_free(ka);
    return best;
}

int opprof_calibrate_overhead(const opprof_config *cfg, void (*call)(void *ctx), void (*bare)(void *ctx), void *ctx,
                              double *inside_ns, double *outside_ns)
{
    if (!cfg || !call || !bare || !inside_ns || !outside_ns)
        return op_fail(OPPROF_E_INVAL, "opprof_calibrate_overhead: cfg, call, bare and both results are needed");
    opprof_config c;
    opprof_config_init(&c);
    if (cfg->struct_size < offsetof(opprof_config, aggregate))
        return op_fail(OPPROF_E_INVAL, "opprof_calibrate_overhead: cfg was not set up (opprof_config_init)");
    c.record_shapes = cfg->record_shapes;
    c.profile_memory = cfg->profile_memory;
    c.with_stack = cfg->with_stack;
    c.with_flops = cfg->with_flops;
    c.max_stack_depth = cfg->max_stack_depth;
    /* A streamed session records as one that keeps events does. */
    c.aggregate = cfg->struct_size > offsetof(opprof_config, stream_trace) && cfg->stream_trace ? 0 : cfg->aggregate;
    c.max_events = CAL_CALLS + 64;
    double bare_min = INFINITY, call_min = INFINITY, rec_min = INFINITY;
    for (int r = 0; r < CAL_ROUNDS; r++) {
        int rc = opprof_start(&c);
        if (rc != OPPROF_OK) return rc;
        double b = per_call_ns(bare, ctx);
        double a = per_call_ns(call, ctx);
        opprof_trace *t = NULL;
        rc = opprof_stop(&t);
        double d = rc == OPPROF_OK ? recorded_ns(t) : -1;
        opprof_trace_free(t);
        if (rc != OPPROF_OK) return rc;
        if (d < 0)
            return op_fail(OPPROF_E_INVAL, "opprof_calibrate_overhead: the call recorded no range (%d expected)",
                           CAL_CALLS);
        bare_min = fmin(bare_min, b);
        call_min = fmin(call_min, a);
        rec_min = fmin(rec_min, d);
    }
    double whole = call_min - bare_min, in = rec_min - bare_min;
    if (!(whole > 0)) whole = 0;
    if (!(in > 0)) in = 0;
    if (in > whole) in = whole;
    *inside_ns = in;
    *outside_ns = whole - in;
    return OPPROF_OK;
}

/* opprof_ranks_merge and the ranks report on traces built by hand, with
 * clocks that disagree by known offsets (and drift), so that every aligned
 * time, wait and overlap is exact. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/model.h"
#include "opprof_trace.h"
#include "ranks/ranks.h"

#define US 1000LL
#define BASE 1700000000000000000LL /* rank 0's wall clock at its trace's start */

/* Rank 0's clock minus rank r's: rank 1 runs 5 ms ahead, rank 2 3 ms behind
 * at the start and 3.1 ms behind one second later. */
static const int64_t k_off_start[3] = {0, -5000 * US, 3000 * US};
static const int64_t k_off_end[3] = {0, -5000 * US, 3100 * US};

typedef struct builder {
    opprof_trace *t;
    int rank;
} builder;

/* The rank's wall clock when rank 0's reads t: L with L + offset(L) = t,
 * offset linear between the two measurements (at_ns on the rank's clock). */
static int64_t local_wall(int rank, int64_t t)
{
    long double a = (long double)BASE, bb = (long double)(BASE + 1000000000LL);
    long double os = (long double)k_off_start[rank], k = ((long double)k_off_end[rank] - os) / (bb - a);
    return (int64_t)(((long double)t - os + k * a) / (1 + k) + 0.5L);
}

/* An event at true time true_us (rank 0's clock, us after BASE), lasting
 * dur_us on the rank's clock. */
static void add(builder *b, const char *name, int cat, int64_t true_us, int64_t dur_us, const char *args)
{
    int64_t local = local_wall(b->rank, BASE + true_us * US) - b->t->base_time_ns;
    op_event *e = op_trace_add_event(b->t, 0, op_trace_intern(b->t, name, strlen(name)), cat, local, dur_us * US);
    assert_non_null(e);
    if (args) op_evx_add(b->t, e)->args = op_trace_intern(b->t, args, strlen(args));
}

static opprof_trace *rank_trace(int rank, int64_t arrive_us, int64_t compute_us)
{
    builder b = {op_trace_new(), rank};
    assert_non_null(b.t);
    assert_true(op_trace_thread(b.t, 100 + rank, 100 + rank) == 0);
    b.t->dist_backend = op_trace_intern(b.t, "mpi", 3);
    b.t->dist_rank = rank;
    b.t->dist_world = 3;
    b.t->clock_start = (opprof_clock_sync){1, BASE, k_off_start[rank], 2 * US};
    b.t->clock_end = (opprof_clock_sync){1, BASE + 1000000000LL, k_off_end[rank], 2 * US};
    b.t->base_time_ns = local_wall(rank, BASE + 100 * US * rank); /* each rank starts on its own */
    char a[512];
    /* A blocking allreduce, everyone leaving at 3050 us. */
    snprintf(a, sizeof a, "\"Collective name\": \"allreduce\", \"In msg bytes\": 4000, \"Process Group Name\": \"0\", "
                          "\"Seq\": 1");
    add(&b, "MPI_Allreduce", OPPROF_CAT_CPU_OP, arrive_us, 3050 - arrive_us, a);
    /* A non-blocking one posted at 4000 us, computation, then its wait. */
    snprintf(a, sizeof a, "\"Collective name\": \"allreduce\", \"In msg bytes\": 8, \"Process Group Name\": \"0\", "
                          "\"Seq\": 2, \"Request id\": 7");
    add(&b, "MPI_Iallreduce", OPPROF_CAT_CPU_OP, 4000, 10, a);
    add(&b, "compute", OPPROF_CAT_CPU_OP, 4010, compute_us, NULL);
    snprintf(a, sizeof a, "\"Request id\": 7, \"Collective name\": \"allreduce\", \"Process Group Name\": \"0\", "
                          "\"Seq\": 2, \"Completed\": 1");
    add(&b, "MPI_Wait", OPPROF_CAT_CPU_OP, 4010 + compute_us, 6000 - (4010 + compute_us), a);
    assert_int_equal(op_trace_finish(b.t), OPPROF_OK);
    return b.t;
}

typedef struct fixture {
    opprof_trace *t[3];
} fixture;

static int setup(void **state)
{
    static fixture f;
    /* Given out of order: ranks come from distributedInfo. Rank 2 arrives
     * last at the allreduce and computes longest. */
    f.t[0] = rank_trace(2, 3000, 1500);
    f.t[1] = rank_trace(0, 1000, 990);
    f.t[2] = rank_trace(1, 1200, 500);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < 3; i++) opprof_trace_free(f->t[i]);
    return 0;
}

static void test_merge_aligns_clocks_one_process_per_rank(void **state)
{
    fixture *f = *state;
    opprof_trace *m = NULL;
    assert_int_equal(opprof_ranks_merge((const opprof_trace *const *)f->t, 3, &m), OPPROF_OK);
    assert_int_equal(opprof_trace_event_count(m), 12);
    int64_t allreduce_start[3] = {0}, allreduce_end[3] = {0};
    opprof_event e;
    for (size_t i = 0; i < opprof_trace_event_count(m); i++) {
        opprof_trace_event(m, i, &e);
        assert_true(e.pid >= 0 && e.pid < 3);
        assert_int_equal(e.tid, 100 + e.pid);
        if (!strcmp(e.name, "MPI_Allreduce")) {
            allreduce_start[e.pid] = e.start_ns;
            allreduce_end[e.pid] = e.start_ns + e.dur_ns;
            assert_non_null(strstr(e.args, "\"Seq\": 1"));
        }
    }
    /* True times, from rank 0's arrival at 1000 us: within a nanosecond of
     * integer rounding in the drift. */
    assert_true(llabs(allreduce_start[1] - (allreduce_start[0] + 200 * US)) <= 1);
    assert_true(llabs(allreduce_start[2] - (allreduce_start[0] + 2000 * US)) <= 1);
    for (int k = 1; k < 3; k++) assert_true(llabs(allreduce_end[k] - allreduce_end[0]) <= 1);
    assert_true(llabs(opprof_trace_base_time_ns(m) - BASE) <= 1); /* rank 0 starts first */
    opprof_trace_free(m);
}

static void test_report_straggler_waits_and_overlap(void **state)
{
    fixture *f = *state;
    opprof_ranks_report *r = NULL;
    assert_int_equal(opprof_ranks_report_new((const opprof_trace *const *)f->t, 3, &r), OPPROF_OK);
    assert_int_equal(opprof_ranks_report_rank_count(r), 3);
    assert_int_equal(opprof_ranks_report_collective_count(r), 2);
    opprof_collective_stats c;
    assert_int_equal(opprof_ranks_report_collective(r, 0, &c), OPPROF_OK);
    assert_string_equal(c.name, "MPI_Allreduce");
    assert_string_equal(c.collective, "allreduce");
    assert_int_equal(c.seq, 1);
    assert_int_equal(c.ranks, 3);
    assert_int_equal(c.straggler, 2);
    assert_int_equal(c.bytes, 4000);
    assert_true(llabs(c.last_arrival_ns - c.first_arrival_ns - 2000 * US) <= 1);
    assert_true(llabs(opprof_ranks_report_wait_ns(r, 0, 0) - 2000 * US) <= 1);
    assert_true(llabs(opprof_ranks_report_wait_ns(r, 0, 1) - 1800 * US) <= 1);
    assert_int_equal(opprof_ranks_report_wait_ns(r, 0, 2), 0);
    assert_int_equal(opprof_ranks_report_wait_ns(r, 0, 3), -1);

    /* The non-blocking one: everyone posts at 4000 us, nobody waits for an
     * arrival; the wait calls come after it. */
    assert_int_equal(opprof_ranks_report_collective(r, 1, &c), OPPROF_OK);
    assert_string_equal(c.name, "MPI_Iallreduce");
    assert_int_equal(c.wait_ns, 0);

    /* Overlap: the Iallreduce is outstanding from 4000 to 6000 us; compute
     * runs from 4010 us for 990, 500 and 1500 us on ranks 0, 1, 2. */
    static const int64_t compute[3] = {990, 500, 1500};
    uint64_t straggles = 0;
    for (size_t k = 0; k < 3; k++) {
        opprof_rank_stats s;
        assert_int_equal(opprof_ranks_report_rank(r, k, &s), OPPROF_OK);
        assert_int_equal(s.rank, (int64_t)k);
        assert_true(llabs(s.compute_ns - compute[k] * US) <= 2);
        assert_true(llabs(s.overlap_ns - compute[k] * US) <= 2);
        int64_t blocking = 3050 - (k == 0 ? 1000 : k == 1 ? 1200 : 3000);
        assert_true(llabs(s.comm_ns - (blocking + 2000) * US) <= 2);
        assert_int_equal(s.collectives, 2);
        /* Rank 2 at the first; at the second all arrive at once. */
        straggles += s.straggler_count;
        if (k == 2) assert_true(s.straggler_count >= 1);
        assert_int_equal(s.clock_offset_ns, k_off_start[k]);
    }
    assert_int_equal(straggles, 2);
    assert_int_equal(opprof_ranks_report_rank(r, 3, &(opprof_rank_stats){0}), OPPROF_E_RANGE);

    /* Operators across ranks: compute's total per rank. */
    opprof_rank_op_stats o;
    int found = 0;
    for (size_t i = 0; i < opprof_ranks_report_op_count(r); i++) {
        assert_int_equal(opprof_ranks_report_op(r, i, &o), OPPROF_OK);
        if (strcmp(o.name, "compute")) continue;
        found = 1;
        assert_int_equal(o.ranks, 3);
        assert_int_equal(o.calls, 3);
        assert_int_equal(o.min_rank, 1);
        assert_int_equal(o.max_rank, 2);
        assert_int_equal(o.max_ns, 1500 * US);
        assert_int_equal(o.mean_ns, (990 + 500 + 1500) * US / 3);
    }
    assert_true(found);

    /* Both forms name the straggler. */
    char *text = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&text, &len);
    assert_int_equal(opprof_ranks_report_write(r, mf, OPPROF_FORMAT_TEXT, -1), OPPROF_OK);
    assert_int_equal(opprof_ranks_report_write(r, mf, OPPROF_FORMAT_JSON, -1), OPPROF_OK);
    fclose(mf);
    assert_non_null(strstr(text, "3 ranks (mpi)"));
    assert_non_null(strstr(text, "\"straggler\": 2"));
    assert_non_null(strstr(text, "\"wait_ns\": {\"0\": 2000000, \"1\": 1800000, \"2\": 0}"));
    free(text);
    assert_int_equal(opprof_ranks_report_write(r, stdout, 99, -1), OPPROF_E_INVAL);
    opprof_ranks_report_free(r);
}

static void test_duplicate_ranks_are_refused(void **state)
{
    fixture *f = *state;
    const opprof_trace *two[2] = {f->t[0], f->t[0]};
    opprof_trace *m = (opprof_trace *)1;
    assert_int_equal(opprof_ranks_merge(two, 2, &m), OPPROF_E_INVAL);
    assert_null(m);
    assert_non_null(strstr(opprof_last_error(), "rank 2"));
    opprof_ranks_report *r = NULL;
    assert_int_equal(opprof_ranks_report_new(two, 0, &r), OPPROF_E_INVAL);
}

static void test_args_lookup_finds_members_only(void **state)
{
    (void)state;
    const char *a = "\"Collective name\": \"Seq\", \"Src Rank\": 3, \"Rank\": -2, \"x\": 1.5, \"esc\": \"a\\\"b\"";
    int64_t v;
    const char *s;
    size_t n;
    assert_true(op_args_int(a, "Rank", &v) && v == -2);
    assert_true(op_args_int(a, "Src Rank", &v) && v == 3);
    assert_false(op_args_int(a, "Seq", &v)); /* only as a value */
    assert_false(op_args_int(a, "x", &v));   /* not an integer */
    assert_true(op_args_str(a, "esc", &s, &n) && n == 4);
    assert_true(op_args_is_comm(a));
    assert_false(op_args_is_comm(""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_aligns_clocks_one_process_per_rank),
        cmocka_unit_test(test_report_straggler_waits_and_overlap),
        cmocka_unit_test(test_duplicate_ranks_are_refused),
        cmocka_unit_test(test_args_lookup_finds_members_only),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

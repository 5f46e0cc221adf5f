/* The flight recorder with threads that come and go (issue 25, item 4):
 * exited threads' rings are recycled under the recorder's budget, so a
 * program that starts and joins four threads per loop stays in bounded
 * memory, and a dump holds the newest events (the last loop's threads),
 * not every thread that ever ran. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "proc.h"
#include "slurp.h"
#include "tmpdir.h"

static char g_dir[] = "/tmp/opprof_churn_XXXXXX";

static void churn_stays_bounded(void **state)
{
    (void)state;
    /* 60 loops of four threads, each writing more than its 2 MiB ring
     * (some 100,000 ranges of 24 bytes): 480 MiB of rings if exited
     * threads kept theirs. The sanitizer builds run fewer. */
    const char *env = getenv("CHURN_LOOPS");
    long loops = env && atol(env) > 0 ? atol(env) : 60;
    char loops_s[32], dump[600], out[600], err[600];
    snprintf(loops_s, sizeof loops_s, "%ld", loops);
    snprintf(dump, sizeof dump, "%s/churn.json", g_dir);
    snprintf(out, sizeof out, "%s/churn.out", g_dir);
    snprintf(err, sizeof err, "%s/churn.err", g_dir);
    /* Under TSan resident memory is mostly its shadow of each new thread. */
    int unbounded = getenv("CHURN_RSS_UNBOUNDED") != NULL;
    char *argv[] = {getenv("FLIGHT_CHURN"), "2M", loops_s, "100000", dump, unbounded ? "1000000" : "100", NULL};
    int rc = proc_run(argv, out, err);
    char *o = slurp(out);
    print_message("%s", o ? o : "(no output)\n");
    long first = -1, peak = -1;
    assert_non_null(o);
    assert_int_equal(sscanf(o, "rss_first_kb %ld rss_peak_kb %ld", &first, &peak), 2);
    free(o);
    assert_int_equal(rc, 0);
    /* Five threads at most at once (main and four): five rings, and the
     * exited threads' share, well under 48 MiB more than after the first
     * loop whatever the loop count. */
    if (unbounded) print_message("resident memory not bounded in this build (CHURN_RSS_UNBOUNDED)\n");
    else assert_true(peak - first < 48 * 1024);

    opprof_trace *t = NULL;
    assert_int_equal(opprof_trace_load(dump, &t), OPPROF_OK);
    size_t n = opprof_trace_event_count(t);
    int last_loop = 0, first_loop = 0;
    char want_last[48];
    snprintf(want_last, sizeof want_last, "churn_last_%ld", loops - 1);
    for (size_t i = 0; i < n; i++) {
        opprof_event e;
        assert_int_equal(opprof_trace_event(t, i, &e), OPPROF_OK);
        last_loop += !strcmp(e.name, want_last);
        first_loop += !strcmp(e.name, "churn_last_0");
    }
    opprof_trace_free(t);
    print_message("dump: %zu events; the last loop's threads %d of 4, the first loop's %d\n", n, last_loop,
                  first_loop);
    /* The newest events survive, across threads: the last loop's thread
     * that ended last keeps its last range. Its siblings' may go: on a busy
     * machine one ends early and the other three record a budget's worth
     * after it (3 of 4 kept, one run in five at load 3). */
    assert_true(last_loop >= 1 && last_loop <= 4);
    assert_int_equal(first_loop, 0);
    /* At most six rings of 24-byte ranges (five threads' and the exited
     * ones' share): the rings, not every thread that ever ran. */
    assert_true(n <= 6 * (2u << 20) / 24);
}

TMPDIR_SETUP(g_dir)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(churn_stays_bounded),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

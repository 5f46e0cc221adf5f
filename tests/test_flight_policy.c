/* The flight recorder's dump policy (src/live/flight_policy.c, issue 25
 * item 5): a step that ran while a dump was written is not judged; a
 * ratio and a floor together; the budget keeps the slowest steps; a slow
 * step not dumped says why; signal dumps are spaced and counted; and
 * "1.5x,20ms" parses. Times are given, not measured: nothing here waits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "live/flight_policy.h"
#include "opprof_trace.h"

#define MS 1000000LL

static int64_t g_now;

/* Steps of dur ms one after another from g_now; the last verdict. */
static int steps(op_flight_policy *p, int n, int64_t dur_ms, char *why, char *note, unsigned *slot)
{
    int v = OP_STEP_OK;
    for (int i = 0; i < n; i++) {
        g_now += dur_ms * MS;
        v = op_policy_step(p, g_now, dur_ms * MS, "step", why, 300, note, 300, slot);
    }
    return v;
}

static int idle(op_flight_policy *p, int64_t at, char *why, char *note, unsigned *slot)
{
    return op_policy_idle(p, at, 300 * MS, why, 300, note, 300, slot);
}

/* Steps slowed by a dump do not trigger the next; a step slow whatever
 * the dump did is still dumped, when the dump ends. */
static void steps_beside_a_dump(void **state)
{
    (void)state;
    op_flight_policy p;
    char why[300], note[300];
    unsigned slot;
    assert_int_equal(op_policy_init(&p, 0, 1.5, 10), 0);
    g_now = 1000 * MS;
    assert_int_equal(steps(&p, 20, 10, why, note, &slot), OP_STEP_OK);
    assert_int_equal(steps(&p, 1, 30, why, note, &slot), OP_STEP_DUMP); /* asks: busy from here */
    assert_non_null(strstr(why, "> 1.5x the median 10.000 ms"));
    /* The dump slows the steps beside it 2x: none of them is slow. */
    assert_int_equal(steps(&p, 10, 20, why, note, &slot), OP_STEP_UNJUDGED);
    assert_int_equal(steps(&p, 1, 28, why, note, &slot), OP_STEP_UNJUDGED);
    assert_int_equal(idle(&p, g_now + 5 * MS, why, note, &slot), OP_STEP_UNJUDGED);
    assert_non_null(strstr(note, "not dumped"));
    assert_non_null(strstr(note, "2.00x"));
    /* Begun before the dump ended, judged as the steps beside it. */
    assert_int_equal(steps(&p, 1, 25, why, note, &slot), OP_STEP_UNJUDGED);
    /* The median did not take them in: the next slow step is judged on the 10 ms steps. */
    assert_int_equal(steps(&p, 1, 10, why, note, &slot), OP_STEP_OK);
    assert_int_equal(steps(&p, 1, 16, why, note, &slot), OP_STEP_DUMP);
    /* Beside that dump, a step 5x as slow as its neighbours: dumped when it ends. */
    assert_int_equal(steps(&p, 10, 20, why, note, &slot), OP_STEP_UNJUDGED);
    assert_int_equal(steps(&p, 1, 100, why, note, &slot), OP_STEP_UNJUDGED);
    assert_int_equal(steps(&p, 3, 20, why, note, &slot), OP_STEP_UNJUDGED);
    assert_int_equal(idle(&p, g_now, why, note, &slot), OP_STEP_DUMP);
    assert_non_null(strstr(why, "while a dump was written"));
    assert_non_null(strstr(why, "50.000 ms without that"));
    /* Beside too few steps to tell: not judged, and said. */
    g_now += 100 * MS;
    assert_int_equal(steps(&p, 1, 200, why, note, &slot), OP_STEP_UNJUDGED);
    assert_int_equal(idle(&p, g_now, why, note, &slot), OP_STEP_UNJUDGED);
    assert_non_null(strstr(note, "too few steps"));
    /* ... unless it was slow without all of the dump's time: a 200 ms step
     * beside a dump of 20 ms. */
    g_now += 100 * MS;
    assert_int_equal(steps(&p, 1, 16, why, note, &slot), OP_STEP_DUMP); /* asks: busy from here */
    assert_int_equal(steps(&p, 1, 200, why, note, &slot), OP_STEP_UNJUDGED);
    assert_int_equal(op_policy_idle(&p, g_now, 20 * MS, why, 300, note, 300, &slot), OP_STEP_DUMP);
    assert_non_null(strstr(why, "180.000 ms without all of it"));
    op_policy_free(&p);
}

static void ratio_and_floor_together(void **state)
{
    (void)state;
    op_flight_policy p;
    char why[300], note[300];
    unsigned slot;
    assert_int_equal(op_policy_init(&p, 20 * MS, 1.5, 10), 0);
    g_now = 1000 * MS;
    assert_int_equal(steps(&p, 20, 10, why, note, &slot), OP_STEP_OK);
    assert_int_equal(steps(&p, 1, 18, why, note, &slot), OP_STEP_OK); /* 1.8x, under the floor */
    assert_int_equal(steps(&p, 1, 25, why, note, &slot), OP_STEP_DUMP);
    assert_non_null(strstr(why, "and > 20.000 ms"));
    op_policy_free(&p);
    /* A floor alone is a fixed threshold from the first step. */
    assert_int_equal(op_policy_init(&p, 20 * MS, 0, 10), 0);
    assert_int_equal(steps(&p, 1, 25, why, note, &slot), OP_STEP_DUMP);
    op_policy_free(&p);
}

/* Dumps one step of dur ms and writes it to file: the file it replaced. */
static char *dump_step(op_flight_policy *p, int64_t dur_ms, int want, const char *file)
{
    char why[300], note[300];
    unsigned slot = 99;
    assert_int_equal(steps(p, 1, dur_ms, why, note, &slot), want);
    char *old = NULL, what[64];
    int64_t old_dur = 0;
    op_policy_written(p, slot, file, &old, &old_dur, what, sizeof what);
    assert_int_equal(op_policy_idle(p, g_now, 0, why, 300, note, 300, &slot), OP_STEP_OK);
    return old;
}

static void budget_keeps_the_slowest(void **state)
{
    (void)state;
    op_flight_policy p;
    char why[300], note[300];
    unsigned slot;
    assert_int_equal(op_policy_init(&p, 25 * MS, 0, 3), 0);
    g_now = 1000 * MS;
    assert_null(dump_step(&p, 30, OP_STEP_DUMP, "/d/30.json"));
    assert_null(dump_step(&p, 50, OP_STEP_DUMP, "/d/50.json"));
    assert_null(dump_step(&p, 40, OP_STEP_DUMP, "/d/40.json"));
    /* Spent: a step slower than the least slow kept takes its place. */
    char *old = dump_step(&p, 35, OP_STEP_REPLACE, "/d/35.json");
    assert_non_null(old);
    assert_string_equal(old, "/d/30.json");
    free(old);
    /* Not slower than any kept: not dumped, and said why. */
    assert_int_equal(steps(&p, 1, 33, why, note, &slot), OP_STEP_NOT_KEPT);
    assert_non_null(strstr(note, "not dumped"));
    assert_non_null(strstr(note, "35.000 ms"));
    /* The real slow step, however late, is kept. */
    old = dump_step(&p, 200, OP_STEP_REPLACE, "/d/200.json");
    assert_string_equal(old, "/d/35.json");
    free(old);
    int have200 = 0;
    for (unsigned i = 0; i < p.nkept; i++) have200 |= !strcmp(p.kept[i].file, "/d/200.json");
    assert_true(have200);
    /* A failed replacement leaves the old dump in its place. */
    assert_int_equal(steps(&p, 1, 300, why, note, &slot), OP_STEP_REPLACE);
    char what[64];
    int64_t od;
    op_policy_written(&p, slot, NULL, &old, &od, what, sizeof what);
    assert_null(old);
    assert_string_equal(p.kept[slot].file, "/d/40.json");
    op_policy_free(&p);
}

static void signals_are_spaced_and_counted(void **state)
{
    (void)state;
    op_flight_policy p;
    char note[300];
    assert_int_equal(op_policy_init(&p, 0, 0, 2), 0);
    int64_t t = 5000 * MS;
    char why[300];
    unsigned slot;
    assert_int_equal(op_policy_signal(&p, t, note, sizeof note), 0);
    op_policy_busy(&p);
    op_policy_idle(&p, t + 300 * MS, 300 * MS, why, sizeof why, note, sizeof note, &slot);
    /* Within a second of the last dump's end: wait for it. */
    assert_int_equal(op_policy_signal(&p, t + 500 * MS, note, sizeof note), t + 1300 * MS);
    assert_int_equal(op_policy_signal(&p, t + 1300 * MS, note, sizeof note), 0);
    op_policy_idle(&p, t + 3300 * MS, 2000 * MS, why, sizeof why, note, sizeof note, &slot);
    /* Spent: the third is refused, and says so. */
    assert_int_equal(op_policy_signal(&p, t + 9000 * MS, note, sizeof note), -1);
    assert_non_null(strstr(note, "budget of 2 signal dumps"));
    op_policy_free(&p);
}

static void slow_step_text(void **state)
{
    (void)state;
    int64_t ns;
    double r;
    assert_int_equal(opprof_parse_slow_step("1.5x,20ms", &ns, &r), OPPROF_OK);
    assert_int_equal(ns, 20 * MS);
    assert_true(r == 1.5);
    assert_int_equal(opprof_parse_slow_step("20ms,2x", &ns, &r), OPPROF_OK);
    assert_int_equal(ns, 20 * MS);
    assert_true(r == 2.0);
    assert_int_equal(opprof_parse_slow_step("50ms", &ns, &r), OPPROF_OK);
    assert_true(ns == 50 * MS && r == 0);
    assert_int_equal(opprof_parse_slow_step("1.5x", &ns, &r), OPPROF_OK);
    assert_true(ns == 0 && r == 1.5);
    const char *bad[] = {"1.5x,2x", "20ms,30ms", "1.5x,", ",20ms", "0.5x,20ms", "1.5x,20", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(opprof_parse_slow_step(bad[i], &ns, &r), OPPROF_E_PARSE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(steps_beside_a_dump),
        cmocka_unit_test(ratio_and_floor_together),
        cmocka_unit_test(budget_keeps_the_slowest),
        cmocka_unit_test(signals_are_spaced_and_counted),
        cmocka_unit_test(slow_step_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

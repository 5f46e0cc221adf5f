/* The schedule against torch: the action of every step and the points
 * where on_trace_ready fires, with what each ready trace holds, for the
 * configurations of tests/data/schedule/torch_reference.py (whose output, from
 * torch 1.13.1, is the table below). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "opprof_trace.h"
#include "session/schedule.h"

typedef struct ready_call {
    int64_t step_num;
    int profiler_steps; /* ProfilerStep#N events in the ready trace */
    int adds;           /* the one operator each step runs */
} ready_call;

typedef struct row {
    const char *label;
    opprof_schedule sched;
    const char *pattern; /* a custom schedule, as N/W/R/S per step */
    int nsteps;
    const char *actions; /* torch.profiler.schedule for steps 0..nsteps */
    ready_call calls[6];
    int ncalls;
    const char *warnings; /* torch's warnings, " | " between them */
} row;

#define SCHED(sf, w, wu, a, r, sfw) {1, sf, w, wu, a, r, sfw, NULL, NULL}

static const row k_rows[] = {
    {"none", {0}, NULL, 3, "", {{3, 0, 3}}, 1, ""},
    {"seed", SCHED(10, 5, 1, 3, 2, 0), NULL, 30, "NNNNNNNNNNNNNNNWRRSNNNNNWRRSNNN", {{19, 3, 3}, {28, 3, 3}}, 2, ""},
    {"doc", SCHED(0, 1, 1, 2, 1, 0), NULL, 8, "NWRSNNNNN", {{4, 2, 2}}, 1, ""},
    {"stop_in_record", SCHED(0, 0, 1, 2, 0, 0), NULL, 7, "WRSWRSWR", {{3, 2, 2}, {6, 2, 2}, {7, 1, 0}}, 3, ""},
    {"no_warmup", SCHED(0, 2, 0, 1, 3, 0), NULL, 12, "NNSNNSNNSNNNN", {{3, 1, 1}, {6, 1, 1}, {9, 1, 1}}, 3,
     "Profiler won't be using warmup, this can skew profiler results"},
    {"stop_in_save", SCHED(3, 1, 2, 3, 0, 0), NULL, 20, "NNNNWWRRSNWWRRSNWWRRS", {{9, 3, 3}, {15, 3, 3}, {20, 3, 2}}, 3,
     ""},
    {"stop_in_warmup", SCHED(3, 1, 2, 3, 0, 0), NULL, 17, "NNNNWWRRSNWWRRSNWW", {{9, 3, 3}, {15, 3, 3}}, 2, ""},
    {"every_step", SCHED(0, 0, 0, 1, 0, 0), NULL, 4, "SSSSS", {{1, 1, 1}, {2, 1, 1}, {3, 1, 1}, {4, 1, 1}, {4, 1, 0}}, 5,
     "Profiler won't be using warmup, this can skew profiler results"},
    {"skip_first_wait", SCHED(2, 3, 1, 2, 2, 1), NULL, 16, "NNWRSNNNWRSNNNNNN", {{5, 2, 2}, {11, 2, 2}}, 2, ""},
    {"odd", {1, 0, 0, 0, 0, 0, 0, NULL, NULL}, "WNRNRWRSWN", 9, "WNRNRWRSWN", {{8, 2, 2}}, 1,
     "Incorrect schedule: RECORD followed by NONE | Incorrect schedule: RECORD followed by WARMUP | "
     "Incorrect schedule: WARMUP followed by NONE"},
};

static char action_letter(opprof_action a)
{
    return "NWRS"[a];
}

static opprof_action from_pattern(int64_t step, void *ctx)
{
    const char *p = ctx;
    if (step >= (int64_t)strlen(p)) return OPPROF_ACTION_NONE;
    return (opprof_action)(strchr("NWRS", p[step]) - "NWRS");
}

static opprof_schedule row_schedule(const row *r)
{
    opprof_schedule s = r->sched;
    if (r->pattern) {
        s.fn = from_pattern;
        s.fn_ctx = (void *)r->pattern;
    }
    return s;
}

/* ---- the pure schedule function ---- */

static void test_actions_match_torch(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof k_rows / sizeof *k_rows; k++) {
        const row *r = &k_rows[k];
        if (!r->sched.enabled) continue;
        opprof_schedule s = row_schedule(r);
        char got[64] = {0};
        for (int i = 0; i <= r->nsteps; i++) got[i] = action_letter(opprof_schedule_action(&s, i));
        if (strcmp(got, r->actions) != 0) fail_msg("%s: actions %s, torch %s", r->label, got, r->actions);
    }
}

static void test_action_edges(void **state)
{
    (void)state;
    opprof_schedule s = SCHED(10, 5, 1, 3, 2, 0);
    assert_int_equal(opprof_schedule_action(&s, -1), OPPROF_ACTION_NONE);
    assert_int_equal(opprof_schedule_action(NULL, 5), OPPROF_ACTION_RECORD);
    opprof_schedule off = {0};
    assert_int_equal(opprof_schedule_action(&off, 1000), OPPROF_ACTION_RECORD);
    /* repeat=0 cycles forever: far steps still follow the cycle. */
    opprof_schedule forever = SCHED(0, 1, 1, 2, 0, 0);
    assert_int_equal(opprof_schedule_action(&forever, 4000000000LL), OPPROF_ACTION_NONE);
    assert_int_equal(opprof_schedule_action(&forever, 4000000003LL), OPPROF_ACTION_RECORD_AND_SAVE);
    /* After repeat cycles: nothing, however far. */
    assert_int_equal(opprof_schedule_action(&s, 28), OPPROF_ACTION_NONE);
    assert_int_equal(opprof_schedule_action(&s, INT64_MAX), OPPROF_ACTION_NONE);
    /* Fields at their maximum do not overflow the cycle length. */
    opprof_schedule big = SCHED(0, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0, 0);
    assert_int_equal(opprof_schedule_action(&big, 0xffffffffLL), OPPROF_ACTION_WARMUP);
    opprof_schedule bad = SCHED(0, 1, 1, 0, 0, 0);
    assert_int_equal(opprof_schedule_check(&bad), OPPROF_E_INVAL);
    assert_int_equal(opprof_schedule_check(&s), OPPROF_OK);
}

/* torch.profiler.profile's action_map, operation by operation. */
static void test_transition_table(void **state)
{
    (void)state;
    static const struct {
        int prev, cur;
        const char *ops; /* P prepare, S start, T stop, R ready, ! warn */
    } k[] = {
        {0, 0, ""},     {0, 1, "P"},     {0, 2, "PS"},    {0, 3, "PS"},   {1, 0, "!ST"}, {1, 1, ""},
        {1, 2, "S"},    {1, 3, "S"},     {2, 0, "!T"},    {2, 1, "!T"},   {2, 2, ""},    {2, 3, ""},
        {3, 0, "TR"},   {3, 1, "TRP"},   {3, 2, "TRPS"},  {3, 3, "TRPS"}, {0, -1, ""},   {1, -1, "ST"},
        {2, -1, "TR"},  {3, -1, "TR"},
    };
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        const op_sched_ops *o = op_sched_transition(k[i].prev, k[i].cur);
        char got[8] = {0};
        for (unsigned j = 0; j < o->n; j++) got[j] = " !PSTR"[o->op[j]];
        if (strcmp(got, k[i].ops) != 0) fail_msg("%d -> %d: %s, expected %s", k[i].prev, k[i].cur, got, k[i].ops);
    }
}

/* ---- through a real session ---- */

static int64_t g_now;
static ready_call g_calls[8];
static int g_ncalls;
static const char *g_label;
/* The first mismatch of a run; failing at once would leave stderr redirected. */
static char g_err[1024];
#define ROW_FAIL(...)                                                       \
    do {                                                                    \
        if (!g_err[0]) snprintf(g_err, sizeof g_err, __VA_ARGS__);         \
    } while (0)

static int64_t fake_clock(void *ctx)
{
    (void)ctx;
    return g_now;
}

OPPROF_SITE(site_add, "aten::add");

static int r_has_steps;

static void on_ready(const opprof_trace *t, void *user)
{
    (void)user;
    if (g_ncalls >= 8) {
        ROW_FAIL("%s: too many on_trace_ready calls", g_label);
        return;
    }
    ready_call *c = &g_calls[g_ncalls++];
    c->step_num = opprof_trace_step_num(t);
    c->profiler_steps = c->adds = 0;
    int64_t lo = INT64_MAX, hi = -1;
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        opprof_trace_event(t, i, &e);
        if (strncmp(e.name, "ProfilerStep#", 13) == 0) {
            if (e.category != OPPROF_CAT_USER_ANNOTATION) ROW_FAIL("%s: %s is not a user annotation", g_label, e.name);
            int64_t n = atoll(e.name + 13);
            lo = n < lo ? n : lo;
            hi = n > hi ? n : hi;
            c->profiler_steps++;
        } else if (strcmp(e.name, "aten::add") == 0) {
            c->adds++;
            /* Each add runs inside its step's annotation. */
            if (r_has_steps && e.parent < 0) ROW_FAIL("%s: an add outside any ProfilerStep", g_label);
        }
    }
    /* The steps of one cycle, consecutive, ending at the step the trace was
     * made at (at stop) or the one before (at a step). */
    if (c->profiler_steps) {
        if (hi - lo + 1 != c->profiler_steps || (hi != c->step_num && hi != c->step_num - 1))
            ROW_FAIL("%s: steps %lld..%lld in a trace made at step %lld", g_label, (long long)lo, (long long)hi,
                     (long long)c->step_num);
    }
}

static void run_row(const row *r)
{
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.schedule = row_schedule(r);
    cfg.on_trace_ready = on_ready;
    cfg.clock = fake_clock;
    g_now = 1000;
    g_ncalls = 0;
    g_label = r->label;
    r_has_steps = cfg.schedule.enabled;
    if (opprof_start(&cfg) != OPPROF_OK) ROW_FAIL("%s: start: %s", r->label, opprof_last_error());
    for (int i = 0; i < r->nsteps; i++) {
        g_now += 10;
        opprof_begin(&site_add);
        g_now += 5;
        if (opprof_end(&site_add) != OPPROF_OK) ROW_FAIL("%s: end failed at step %d", r->label, i);
        g_now += 1;
        if (opprof_step() != OPPROF_OK || opprof_step_num() != i + 1) ROW_FAIL("%s: step %d failed", r->label, i);
    }
    g_now += 10;
    if (opprof_stop(NULL) != OPPROF_OK) ROW_FAIL("%s: stop failed", r->label);
    if (g_ncalls != r->ncalls) ROW_FAIL("%s: on_trace_ready fired %d times, torch %d", r->label, g_ncalls, r->ncalls);
    for (int i = 0; i < r->ncalls; i++) {
        const ready_call *g = &g_calls[i], *x = &r->calls[i];
        if (g->step_num != x->step_num || g->profiler_steps != x->profiler_steps || g->adds != x->adds)
            ROW_FAIL("%s: call %d got {%lld, %d, %d}, torch {%lld, %d, %d}", r->label, i, (long long)g->step_num,
                     g->profiler_steps, g->adds, (long long)x->step_num, x->profiler_steps, x->adds);
    }
}

static void test_ready_calls_match_torch(void **state)
{
    (void)state;
    /* Warnings go to stderr once per process: catch them in a file. */
    char path[] = "/tmp/opprof_sched_stderr_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    g_err[0] = '\0';
    for (size_t k = 0; k < sizeof k_rows / sizeof *k_rows; k++) run_row(&k_rows[k]);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    if (g_err[0]) fail_msg("%s", g_err);
    char text[4096] = {0};
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    close(fd);
    unlink(path);
    assert_true(n >= 0);
    for (size_t k = 0; k < sizeof k_rows / sizeof *k_rows; k++) {
        char want[512];
        snprintf(want, sizeof want, "%s", k_rows[k].warnings);
        for (char *w = strtok(want, "|"); w; w = strtok(NULL, "|")) {
            while (*w == ' ') w++;
            size_t l = strlen(w);
            while (l && w[l - 1] == ' ') w[--l] = '\0';
            char *first = strstr(text, w);
            if (!first) fail_msg("%s: warning '%s' not printed; stderr: %s", k_rows[k].label, w, text);
            if (strstr(first + 1, w)) fail_msg("warning '%s' printed more than once", w);
        }
    }
}

/* opprof_stop(&t) returns the cycle in progress; warmup data is not kept. */
static void test_stop_returns_partial_cycle(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.schedule = (opprof_schedule)SCHED(0, 1, 1, 3, 0, 0); /* N W R R S */
    cfg.clock = fake_clock;
    g_now = 1;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    for (int i = 0; i < 3; i++) { /* steps 0 (N), 1 (W), 2 (R) */
        opprof_begin(&site_add);
        g_now++;
        opprof_end(&site_add);
        assert_int_equal(opprof_step(), OPPROF_OK);
    }
    opprof_begin(&site_add); /* in step 3 (R), still open at stop */
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_non_null(t);
    /* ProfilerStep#2 and #3, the add of step 2 and the open add of step 3. */
    assert_int_equal(opprof_trace_event_count(t), 4);
    int forced = 0;
    for (size_t i = 0; i < 4; i++) {
        opprof_event e;
        opprof_trace_event(t, i, &e);
        assert_true(strcmp(e.name, "ProfilerStep#1") != 0);
        forced += (e.flags & OPPROF_EVENT_FORCED_END) != 0;
    }
    assert_int_equal(forced, 1);
    opprof_trace_free(t);

    /* Stopping in a wait step gives nothing. */
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_null(t);
}

static int g_stop_inside;
static void stop_in_callback(const opprof_trace *t, void *user)
{
    (void)t;
    (void)user;
    g_stop_inside = opprof_stop(NULL);
}

/* A callback may stop the session (or call anything else) safely. */
static void test_callback_may_stop(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.schedule = (opprof_schedule)SCHED(0, 0, 1, 1, 0, 0);
    cfg.on_trace_ready = stop_in_callback;
    g_stop_inside = -100;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    assert_int_equal(opprof_step(), OPPROF_OK); /* W -> S */
    assert_int_equal(opprof_step(), OPPROF_OK); /* S -> W: ready, the callback stops */
    assert_int_equal(g_stop_inside, OPPROF_OK);
    assert_int_equal(opprof_is_active(), 0);
    assert_int_equal(opprof_step(), OPPROF_E_NO_SESSION);
}

static void test_start_rejects_invalid_schedule(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.schedule = (opprof_schedule)SCHED(0, 1, 1, 0, 0, 0);
    assert_int_equal(opprof_start(&cfg), OPPROF_E_INVAL);
    assert_non_null(strstr(opprof_last_error(), "active"));
    assert_int_equal(opprof_is_active(), 0);
}

/* ---- the text form ---- */

static void test_parse(void **state)
{
    (void)state;
    opprof_schedule s;
    assert_int_equal(opprof_schedule_parse("skip_first=10,wait=5,warmup=1,active=3,repeat=2", &s), OPPROF_OK);
    assert_true(s.enabled);
    assert_int_equal(s.skip_first, 10);
    assert_int_equal(s.wait, 5);
    assert_int_equal(s.warmup, 1);
    assert_int_equal(s.active, 3);
    assert_int_equal(s.repeat, 2);
    assert_int_equal(s.skip_first_wait, 0);
    char buf[128];
    opprof_schedule_format(&s, buf, sizeof buf);
    assert_string_equal(buf, "skip_first=10,wait=5,warmup=1,active=3,repeat=2");
    assert_int_equal(opprof_schedule_parse(" active = 2 , skip_first_wait=true,", &s), OPPROF_OK);
    assert_int_equal(s.active, 2);
    assert_int_equal(s.skip_first_wait, 1);
    assert_int_equal(s.wait, 0);

    static const struct {
        const char *text, *says;
    } bad[] = {
        {"wait=5,warmup=1", "active must be at least 1"},
        {"wait=5,active=0", "active must be at least 1"},
        {"wiat=5,active=1", "unknown key 'wiat'"},
        {"wait=-1,active=1", "wait=-1 is not valid"},
        {"wait=abc,active=1", "wait=abc is not valid"},
        {"wait=99999999999,active=1", "not valid"},
        {"wait,active=1", "'wait' is not key=value"},
        {"active=1,active=2", "given twice"},
        {"", "empty"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(opprof_schedule_parse(bad[i].text, &s), OPPROF_E_PARSE);
        assert_false(s.enabled);
        if (!strstr(opprof_last_error(), bad[i].says))
            fail_msg("'%s': detail '%s' lacks '%s'", bad[i].text, opprof_last_error(), bad[i].says);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_actions_match_torch),
        cmocka_unit_test(test_action_edges),
        cmocka_unit_test(test_transition_table),
        cmocka_unit_test(test_ready_calls_match_torch),
        cmocka_unit_test(test_stop_returns_partial_cycle),
        cmocka_unit_test(test_callback_may_stop),
        cmocka_unit_test(test_start_rejects_invalid_schedule),
        cmocka_unit_test(test_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

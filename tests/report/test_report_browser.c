/* The report in headless Chromium: every view shows and draws, switching
 * views works, the operators view lists the trace's rows, the timeline
 * canvas has drawn events, search highlights, and hostile names stay text.
 * The page's self-test (#selftest) does the in-page checks and writes its
 * results into the DOM, which this test reads back. Skips, saying so, where
 * Chromium is not installed (scripts/deps.sh installs it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "browser.h"
#include "synth.h"

/* The issue's example, one that would mark the page if it ran, and a
 * comment opener that would swallow the rest of a script block. */
#define HOSTILE_ISSUE "</script><img src=x onerror=alert(1)>"
#define HOSTILE_MARK "</script><script>document.body.setAttribute('data-pwned','1')</script><!--<img src=x onerror=\"document.body.setAttribute('data-pwned','2')\">"

static void path_for(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "/tmp/opprof-browser-test-%d-%s", (int)getpid(), name);
}

/* The operators rows the trace must give: name -> count, ProfilerStep#N
 * folded, device events their own rows, [memory] for memory outside ops. */
typedef struct expect_row {
    const char *name;
    uint64_t count;
} expect_row;

static size_t expected_rows(const opprof_trace *t, expect_row *rows, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < t->nev; i++) {
        const op_event *e = &t->ev[i];
        if (!op_cat_is_host(e->cat) && !op_cat_is_device(e->cat)) continue;
        const char *name = op_strtab_get(&t->str, e->name);
        if (!strncmp(name, "ProfilerStep#", 13)) name = "ProfilerStep*";
        size_t k = 0;
        while (k < n && strcmp(rows[k].name, name)) k++;
        if (k == n) {
            assert_true(n < cap);
            rows[n++] = (expect_row){name, 0};
        }
        rows[k].count++;
    }
    size_t outside = 0;
    for (size_t i = 0; i < t->nmem; i++) outside += t->mem[i].op < 0;
    if (outside) rows[n++] = (expect_row){"[memory]", outside};
    return n;
}

static void assert_view_ok(const char *dom, const char *view)
{
    int shown = selftest_view_shown(dom, view);
    if (shown < 0) fail_msg("view %s was not visited", view);
    if (!shown) fail_msg("view %s did not show alone", view);
}

static void assert_safe(const char *dom)
{
    assert_null(strstr(dom, "data-pwned=\""));
    assert_null(strstr(dom, "<img"));
    assert_non_null(strstr(dom, "\"images\":0"));
    assert_non_null(strstr(dom, "\"pwned\":false"));
}

static void test_views_rows_canvas_and_safety(void **state)
{
    (void)state;
    if (!browser_or_skip_message()) skip();
    synth_opts o = {.events = 20000, .threads = 3, .depth = 5, .names = 20, .memory = 1, .device = 1,
                    .steps = 1, .seed = 3, .hostile = HOSTILE_MARK};
    opprof_trace *t = synth_trace(&o);
    assert_non_null(t);
    /* a second hostile operator, the issue's example */
    op_event *e = op_trace_add_event(t, 0, op_trace_intern(t, HOSTILE_ISSUE, strlen(HOSTILE_ISSUE)),
                                     OPPROF_CAT_CPU_OP, 1, 1);
    assert_non_null(e);
    t->finished = 0;
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    char path[256];
    path_for(path, sizeof path, "views.html");
    const char *cfg[] = {"hostile config", HOSTILE_MARK, NULL};
    opprof_report_options opt = {.title = HOSTILE_MARK, .label_a = HOSTILE_ISSUE, .config = cfg};
    assert_int_equal(opprof_report_write(t, NULL, &opt, path), OPPROF_OK);
    char *dom = browser_dump_dom(path, "selftest", 1400, 900);
    assert_non_null(dom);
    if (!strstr(dom, "id=\"opprof-selftest\"")) fail_msg("no self-test output: %.2000s", dom);
    assert_non_null(strstr(dom, "\"errors\":[]"));
    const char *views[] = {"overview", "operators", "timeline", "memory", "devices"};
    for (size_t i = 0; i < 5; i++) assert_view_ok(dom, views[i]);
    assert_null(strstr(strstr(dom, "id=\"opprof-selftest\""), "\"diff\":{")); /* one trace: no diff tab */

    expect_row rows[64];
    size_t n = expected_rows(t, rows, 64);
    assert_int_equal((size_t)selftest_num(dom, "operators", "rows"), n);
    for (size_t i = 0; i < n; i++) {
        char count[32], *name = selftest_text(rows[i].name), pat[1024];
        selftest_count(count, sizeof count, rows[i].count);
        snprintf(pat, sizeof pat, "[\"%s\",\"%s\"]", name, count);
        if (!strstr(dom, pat)) fail_msg("operators view lacks row %s", pat);
        free(name);
    }
    assert_true(selftest_num(dom, "operators", "byShapeRows") > (double)n);
    assert_true(selftest_num(dom, "operators", "byShapeHeader") == 1);
    assert_non_null(strstr(dom, "\"sortedByCount\":true"));
    assert_true(selftest_num(dom, "operators", "filtered") >= 1);

    assert_true(selftest_num(dom, "timeline", "colouredPixels") > 20000);
    assert_true(selftest_num(dom, "timeline", "searchMatches") > 0);
    assert_true(selftest_num(dom, "timeline", "searchPixels") > 0);
    assert_true(selftest_num(dom, "timeline", "hits") > 100);
    assert_true(selftest_num(dom, "timeline", "frames") == 36);
    /* the tooltip of the hostile event: its shapes and args shown as text */
    assert_true(selftest_num(dom, "timeline", "tooltipElements") > 6);
    const char *tip = strstr(dom, "\"tooltip\":\"");
    assert_non_null(tip);
    assert_non_null(strstr(dom, "\"tooltipOnlyText\":true"));
    char *hostile_text = selftest_text(HOSTILE_MARK);
    const char *in_tip = strstr(tip, hostile_text);
    if (!in_tip || in_tip > strstr(tip, "}")) fail_msg("the tooltip lacks the hostile shapes: %.300s", tip);
    const char *stack = strstr(tip, "call stack");
    if (!stack || stack > strstr(tip, "}") || !strstr(stack, "synth.c(1): main"))
        fail_msg("the tooltip lacks the call stack: %.600s", tip);
    free(hostile_text);
    assert_true(selftest_num(dom, "memory", "colouredPixels") > 500);
    assert_true(selftest_num(dom, "devices", "rows") == 5); /* four kernels and the memcpy */
    assert_true(selftest_num(dom, "devices", "streams") == 2);
    assert_true(selftest_num(dom, "overview", "top") == 10);

    char *shown = selftest_text(HOSTILE_ISSUE);
    assert_non_null(strstr(dom, shown)); /* listed as text */
    free(shown);
    assert_safe(dom);
    free(dom);
    unlink(path);
    opprof_trace_free(t);
}

static void test_address_selects_the_view(void **state)
{
    (void)state;
    if (!browser_or_skip_message()) skip();
    synth_opts o = {.events = 5000, .threads = 2, .depth = 4, .names = 10, .steps = 1, .seed = 5};
    opprof_trace *t = synth_trace(&o);
    char path[256];
    path_for(path, sizeof path, "address.html");
    assert_int_equal(opprof_report_write(t, NULL, NULL, path), OPPROF_OK);
    char *dom = browser_dump_dom(path, "view=operators&shape=1", 1200, 800);
    assert_non_null(dom);
    assert_non_null(strstr(dom, "class=\"tab active\" data-view=\"operators\""));
    assert_non_null(strstr(dom, "data-key=\"shapes\">Input Shapes</th>"));
    assert_non_null(strstr(dom, "data-first-draw-ms=\""));
    free(dom);
    /* a malformed escape in the address: the page still starts, on its first view */
    dom = browser_dump_dom(path, "view=%E0%A4%A&%ZZ=1", 1200, 800);
    assert_non_null(dom);
    assert_non_null(strstr(dom, "data-first-draw-ms=\""));
    assert_non_null(strstr(dom, "class=\"tab active\" data-view=\"overview\""));
    free(dom);
    dom = browser_dump_dom(path, "view=timeline", 1200, 800);
    assert_non_null(dom);
    assert_non_null(strstr(dom, "class=\"tab active\" data-view=\"timeline\""));
    assert_non_null(strstr(dom, "id=\"tl-canvas\""));
    assert_null(strstr(dom, "data-view=\"memory\"")); /* no memory in this trace: no memory tab */
    assert_null(strstr(dom, "data-view=\"devices\""));
    free(dom);
    unlink(path);
    opprof_trace_free(t);
}

static void test_diff_of_two_traces(void **state)
{
    (void)state;
    if (!browser_or_skip_message()) skip();
    synth_opts o = {.events = 8000, .threads = 2, .depth = 4, .names = 10, .steps = 1, .seed = 11};
    opprof_trace *a = synth_trace(&o);
    o.seed = 12;
    o.events = 12000;
    opprof_trace *b = synth_trace(&o);
    char path[256];
    path_for(path, sizeof path, "diff.html");
    opprof_report_options opt = {.label_a = "before.json", .label_b = "after.json"};
    assert_int_equal(opprof_report_write(a, b, &opt, path), OPPROF_OK);
    char *dom = browser_dump_dom(path, "selftest", 1400, 900);
    assert_non_null(dom);
    assert_non_null(strstr(dom, "\"errors\":[]"));
    assert_view_ok(dom, "diff");
    /* the totals pinned first, then 10 operators and ProfilerStep* */
    assert_true(selftest_num(dom, "diff", "rows") == 12);
    char total[128], ca[32], cb[32];
    selftest_count(ca, sizeof ca, a->nev);
    selftest_count(cb, sizeof cb, b->nev);
    snprintf(total, sizeof total, "\"list\":[[\"Total\",\"%s\",\"%s\"", ca, cb);
    assert_non_null(strstr(dom, total));
    assert_non_null(strstr(dom, "base: before.json"));
    assert_non_null(strstr(dom, "test: after.json"));
    free(dom);
    unlink(path);
    opprof_trace_free(a);
    opprof_trace_free(b);
}

/* A trace with nothing but events: no shapes, FLOPs, args, memory, steps or
 * device work, so the page's optional columns are all absent. */
static void test_bare_trace(void **state)
{
    (void)state;
    if (!browser_or_skip_message()) skip();
    opprof_trace *t = op_trace_new();
    uint32_t th = (uint32_t)op_trace_thread(t, 1, 1);
    const char *names[] = {"outer", "inner", "other"};
    int64_t at[][2] = {{0, 1000}, {100, 500}, {2000, 300}};
    for (int i = 0; i < 3; i++)
        assert_non_null(op_trace_add_event(t, th, op_trace_intern(t, names[i], strlen(names[i])), OPPROF_CAT_CPU_OP,
                                           at[i][0], at[i][1]));
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    char path[256];
    path_for(path, sizeof path, "bare.html");
    assert_int_equal(opprof_report_write(t, NULL, NULL, path), OPPROF_OK);
    char *dom = browser_dump_dom(path, "selftest", 1200, 800);
    assert_non_null(dom);
    if (!strstr(dom, "\"errors\":[]")) fail_msg("page errors: %.300s", strstr(dom, "\"errors\""));
    assert_view_ok(dom, "overview");
    assert_view_ok(dom, "operators");
    assert_view_ok(dom, "timeline");
    assert_true(selftest_num(dom, "operators", "rows") == 3);
    assert_true(selftest_num(dom, "timeline", "colouredPixels") > 1000);
    free(dom);
    unlink(path);
    opprof_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_views_rows_canvas_and_safety),
        cmocka_unit_test(test_address_selects_the_view),
        cmocka_unit_test(test_diff_of_two_traces),
        cmocka_unit_test(test_bare_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

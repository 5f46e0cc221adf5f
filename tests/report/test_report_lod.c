/* A trace bigger than the page: its short events merged into blocks
 * (rep_layout.c) with every event accounted for, the page within its
 * budget, the long events kept whole; the tables still count every event;
 * big data blocks deflated, and all of it drawn by the browser. */
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
#include "report/rep.h"
#include "slurp.h"
#include "synth.h"

static opprof_trace *trace_of(size_t events, int device)
{
    synth_opts o = {.events = events, .threads = 3, .depth = 6, .names = 30, .memory = 1, .device = device,
                    .steps = 1, .seed = 7};
    opprof_trace *t = synth_trace(&o);
    assert_non_null(t);
    return t;
}

static void tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "/tmp/opprof-report-lod-%d-%s", (int)getpid(), name);
}

static int64_t item_start(const rep_trace *r, uint32_t it)
{
    return it < r->t->nev ? r->t->ev[it].start_ns : r->blocks[it - r->t->nev].start;
}

/* Every invariant of a layout built with budget; nested: the trace's events
 * never overlap on a level (no device streams), so a block's busy time
 * fits in its span. */
static void check_layout(const opprof_trace *t, size_t budget, int expect_merged, int nested)
{
    rep_trace r;
    memset(&r, 0, sizeof r);
    r.t = t;
    assert_int_equal(rep_layout_build(&r, budget), 0);
    size_t nev = t->nev, kept = 0;
    if (!expect_merged) {
        assert_int_equal(r.nblocks, 0);
        assert_int_equal(r.merged, 0);
        assert_int_equal(r.npage, nev);
    } else {
        assert_true(r.nblocks > 0);
        assert_true(r.lod_min_ns > 0);
        assert_true(r.npage <= budget);
    }
    /* each event is its own slice when long enough, else in a block that spans it */
    uint64_t *members = calloc(r.nblocks ? r.nblocks : 1, sizeof *members);
    int64_t *durs = calloc(r.nblocks ? r.nblocks : 1, sizeof *durs);
    assert_true(members && durs);
    for (size_t i = 0; i < nev; i++) {
        const op_event *e = &t->ev[i];
        assert_true(r.pos[i] < r.npage);
        uint32_t it = r.order[r.pos[i]];
        if (!r.lod_min_ns || e->dur_ns >= r.lod_min_ns) {
            assert_int_equal(it, i);
            kept++;
            continue;
        }
        assert_true(it >= nev && it - nev < r.nblocks);
        const rep_block *b = &r.blocks[it - nev];
        assert_true(b->start <= e->start_ns);
        assert_true(e->start_ns + e->dur_ns <= b->end);
        members[it - nev]++;
        durs[it - nev] += e->dur_ns;
    }
    uint64_t sum = 0;
    for (size_t k = 0; k < r.nblocks; k++) {
        const rep_block *b = &r.blocks[k];
        assert_int_equal(members[k], b->count); /* it counts its members, at every row */
        /* busy: the durations of the members at the block's row */
        assert_true(b->busy >= 0 && b->busy <= durs[k]);
        if (nested) assert_true(b->busy <= b->end - b->start);
        assert_true(t->ev[b->longest].dur_ns < r.lod_min_ns);
        sum += b->count;
    }
    free(members);
    free(durs);
    assert_int_equal(sum, r.merged);
    assert_int_equal(kept + r.merged, nev);
    assert_int_equal(kept + r.nblocks, r.npage);
    /* the levels cover the page, each in start order (slices on a level may
     * overlap where the trace's own events do: device work on a stream) */
    size_t p = 0;
    for (size_t L = 0; L < r.nlevels; L++) {
        size_t end = p + r.levels[3 * L + 2];
        assert_true(end <= r.npage);
        for (size_t q = p + 1; q < end; q++) {
            assert_true(item_start(&r, r.order[q - 1]) <= item_start(&r, r.order[q]));
        }
        p = end;
    }
    assert_int_equal(p, r.npage);
    print_message("budget %zu: %zu events -> %zu slices (%zu blocks holding %zu events, kept >= %lld ns, gaps < %lld ns)\n",
                  budget, nev, r.npage, r.nblocks, r.merged, (long long)r.lod_min_ns, (long long)r.lod_gap_ns);
    rep_trace_free(&r);
}

static void test_layout_accounts_for_every_event(void **state)
{
    (void)state;
    for (int device = 0; device < 2; device++) {
        opprof_trace *t = trace_of(60000, device);
        check_layout(t, 0, 0, !device);           /* no budget: every event drawn */
        check_layout(t, t->nev, 0, !device);      /* a budget it fits in */
        check_layout(t, t->nev / 4, 1, !device);  /* merged down */
        check_layout(t, t->nev / 40, 1, !device); /* far down */
        opprof_trace_free(t);
    }
}

/* The file says what was merged, and the page holds the budget's slices. */
static void test_file_says_what_was_merged(void **state)
{
    (void)state;
    opprof_trace *t = trace_of(60000, 0);
    char path[256];
    tmp_path(path, sizeof path, "merged.html");
    assert_int_equal(rep_report_write(t, NULL, NULL, path, 5000), OPPROF_OK);
    char *html = slurp(path);
    assert_non_null(html);
    const char *lod = strstr(html, "\"lod\":{\"minNs\":");
    assert_non_null(lod);
    unsigned long long merged = 0, blocks = 0, slices = 0;
    const char *m = strstr(lod, "\"merged\":"), *b = strstr(lod, "\"blocks\":"), *s = strstr(lod, "\"slices\":");
    assert_true(m && b && s);
    merged = strtoull(m + 9, NULL, 10);
    blocks = strtoull(b + 9, NULL, 10);
    slices = strtoull(s + 9, NULL, 10);
    assert_true(merged > 0 && blocks > 0 && slices <= 5000 && slices - blocks + merged == t->nev);
    free(html);
    /* the public writer's budget is far above this trace: nothing merged */
    assert_int_equal(opprof_report_write(t, NULL, NULL, path), OPPROF_OK);
    html = slurp(path);
    assert_non_null(html);
    assert_null(strstr(html, "\"lod\":{"));
    free(html);
    unlink(path);
    opprof_trace_free(t);
}

/* The operators' rows in the self-test, as the page lists them. */
static char *ops_list(const char *dom)
{
    const char *p = strstr(dom, "id=\"opprof-selftest\"");
    p = p ? strstr(p, "\"operators\":{") : NULL;
    p = p ? strstr(p, "\"list\":[") : NULL;
    const char *e = p ? strstr(p, "]]") : NULL;
    if (!e) return NULL;
    return strndup(p, (size_t)(e - p));
}

static void test_page_draws_blocks_and_counts_every_event(void **state)
{
    (void)state;
    if (!browser_or_skip_message()) skip();
    opprof_trace *t = trace_of(60000, 1);
    char merged[256], whole[256];
    tmp_path(merged, sizeof merged, "page-merged.html");
    tmp_path(whole, sizeof whole, "page-whole.html");
    assert_int_equal(rep_report_write(t, NULL, NULL, merged, 4000), OPPROF_OK);
    assert_int_equal(rep_report_write(t, NULL, NULL, whole, 0), OPPROF_OK);
    char *dm = browser_dump_dom(merged, "view=timeline&selftest", 1400, 900);
    char *dw = browser_dump_dom(whole, "view=timeline&selftest", 1400, 900);
    assert_non_null(dm);
    assert_non_null(dw);
    if (!strstr(dm, "\"errors\":[]")) fail_msg("page errors: %.400s", strstr(dm, "\"errors\""));
    assert_non_null(strstr(dw, "\"errors\":[]"));
    /* the bar, the overview and a block's tooltip say what was merged */
    assert_non_null(strstr(dm, "\"lodNote\":\""));
    assert_non_null(strstr(dm, "events shorter than"));
    assert_non_null(strstr(dm, "\"lod\":\""));
    const char *tip = strstr(dm, "\"blockTooltip\":\"");
    assert_non_null(tip);
    assert_non_null(strstr(tip, "events merged (each shorter than"));
    assert_true(selftest_num(dm, "timeline", "blocks") > 0);
    assert_true(selftest_num(dm, "timeline", "colouredPixels") > 10000);
    assert_null(strstr(dw, "\"lodNote\""));
    /* the tables come from every event, whatever the page draws */
    char *lm = ops_list(dm), *lw = ops_list(dw);
    assert_non_null(lm);
    assert_non_null(lw);
    assert_string_equal(lm, lw);
    free(lm);
    free(lw);
    free(dm);
    free(dw);
    unlink(merged);
    unlink(whole);
    opprof_trace_free(t);
}

/* Columns over a megabyte go in deflated, and the browser inflates them. */
static void test_big_columns_deflated_and_drawn(void **state)
{
    (void)state;
    opprof_trace *t = trace_of(400000, 0);
    char path[256];
    tmp_path(path, sizeof path, "deflated.html");
    assert_int_equal(opprof_report_write(t, NULL, NULL, path), OPPROF_OK);
    char *html = slurp(path);
    assert_non_null(html);
    const char *d = strstr(html, "id=\"opprof-events-0\" data-deflate=\"");
    assert_non_null(d);
    unsigned long long raw = strtoull(strstr(d, "data-deflate=\"") + strlen("data-deflate=\""), NULL, 10);
    const char *body = strchr(d, '>'), *end = body ? strstr(body, "</script>") : NULL;
    assert_non_null(end);
    /* base64 of the deflated bytes: well under the columns' own size */
    print_message("events block: %llu bytes deflated to %zu base64 characters\n", raw, (size_t)(end - body - 1));
    assert_true(raw > (1u << 20) && (unsigned long long)(end - body - 1) < raw);
    free(html);
    if (browser_path()) {
        char *dom = browser_dump_dom(path, "view=timeline&selftest", 1400, 900);
        assert_non_null(dom);
        if (!strstr(dom, "\"errors\":[]")) fail_msg("page errors: %.400s", dom ? strstr(dom, "\"errors\"") : "");
        assert_non_null(strstr(dom, "inflate:"));
        assert_true(selftest_num(dom, "timeline", "colouredPixels") > 10000);
        free(dom);
    }
    unlink(path);
    opprof_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_accounts_for_every_event),
        cmocka_unit_test(test_file_says_what_was_merged),
        cmocka_unit_test(test_page_draws_blocks_and_counts_every_event),
        cmocka_unit_test(test_big_columns_deflated_and_drawn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

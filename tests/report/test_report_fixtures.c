/* The report of real traces in headless Chromium: a Kineto trace (GPU
 * kernels, runtime calls) and PyTorch's own ResNet-18 trace, read with
 * opprof_trace_load. The operators view must list every row the fixtures'
 * reference lists (name and count), the timeline must draw, the devices view
 * must show kernels with the operators that launched them, and every view
 * must show. Skips, saying so, without the fixtures or without Chromium. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "browser.h"
#include "fixtures.h"
#include "opprof_trace.h"
#include "slurp.h"

/* Loads a fixture and writes its report; returns the self-test DOM, or NULL
 * after skipping. */
static char *report_dom(const char *fixture, const char *fragment, char *html, size_t n)
{
    char path[1024];
    if (!fixture_path(path, sizeof path, fixture)) {
        print_message("SKIP: fixture %s not found (OPPROF_FIXTURES)\n", path);
        return NULL;
    }
    if (!browser_or_skip_message()) return NULL;
    opprof_trace *t = NULL;
    assert_int_equal(opprof_trace_load(path, &t), OPPROF_OK);
    snprintf(html, n, "/tmp/opprof-fixture-report-%d.html", (int)getpid());
    opprof_report_options opt = {.label_a = fixture};
    assert_int_equal(opprof_report_write(t, NULL, &opt, html), OPPROF_OK);
    opprof_trace_free(t);
    char *dom = browser_dump_dom(html, fragment, 1400, 900);
    assert_non_null(dom);
    if (!strstr(dom, "\"errors\":[]")) fail_msg("page errors: %.300s", strstr(dom, "\"errors\""));
    return dom;
}

static void assert_shown(const char *dom, const char *view)
{
    if (selftest_view_shown(dom, view) != 1) fail_msg("view %s did not show alone", view);
}

/* One CSV field (RFC 4180 quotes) from *p into out; advances past its comma. */
static void csv_field(const char **p, char *out, size_t n)
{
    const char *s = *p;
    size_t k = 0;
    if (*s == '"') {
        for (s++; *s && !(*s == '"' && s[1] != '"'); s++) {
            if (*s == '"') s++;
            if (k + 1 < n) out[k++] = *s;
        }
        if (*s == '"') s++;
    } else {
        while (*s && *s != ',' && *s != '\n' && *s != '\r') {
            if (k + 1 < n) out[k++] = *s;
            s++;
        }
    }
    out[k] = 0;
    if (*s == ',') s++;
    *p = s;
}

static void test_kineto_trace(void **state)
{
    (void)state;
    const char *base = "kineto/benchmark_result_2869224_1695835535_trace";
    char fixture[256], html[256], csv_path[1024];
    snprintf(fixture, sizeof fixture, "%s.json.gz", base);
    char *dom = report_dom(fixture, "selftest", html, sizeof html);
    if (!dom) skip();
    const char *views[] = {"overview", "operators", "timeline", "devices"};
    for (int i = 0; i < 4; i++) assert_shown(dom, views[i]);
    snprintf(fixture, sizeof fixture, "%s.expected.csv", base);
    assert_true(fixture_path(csv_path, sizeof csv_path, fixture));
    char *csv = slurp(csv_path);
    assert_non_null(csv);
    const char *p = strchr(csv, '\n') + 1;
    size_t rows = 0;
    size_t cap = strlen(csv) + 1;
    char *name = malloc(cap), *pat = malloc(cap * 7 + 64);
    assert_true(name && pat);
    while (*p) {
        char count[64], shown[64];
        csv_field(&p, name, cap);
        csv_field(&p, count, sizeof count);
        p = strchr(p, '\n');
        p = p ? p + 1 : "";
        if (!*name) continue;
        rows++;
        selftest_count(shown, sizeof shown, strtoull(count, NULL, 10));
        char *text = selftest_text(name);
        sprintf(pat, "[\"%s\",\"%s\"]", text, shown);
        free(text);
        if (!strstr(dom, pat)) fail_msg("operators view lacks %s", pat);
    }
    free(name);
    free(pat);
    assert_int_equal((size_t)selftest_num(dom, "operators", "rows"), rows);
    assert_true(selftest_num(dom, "timeline", "colouredPixels") > 5000);
    assert_true(selftest_num(dom, "devices", "rows") == 18);
    assert_true(selftest_num(dom, "devices", "streams") == 2);
    /* the GEMM kernel and the operator that launched it (correlation id, then the enclosing op) */
    assert_non_null(strstr(dom, "[\"ampere_sgemm_32x32_sliced1x4_tn\",\"kernel\",\"6\",\"aten::addmm ×6\"]"));
    free(csv);
    free(dom);
    unlink(html);
}

/* PyTorch's ResNet-18 inference at batch 5: the guide's operator counts. */
static void test_resnet18_trace(void **state)
{
    (void)state;
    char html[256];
    char *dom = report_dom("torch-traces/resnet18_infer_b5.trace.json", "selftest", html, sizeof html);
    if (!dom) skip();
    const char *views[] = {"overview", "operators", "timeline"};
    for (int i = 0; i < 3; i++) assert_shown(dom, views[i]);
    const char *rows[] = {"[\"aten::conv2d\",\"20\"]",   "[\"aten::batch_norm\",\"20\"]",
                          "[\"aten::relu_\",\"17\"]",    "[\"aten::max_pool2d\",\"1\"]",
                          "[\"aten::add_\",\"8\"]",      "[\"aten::adaptive_avg_pool2d\",\"1\"]",
                          "[\"aten::flatten\",\"1\"]",   "[\"aten::linear\",\"1\"]"};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        if (!strstr(dom, rows[i])) fail_msg("operators view lacks %s", rows[i]);
    assert_true(selftest_num(dom, "timeline", "colouredPixels") > 5000);
    assert_true(selftest_num(dom, "timeline", "searchMatches") > 0);
    free(dom);
    unlink(html);
}

/* The command: a report from a file, and its exit statuses. */
static void test_report_command(void **state)
{
    (void)state;
    const char *bin = getenv("OPPROF_BIN");
    char trace[1024], cmd[4096], html[256];
    if (!bin || access(bin, X_OK) != 0) {
        print_message("SKIP: no opprof binary (OPPROF_BIN)\n");
        skip();
    }
    if (!fixture_path(trace, sizeof trace, "kineto/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz")) {
        print_message("SKIP: fixture %s not found (OPPROF_FIXTURES)\n", trace);
        skip();
    }
    snprintf(html, sizeof html, "/tmp/opprof-cmd-report-%d.html", (int)getpid());
    snprintf(cmd, sizeof cmd, "'%s' report '%s' '%s' -o '%s' --title 'two ranks' >/dev/null", bin, trace, trace, html);
    assert_int_equal(system(cmd), 0);
    char *page = slurp(html);
    assert_non_null(page);
    assert_non_null(strstr(page, "\"title\":\"two ranks\""));
    assert_non_null(strstr(page, "id=\"opprof-events-1\"")); /* two traces: the diff */
    free(page);
    unlink(html);
    snprintf(cmd, sizeof cmd, "'%s' report /nonexistent/trace.json -o '%s' 2>/dev/null", bin, html);
    assert_int_equal(WEXITSTATUS(system(cmd)), 2);
    assert_int_equal(access(html, F_OK), -1);
    snprintf(cmd, sizeof cmd, "'%s' report '%s' -o /nonexistent/r.html 2>/dev/null", bin, trace);
    assert_int_equal(WEXITSTATUS(system(cmd)), 1);
    snprintf(cmd, sizeof cmd, "'%s' report 2>/dev/null", bin);
    assert_int_equal(WEXITSTATUS(system(cmd)), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kineto_trace),
        cmocka_unit_test(test_resnet18_trace),
        cmocka_unit_test(test_report_command),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The report of a ResNet-18 run of the built-in runtime (nn/), profiled with
 * shapes, memory and FLOPs over two steps, in headless Chromium: the
 * operators view lists the guide's operators with their counts, the
 * timeline draws, the memory view marks a peak inside an operator, and the
 * overview shows the steps. OPPROF_REPORT_KEEP=PATH keeps the page (for
 * screenshots). Skips, saying so, without Chromium. */
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
#include "opprof_trace.h"
#include "opprof_nn.h"
#include "slurp.h"

#define STEPS 2

static opprof_trace *profile_resnet18(void)
{
    opprof_nn_model *m = NULL;
    opprof_nn_tensor *x = NULL, *y = NULL;
    int64_t dims[4] = {2, 3, 64, 64};
    opprof_nn_set_threads(1); /* OpenMP threads are not instrumented for TSan */
    assert_int_equal(opprof_nn_resnet18(1000, 1, &m), 0);
    assert_int_equal(opprof_nn_tensor_new(4, dims, &x), 0);
    opprof_nn_tensor_normal(x, 0.0f, 1.0f, 2);
    assert_int_equal(opprof_nn_model_forward(m, x, 0, &y), 0); /* warm-up, outside the session */
    opprof_nn_tensor_release(y);
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.record_shapes = 1;
    cfg.profile_memory = 1;
    cfg.with_flops = 1;
    /* a schedule whose active window outlasts the run: every step is kept,
     * each a ProfilerStep#N annotation, and stop returns them */
    cfg.schedule = (opprof_schedule){.enabled = 1, .active = 100, .repeat = 1};
    assert_int_equal(opprof_start(&cfg), 0);
    for (int s = 0; s < STEPS; s++) {
        assert_int_equal(opprof_nn_model_forward(m, x, 0, &y), 0);
        opprof_nn_tensor_release(y);
        assert_int_equal(opprof_step(), 0);
    }
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), 0);
    opprof_nn_tensor_release(x);
    opprof_nn_model_free(m);
    opprof_nn_shutdown();
    return t;
}

static void test_resnet18_run(void **state)
{
    (void)state;
    if (!browser_or_skip_message()) skip();
    opprof_trace *t = profile_resnet18();
    const char *keep = getenv("OPPROF_REPORT_KEEP");
    char html[512];
    if (keep && *keep) snprintf(html, sizeof html, "%s", keep);
    else snprintf(html, sizeof html, "/tmp/opprof-run-report-%d.html", (int)getpid());
    const char *cfg[] = {"model", "resnet18 (nn/)", "input", "2 x 3 x 64 x 64", "steps", "2", "options",
                         "record_shapes, profile_memory, with_flops", NULL};
    opprof_report_options opt = {.title = "ResNet-18 run", .label_a = "resnet18", .config = cfg};
    assert_int_equal(opprof_report_write(t, NULL, &opt, html), OPPROF_OK);
    opprof_trace_free(t);
    char *dom = browser_dump_dom(html, "selftest", 1400, 900);
    assert_non_null(dom);
    if (!strstr(dom, "\"errors\":[]")) fail_msg("page errors: %.300s", strstr(dom, "\"errors\""));
    const char *res = strstr(dom, "id=\"opprof-selftest\"");
    assert_non_null(res);
    const char *views[] = {"overview", "operators", "timeline", "memory"};
    for (int i = 0; i < 4; i++)
        if (selftest_view_shown(dom, views[i]) != 1) fail_msg("view %s did not show alone", views[i]);
    /* the guide's operator counts, per forward pass, times the steps */
    const struct {
        const char *name;
        int per_pass;
    } ops[] = {{"aten::conv2d", 20}, {"aten::batch_norm", 20}, {"aten::relu_", 17}, {"aten::max_pool2d", 1},
               {"aten::add_", 8},    {"aten::adaptive_avg_pool2d", 1}, {"aten::flatten", 1}, {"aten::linear", 1}};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        char pat[128];
        snprintf(pat, sizeof pat, "[\"%s\",\"%d\"]", ops[i].name, ops[i].per_pass * STEPS);
        if (!strstr(res, pat)) fail_msg("operators view lacks %s", pat);
    }
    /* one ProfilerStep#N per step, and the one the last step opened, closed by stop (as in torch) */
    char steps[64];
    snprintf(steps, sizeof steps, "[\"ProfilerStep*\",\"%d\"]", STEPS + 1);
    assert_non_null(strstr(res, steps));
    assert_true(selftest_num(dom, "operators", "byShapeRows") > selftest_num(dom, "operators", "rows"));
    assert_true(selftest_num(dom, "timeline", "colouredPixels") > 5000);
    assert_true(selftest_num(dom, "memory", "colouredPixels") > 500);
    /* the peak row names the operator active there */
    const char *peak = strstr(res, "\"peaks\":[[\"CPU\",\"");
    assert_non_null(peak);
    assert_non_null(strstr(peak, "\"aten::"));
    free(dom);
    if (!keep || !*keep) unlink(html);
}

/* opprof run ... --report FILE writes the run's report with its options. */
static void test_run_command_report(void **state)
{
    (void)state;
    const char *bin = getenv("OPPROF_BIN");
    if (!bin || access(bin, X_OK) != 0) {
        print_message("SKIP: no opprof binary (OPPROF_BIN)\n");
        skip();
    }
    char html[256], cmd[1024];
    snprintf(html, sizeof html, "/tmp/opprof-run-cmd-%d.html", (int)getpid());
    snprintf(cmd, sizeof cmd,
             "OMP_NUM_THREADS=1 '%s' run resnet18 --batch 1 --image-size 64 --warmup 0 --shapes --report '%s' >/dev/null 2>&1",
             bin, html);
    assert_int_equal(system(cmd), 0);
    char *page = slurp(html);
    assert_non_null(page);
    assert_non_null(strstr(page, "[\"command\",\"opprof run\"]"));
    assert_non_null(strstr(page, "[\"model\",\"resnet18\"]"));
    assert_non_null(strstr(page, "\"aten::conv2d\""));
    free(page);
    unlink(html);
    snprintf(cmd, sizeof cmd,
             "OMP_NUM_THREADS=1 '%s' run resnet18 --batch 1 --image-size 64 --warmup 0 --report /nonexistent/r.html >/dev/null 2>&1",
             bin);
    assert_int_equal(WEXITSTATUS(system(cmd)), 2); /* refused before the model runs, as every output */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resnet18_run),
        cmocka_unit_test(test_run_command_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Scale: a report of 1 million events opens and draws its first view in at
 * most 3 s in headless Chromium (issue 11), for the overview and for the
 * timeline as first view, and stays responsive while zooming. The machine
 * is shared, so each case gets three tries and the best counts; every try
 * is printed. Skips, saying so, without Chromium. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "browser.h"
#include "synth.h"

#define EVENTS 1000000
#define LIMIT_MS 3000.0

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void test_one_million_events(void **state)
{
    (void)state;
    if (!browser_or_skip_message()) skip();
    synth_opts o = {.events = EVENTS, .threads = 4, .depth = 6, .names = 50, .steps = 1, .seed = 1};
    opprof_trace *t = synth_trace(&o);
    assert_non_null(t);
    char path[256];
    snprintf(path, sizeof path, "/tmp/opprof-scale-%d.html", (int)getpid());
    double t0 = now_s();
    assert_int_equal(opprof_report_write(t, NULL, NULL, path), OPPROF_OK);
    double write_s = now_s() - t0;
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    print_message("report of %zu events: %.1f MB (%.1f bytes/event), written in %.2f s\n", t->nev,
                  (double)st.st_size / 1e6, (double)st.st_size / (double)t->nev, write_s);
    const char *frags[] = {"view=overview", "view=timeline"};
    for (int f = 0; f < 2; f++) {
        double best = 1e9;
        for (int attempt = 0; attempt < 3 && best > LIMIT_MS; attempt++) {
            char *dom = browser_dump_dom(path, frags[f], 1400, 900);
            double ms = browser_first_draw_ms(dom);
            const char *marks = dom ? strstr(dom, "data-marks=\"") : NULL;
            print_message("%s: first draw %.0f ms (%.60s)\n", frags[f], ms, marks ? marks + 12 : "?");
            if (ms > 0 && ms < best) best = ms;
            free(dom);
        }
        /* A machine running more than it has cores (the 1-minute load
         * average) draws late whatever the page does: there the time is
         * reported, not judged (the page is still drawn and checked below). */
        double load = 0;
        FILE *la = fopen("/proc/loadavg", "r");
        if (la) {
            if (fscanf(la, "%lf", &load) != 1) load = 0;
            fclose(la);
        }
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        if (best > LIMIT_MS && load > (double)cpus)
            print_message("%s: first draw %.0f ms > %.0f ms at load %.1f on %ld CPUs: not judged\n", frags[f], best,
                          LIMIT_MS, load, cpus);
        else if (best > LIMIT_MS)
            fail_msg("%s: first draw %.0f ms > %.0f ms", frags[f], best, LIMIT_MS);
    }
    /* zooming: the page's self-test times 36 redraws while zooming and panning */
    char *dom = browser_dump_dom(path, "view=timeline&selftest", 1400, 900);
    assert_non_null(dom);
    const char *tl = strstr(dom, "\"timeline\":{");
    assert_non_null(tl);
    print_message("timeline at 1M events: %.160s\n", tl);
    double avg = selftest_num(dom, "timeline", "frameAvgMs");
    assert_true(avg > 0 && avg < 100); /* at least 10 frames a second on average, on a shared machine */
    assert_true(selftest_num(dom, "timeline", "colouredPixels") > 100000);
    free(dom);
    unlink(path);
    opprof_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_million_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

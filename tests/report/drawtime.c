/* report_draw: how long headless Chromium takes to open a report and draw
 * its first view, read back from the page (data-first-draw-ms, from the
 * navigation's start), for the benchmarks and for looking by hand.
 *   report_draw REPORT.html [--tries N] [--screenshot PNG] [FRAGMENT...]
 * Each fragment (default: view=overview and view=timeline) is loaded N
 * times (default 3); every try is printed, then the best. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "browser.h"

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help")) {
        fprintf(stderr, "usage: report_draw REPORT.html [--tries N] [--screenshot PNG] [FRAGMENT...]\n");
        return argc < 2 ? 2 : 0;
    }
    if (!browser_or_skip_message()) return 77;
    const char *html = argv[1], *png = NULL, *frags[32];
    int tries = 3, nfrags = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--tries") && i + 1 < argc) tries = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--screenshot") && i + 1 < argc) png = argv[++i];
        else if (nfrags < 32) frags[nfrags++] = argv[i];
    }
    if (!nfrags) {
        frags[nfrags++] = "view=overview";
        frags[nfrags++] = "view=timeline";
    }
    int failed = 0;
    for (int f = 0; f < nfrags; f++) {
        double best = -1;
        for (int k = 0; k < tries; k++) {
            char *dom = browser_dump_dom(html, frags[f], 1400, 900);
            double ms = browser_first_draw_ms(dom);
            const char *marks = dom ? strstr(dom, "data-marks=\"") : NULL;
            const char *mend = marks ? strchr(marks + 12, '"') : NULL;
            printf("%s try %d: first draw %.0f ms (%.*s)\n", frags[f], k + 1, ms, mend ? (int)(mend - marks - 12) : 1,
                   mend ? marks + 12 : "?");
            if (ms > 0 && (best < 0 || ms < best)) best = ms;
            free(dom);
        }
        printf("%s best: %.0f ms\n", frags[f], best);
        if (best < 0) failed = 1;
    }
    if (png) {
        if (browser_screenshot(html, frags[nfrags - 1], 1400, 900, png) != 0) {
            fprintf(stderr, "report_draw: no screenshot\n");
            failed = 1;
        } else {
            printf("screenshot: %s\n", png);
        }
    }
    return failed;
}

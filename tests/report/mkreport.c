/* report_synth: writes the report of a synthetic trace, for measuring and
 * looking at the page by hand.
 *   report_synth OUT.html [EVENTS] [--memory] [--device] [--diff] [--hostile] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "synth.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: report_synth OUT.html [EVENTS] [--memory] [--device] [--diff] [--hostile]\n");
        return 2;
    }
    synth_opts o = {.events = 10000, .threads = 4, .depth = 6, .names = 50, .steps = 1, .seed = 1};
    int diff = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--memory")) o.memory = 1;
        else if (!strcmp(argv[i], "--device")) o.device = 1;
        else if (!strcmp(argv[i], "--diff")) diff = 1;
        else if (!strcmp(argv[i], "--hostile")) o.hostile = "</script><img src=x onerror=alert(1)>";
        else o.events = strtoull(argv[i], NULL, 10);
    }
    struct timespec a, b, c;
    clock_gettime(CLOCK_MONOTONIC, &a);
    opprof_trace *t = synth_trace(&o), *t2 = NULL;
    if (diff) {
        o.seed = 2;
        t2 = synth_trace(&o);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    const char *cfg[] = {"source", "synthetic", "events", argc > 2 ? argv[2] : "10000", NULL};
    opprof_report_options ro = {.title = "synthetic trace", .config = cfg};
    int rc = opprof_report_write(t, t2, &ro, argv[1]);
    clock_gettime(CLOCK_MONOTONIC, &c);
    if (rc) fprintf(stderr, "report: %s: %s\n", opprof_strerror(rc), opprof_last_error());
    printf("events %zu, build %.3f s, report %.3f s\n", t ? t->nev : 0,
           (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9,
           (double)(c.tv_sec - b.tv_sec) + (double)(c.tv_nsec - b.tv_nsec) * 1e-9);
    opprof_trace_free(t);
    opprof_trace_free(t2);
    return rc ? 1 : 0;
}

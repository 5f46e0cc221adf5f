/* Bytes per slice of Perfetto's format against Chrome JSON, for one session
 * written every way.
 *
 *   bench_pftrace [SLICES=1000000] [DIR=/tmp]
 *   bench_pftrace TRACE [DIR=/tmp]     a session read from a file instead
 *
 * Two synthetic sessions of SLICES ranges with repeated names, on one
 * thread: "calls" is what -finstrument-functions gives (a loop calling a
 * ~10 ns function under heavier ones: times of tens of nanoseconds), "ops"
 * is a profiled model (operators of 2-50 us nested three deep, with input
 * shapes). Each is exported as .json, .json.gz, .pftrace (compressed
 * batches, the default), .pftrace with plain packets (OPPROF_PFTRACE_COMPRESS=0)
 * and .pftrace.gz; prints the size of each in bytes per slice, its ratio to the JSON, the
 * export time, and checks that the .pftrace reads back with every event. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/model.h"
#include "opprof.h"
#include "timing.h"

static opprof_trace *calls_trace(size_t target)
{
    static const char *const fns[] = {"main", "sort_all", "qsort_r", "cmp_int", "hash_block", "mix64"};
    opprof_trace *t = op_trace_new();
    uint32_t th = (uint32_t)op_trace_thread(t, 100, 100), id[6];
    for (int i = 0; i < 6; i++) id[i] = op_trace_intern(t, fns[i], strlen(fns[i]));
    int64_t ts = 0;
    unsigned rnd = 7;
    while (t->nev < target) {
        size_t outer = t->nev;
        op_trace_add_event(t, th, id[1], OPPROF_CAT_CPU_OP, ts, 0);
        int64_t start = ts;
        ts += 40;
        for (int k = 0; k < 200 && t->nev < target; k++) {
            rnd = rnd * 1103515245u + 12345u;
            int64_t d = 8 + (int64_t)(rnd >> 28); /* 8..23 ns: the comparator */
            op_trace_add_event(t, th, id[3], OPPROF_CAT_CPU_OP, ts, d);
            ts += d + 3;
            if (k % 50 == 49 && t->nev < target) { /* now and then a heavier call with a child */
                op_trace_add_event(t, th, id[4], OPPROF_CAT_CPU_OP, ts, 900);
                if (t->nev < target) op_trace_add_event(t, th, id[5], OPPROF_CAT_CPU_OP, ts + 100, 300);
                ts += 905;
            }
        }
        t->ev[outer].dur_ns = ts - start;
        ts += 60;
    }
    t->base_time_ns = 1719853884000000000;
    op_trace_finish(t);
    return t;
}

static opprof_trace *ops_trace(size_t target)
{
    static const char *const ops[] = {"aten::conv2d", "aten::convolution", "aten::_convolution",
                                      "aten::mkldnn_convolution", "aten::batch_norm", "aten::native_batch_norm",
                                      "aten::relu_", "aten::empty", "aten::add_", "aten::addmm"};
    static const char *const shapes[] = {"[[5, 64, 56, 56], [64, 64, 3, 3], [], [], [], [], []]",
                                         "[[5, 128, 28, 28], [128], [128], [128], [128], [], [], [], []]",
                                         "[[5, 256, 14, 14]]", "[[5, 512], [1000, 512], [1000]]"};
    opprof_trace *t = op_trace_new();
    uint32_t th = (uint32_t)op_trace_thread(t, 200, 200), id[10], sh[4];
    for (int i = 0; i < 10; i++) id[i] = op_trace_intern(t, ops[i], strlen(ops[i]));
    for (int i = 0; i < 4; i++) sh[i] = op_trace_intern(t, shapes[i], strlen(shapes[i]));
    t->options |= OP_TRACE_SHAPES;
    int64_t ts = 0;
    unsigned rnd = 12345;
    while (t->nev < target) {
        rnd = rnd * 1103515245u + 12345u;
        int64_t d = 2000 + (int64_t)(rnd >> 20) % 48000;
        int o = (int)((rnd >> 8) % 10), s = (int)((rnd >> 4) % 4);
        op_event *e = op_trace_add_event(t, th, id[o], OPPROF_CAT_CPU_OP, ts, d);
        op_evx_add(t, e)->shapes = sh[s];
        for (int c = 0; c < 2 && t->nev < target; c++) {
            e = op_trace_add_event(t, th, id[(o + c + 1) % 10], OPPROF_CAT_CPU_OP, ts + 10 + c * (d / 2), d / 2 - 30);
            op_evx_add(t, e)->shapes = sh[s];
        }
        ts += d + 40;
    }
    t->base_time_ns = 1719853884000000000;
    op_trace_finish(t);
    return t;
}

static double file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? (double)st.st_size : -1;
}

static int run(const char *label, opprof_trace *t, const char *dir)
{
    static const char *const ext[] = {"json", "json.gz", "pftrace", "pftrace", "pftrace.gz"};
    static const char *const shown[] = {"json", "json.gz", "pftrace", "pftrace plain", "pftrace.gz"};
    double json_bytes = 0;
    size_t n = opprof_trace_event_count(t);
    printf("%s: %zu slices\n", label, n);
    for (int k = 0; k < 5; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/bench_pftrace_%s.%s", dir, label, ext[k]);
        if (k == 3) setenv("OPPROF_PFTRACE_COMPRESS", "0", 1);
        double t0 = now_s();
        int rc = opprof_export_chrome_trace(t, path);
        if (k == 3) unsetenv("OPPROF_PFTRACE_COMPRESS");
        if (rc != OPPROF_OK) {
            fprintf(stderr, "bench_pftrace: %s\n", opprof_last_error());
            return 1;
        }
        double secs = now_s() - t0, bytes = file_size(path);
        if (k == 0) json_bytes = bytes;
        double r0 = now_s();
        opprof_trace *back = NULL;
        if (opprof_trace_load(path, &back) != OPPROF_OK || opprof_trace_event_count(back) != n) {
            fprintf(stderr, "bench_pftrace: %s does not read back: %s\n", path, opprof_last_error());
            return 1;
        }
        double rsecs = now_s() - r0;
        opprof_trace_free(back);
        printf("  %-13s %12.0f bytes  %7.2f bytes/slice  %6.3fx the JSON  export %.3f s  read %.3f s\n", shown[k], bytes,
               bytes / (double)n, bytes / json_bytes, secs, rsecs);
        unlink(path);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 2 ? argv[2] : "/tmp";
    if (argc > 1 && (argv[1][0] < '0' || argv[1][0] > '9')) {
        opprof_trace *t = NULL;
        if (opprof_trace_load(argv[1], &t) != OPPROF_OK) {
            fprintf(stderr, "bench_pftrace: %s\n", opprof_last_error());
            return 1;
        }
        int rc = run("file", t, dir);
        opprof_trace_free(t);
        return rc;
    }
    size_t n = argc > 1 ? (size_t)atol(argv[1]) : 1000000;
    opprof_trace *c = calls_trace(n);
    int rc = run("calls", c, dir);
    opprof_trace_free(c);
    opprof_trace *o = ops_trace(n);
    rc |= run("ops", o, dir);
    opprof_trace_free(o);
    return rc;
}

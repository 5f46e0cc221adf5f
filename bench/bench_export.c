/* Chrome trace export throughput against PyTorch's own exporter, measured
 * in the same run.
 *
 *   bench_export [EVENTS=1000000] [RUNS=5] [DIR=/tmp]
 *
 * The reference: bench/bench_export_torch.py profiles a loop of operators
 * with torch.profiler until EVENTS events are recorded and times
 * prof.export_chrome_trace (the export alone). Ours: a trace of EVENTS events
 * shaped like a profiled model (nested operators, input shapes and types on
 * the operators) exported with opprof_export_chrome_trace to a plain file and
 * to a .gz file, fsync and rename included. Prints MB/s (10^6 bytes) and
 * events/s for each, the ratio of ours to PyTorch's, and gzip time over
 * plain time; medians of RUNS runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "model/model.h"
#include "opprof_trace.h"
#include "timing.h"

#ifndef OPPROF_SOURCE_DIR
#define OPPROF_SOURCE_DIR "."
#endif

/* A step is a ProfilerStep annotation over layers; a layer is a user
 * annotation over operators, each calling two or three children. */
static opprof_trace *model_like_trace(size_t target, int shapes_on)
{
    static const char *const ops[] = {"aten::conv2d", "aten::convolution", "aten::_convolution",
                                      "aten::mkldnn_convolution", "aten::batch_norm", "aten::_batch_norm_impl_index",
                                      "aten::native_batch_norm", "aten::relu_", "aten::empty", "aten::add_",
                                      "aten::max_pool2d", "aten::addmm", "aten::linear", "aten::t", "aten::view"};
    static const char *const shapes[] = {"[[5, 64, 56, 56], [64, 64, 3, 3], [], [], [], [], [], [], [], [], [], []]",
                                         "[[5, 128, 28, 28], [128], [128], [128], [128], [], [], [], []]",
                                         "[[5, 256, 14, 14]]", "[[5, 512], [1000, 512], [1000]]", "[]"};
    static const char *const types[] = {"[\"float\", \"float\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", "
                                        "\"\"]",
                                        "[\"float\", \"float\", \"float\", \"float\", \"float\", \"Scalar\", "
                                        "\"Scalar\", \"Scalar\", \"Scalar\"]",
                                        "[\"float\"]", "[\"float\", \"float\", \"float\"]", "[]"};
    opprof_trace *t = op_trace_new();
    int64_t th = op_trace_thread(t, 4242, 4242);
    t->threads[th].name = op_trace_intern(t, "python3", 7);
    uint32_t op_ids[15], shape_ids[5], type_ids[5];
    for (int i = 0; i < 15; i++) op_ids[i] = op_trace_intern(t, ops[i], strlen(ops[i]));
    for (int i = 0; i < 5; i++) {
        shape_ids[i] = op_trace_intern(t, shapes[i], strlen(shapes[i]));
        type_ids[i] = op_trace_intern(t, types[i], strlen(types[i]));
    }
    if (shapes_on) t->options |= OP_TRACE_SHAPES;
    int64_t ts = 0;
    unsigned rnd = 12345;
    for (int step = 0; t->nev < target; step++) {
        char name[32];
        int len = snprintf(name, sizeof name, "ProfilerStep#%d", step);
        size_t step_idx = t->nev;
        op_trace_add_event(t, (uint32_t)th, op_trace_intern(t, name, (size_t)len), OPPROF_CAT_USER_ANNOTATION, ts, 0);
        int64_t step_start = ts;
        for (int k = 0; k < 1000 && t->nev < target; k++) {
            /* an operator with two nested children */
            rnd = rnd * 1103515245u + 12345u;
            int64_t d = 2000 + (int64_t)(rnd >> 20) % 50000;
            int o = (int)((rnd >> 8) % 15), s = (int)((rnd >> 4) % 5);
            op_event *e = op_trace_add_event(t, (uint32_t)th, op_ids[o], OPPROF_CAT_CPU_OP, ts + 10, d);
            if (shapes_on) {
                op_evx_add(t, e)->shapes = shape_ids[s];
                op_evx_add(t, e)->types = type_ids[s];
            }
            for (int c = 0; c < 2 && t->nev < target; c++) {
                e = op_trace_add_event(t, (uint32_t)th, op_ids[(o + c + 1) % 15], OPPROF_CAT_CPU_OP,
                                       ts + 20 + c * (d / 2), d / 2 - 30);
                if (shapes_on) {
                    op_evx_add(t, e)->shapes = shape_ids[s];
                    op_evx_add(t, e)->types = type_ids[s];
                }
            }
            ts += d + 40;
        }
        t->ev[step_idx].dur_ns = ts - step_start;
        ts += 100;
    }
    t->base_time_ns = 1719853884000000000;
    op_trace_finish(t);
    return t;
}

static off_t file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? st.st_size : -1;
}

int main(int argc, char **argv)
{
    size_t nev = argc > 1 ? (size_t)atol(argv[1]) : 1000000;
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    const char *dir = argc > 3 ? argv[3] : "/tmp";
    if (runs < 1 || runs > 50) runs = 5;

    /* The reference first: PyTorch 1.13 (Debian's python3-torch). */
    double torch_s = 0, torch_bytes = 0, torch_events = 0;
    char cmd[1024], line[512] = "";
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/bench/bench_export_torch.py %zu 3 %s 2>/dev/null", OPPROF_SOURCE_DIR,
             nev, dir);
    FILE *p = popen(cmd, "r");
    if (p && fgets(line, sizeof line, p)) {
        double ev = 0, by = 0, s = 0;
        if (sscanf(line, "events=%lf bytes=%lf seconds=%lf", &ev, &by, &s) == 3 && s > 0) {
            torch_events = ev;
            torch_bytes = by;
            torch_s = s;
        }
    }
    if (p) pclose(p);
    if (torch_s > 0)
        printf("pytorch  export_chrome_trace: %.0f events, %.1f MB in %.3f s: %.1f MB/s, %.2f M events/s  (%s",
               torch_events, torch_bytes / 1e6, torch_s, torch_bytes / 1e6 / torch_s, torch_events / 1e6 / torch_s,
               strstr(line, "torch=") ? strstr(line, "torch=") : "?\n");
    else
        printf("pytorch  reference unavailable (needs /usr/bin/python3 with python3-torch: scripts/deps.sh bench)\n");

    opprof_trace *t = model_like_trace(nev, 1);
    char plain[512], gz[512];
    snprintf(plain, sizeof plain, "%s/opprof_bench_export.%d.json", dir, (int)getpid());
    snprintf(gz, sizeof gz, "%s/opprof_bench_export.%d.json.gz", dir, (int)getpid());
    double tp[50], tg[50];
    /* Each kind of run back to back, so that one does not pay for the
     * write-back of the other's file; one unmeasured run first, which pays
     * for what the Python process left behind (gigabytes to reclaim). */
    for (int r = -1; r < runs; r++) {
        double t0 = now_s();
        if (opprof_export_chrome_trace(t, plain) != OPPROF_OK) {
            fprintf(stderr, "export failed: %s\n", opprof_last_error());
            return 1;
        }
        if (r >= 0) tp[r] = now_s() - t0;
    }
    for (int r = -1; r < runs; r++) {
        double t0 = now_s();
        if (opprof_export_chrome_trace(t, gz) != OPPROF_OK) {
            fprintf(stderr, "export failed: %s\n", opprof_last_error());
            return 1;
        }
        if (r >= 0) tg[r] = now_s() - t0;
    }
    double sp = median(tp, runs), sg = median(tg, runs);
    double bp = (double)file_size(plain), bg = (double)file_size(gz);
    /* The same without input shapes: content closer to PyTorch 1.13's file. */
    opprof_trace *bare = model_like_trace(nev, 0);
    double tb[50];
    for (int r = 0; r < runs; r++) {
        double t0 = now_s();
        if (opprof_export_chrome_trace(bare, plain) != OPPROF_OK) {
            fprintf(stderr, "export failed: %s\n", opprof_last_error());
            return 1;
        }
        tb[r] = now_s() - t0;
    }
    double sb = median(tb, runs), bb = (double)file_size(plain);
    opprof_trace_free(bare);
    printf("opprof   plain .json:         %zu events, %.1f MB in %.3f s: %.1f MB/s, %.2f M events/s\n",
           opprof_trace_event_count(t), bp / 1e6, sp, bp / 1e6 / sp, (double)nev / 1e6 / sp);
    printf("opprof   plain, no shapes:    %zu events, %.1f MB in %.3f s: %.1f MB/s, %.2f M events/s\n", nev, bb / 1e6,
           sb, bb / 1e6 / sb, (double)nev / 1e6 / sb);
    printf("opprof   gzip  .json.gz:      %.1f MB (%.1f MB of JSON) in %.3f s: %.1f MB/s of JSON\n", bg / 1e6,
           bp / 1e6, sg, bp / 1e6 / sg);
    if (torch_s > 0) {
        printf("ratio    opprof/pytorch: %.2fx bytes/s, %.2fx events/s (goal >= 3x bytes/s)\n",
               (bp / sp) / (torch_bytes / torch_s), ((double)nev / sp) / (torch_events / torch_s));
        printf("ratio    opprof/pytorch, no shapes: %.2fx bytes/s, %.2fx events/s\n",
               (bb / sb) / (torch_bytes / torch_s), ((double)nev / sb) / (torch_events / torch_s));
    }
    printf("ratio    gzip time / plain time: %.2f (goal <= 2)\n", sg / sp);
    printf("(medians of %d runs; files in %s, fsync and rename included; machine shared, figures noisy)\n", runs, dir);
    unlink(plain);
    unlink(gz);
    opprof_trace_free(t);
    return 0;
}

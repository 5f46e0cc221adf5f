/* The trace reader against ../shared/tools/ref_summary.py on the same file,
 * in the same run: the uncompressed nccl_data Kineto trace (decompressed
 * into /tmp). Prints the median time of each, the reader's MB/s of JSON, the
 * speed ratio, and the peak RSS of a process that only loads the trace, as a
 * multiple of the file size (targets: >= 300 MB/s, >= 10x, <= 2x).
 *
 *   bench_import [TRACE.json]       default: decompress the fixture
 * OPPROF_FIXTURES names the fixture folder (default ../shared/fixtures),
 * OPPROF_REF the reference script (default ../shared/tools/ref_summary.py). */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "opprof_trace.h"
#include "child.h"
#include "timing.h"

static int decompress(const char *gz, const char *out)
{
    gzFile in = gzopen(gz, "rb");
    FILE *o = fopen(out, "wb");
    if (!in || !o) return -1;
    static char buf[1 << 16];
    int n;
    while ((n = gzread(in, buf, sizeof buf)) > 0) fwrite(buf, 1, (size_t)n, o);
    gzclose(in);
    return fclose(o) == 0 && n == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--load-once")) { /* the child measured for RSS */
        opprof_trace *t;
        if (opprof_trace_load(argv[2], &t) != 0) return 2;
        opprof_trace_free(t);
        return 0;
    }
    const char *fx = getenv("OPPROF_FIXTURES"), *ref = getenv("OPPROF_REF");
    if (!fx || !*fx) fx = "../shared/fixtures";
    if (!ref || !*ref) ref = "../shared/tools/ref_summary.py";
    char path[1024];
    if (argc > 1) {
        snprintf(path, sizeof path, "%s", argv[1]);
    } else {
        char gz[1024];
        snprintf(gz, sizeof gz, "%s/kineto/nccl_data.json.gz", fx);
        snprintf(path, sizeof path, "/tmp/opprof_bench_nccl_data.json");
        if (decompress(gz, path) != 0) {
            fprintf(stderr, "bench_import: cannot decompress %s (set OPPROF_FIXTURES)\n", gz);
            return 1;
        }
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return 1;
    }
    double mb = (double)st.st_size / 1e6;

    enum { OURS = 15, REFS = 5 };
    double ours[OURS], refs[REFS];
    size_t nev = 0;
    for (int i = 0; i < OURS; i++) {
        opprof_trace *t;
        double t0 = now_s();
        if (opprof_trace_load(path, &t) != 0) {
            fprintf(stderr, "bench_import: %s\n", opprof_last_error());
            return 1;
        }
        ours[i] = now_s() - t0;
        nev = opprof_trace_event_count(t);
        opprof_trace_free(t);
    }
    char *ref_argv[] = {"python3", (char *)ref, path, NULL};
    long ref_rss = 0, our_rss = 0;
    for (int i = 0; i < REFS; i++) refs[i] = child_run(ref_argv, &ref_rss);
    char self[1024];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return 1;
    self[n] = '\0';
    char *child_argv[] = {self, "--load-once", path, NULL};
    child_run(child_argv, &our_rss);

    double o = median(ours, OURS), r = median(refs, REFS);
    printf("bench_import: %s, %.2f MB, %zu events (medians of %d and %d runs; shared machine)\n", path, mb, nev,
           OURS, REFS);
    printf("  opprof_trace_load   %8.2f ms  %7.1f MB/s   peak RSS %6.1f MB = %.2fx the file\n", o * 1e3, mb / o,
           (double)our_rss / 1024.0, (double)our_rss * 1024.0 / (double)st.st_size);
    printf("  ref_summary.py      %8.2f ms  %7.1f MB/s   peak RSS %6.1f MB\n", r * 1e3, mb / r,
           (double)ref_rss / 1024.0);
    printf("  ratio: opprof is %.1fx faster (target >= 10x); %.0f MB/s (target >= 300)\n", r / o, mb / o);
    return 0;
}

/* bench_wholeprog: `opprof exec` on a whole program built with
 * -finstrument-functions (wholeprog_work: 30 million calls of a ~10 ns leaf
 * and heavier functions), against the same program run without opprof. Each
 * run is a child process timed from spawn to exit, with its peak RSS; the
 * table's call counts are checked against the program's known counts.
 *
 *   build/bin/bench_wholeprog [--rounds R] [EXEC OPTIONS...]
 *
 * Extra options go to opprof exec (default: a table only, with the cap
 * raised above the program's 30.1M calls so that none is dropped). Targets
 * from issue 18 for the table-only run: wall <= 3x plain, RSS growth <= 64 MB,
 * counts exact. With --trace FILE (streamed: no cap) the events of each name
 * in the written file are counted too; target: peak RSS <= 256 MB, counts
 * exact. A .pftrace is read back with opprof's reader (opprof_trace_load),
 * and its size per slice printed (issue 18's goal: <= 12 bytes). */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zlib.h>

#include "opprof_trace.h"

#include "child.h"
#include "timing.h"

/* The "# of Calls" of the row named name in the table text (its last
 * column), -1 when absent. */
static long calls_of(const char *table, const char *name)
{
    size_t nl = strlen(name);
    for (const char *l = table; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
        const char *p = l;
        while (*p == ' ') p++;
        if (strncmp(p, name, nl) != 0 || p[nl] != ' ') continue;
        const char *e = strchr(p, '\n');
        if (!e) e = p + strlen(p);
        while (e > p && e[-1] == ' ') e--;
        const char *s = e;
        while (s > p && s[-1] != ' ') s--;
        return atol(s);
    }
    return -1;
}

/* Counts the events of each of the n names in the Chrome trace at path
 * (plain or gzip'd), as opprof writes them, one a line, into calls[]; -1
 * when the file cannot be read. */
static int trace_calls(const char *path, const char *const *names, size_t n, long *calls)
{
    gzFile f = gzopen(path, "rb");
    if (!f) return -1;
    static const char pre[] = "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"";
    char line[4096];
    for (size_t i = 0; i < n; i++) calls[i] = 0;
    gzbuffer(f, 1 << 20);
    while (gzgets(f, line, sizeof line)) {
        const char *p = strstr(line, pre);
        if (!p) continue;
        p += sizeof pre - 1;
        const char *q = strchr(p, '"');
        for (size_t i = 0; q && i < n; i++)
            if ((size_t)(q - p) == strlen(names[i]) && !strncmp(p, names[i], (size_t)(q - p))) calls[i]++;
    }
    gzclose(f);
    return 0;
}

/* The same, from a .pftrace read with opprof's own reader; *slices gets
 * the file's event count. */
static int pftrace_calls(const char *path, const char *const *names, size_t n, long *calls, size_t *slices)
{
    opprof_trace *t = NULL;
    if (opprof_trace_load(path, &t) != OPPROF_OK) {
        fprintf(stderr, "bench_wholeprog: %s: %s\n", path, opprof_last_error());
        return -1;
    }
    for (size_t i = 0; i < n; i++) calls[i] = 0;
    *slices = opprof_trace_event_count(t);
    for (size_t k = 0; k < *slices; k++) {
        opprof_event e;
        if (opprof_trace_event(t, k, &e) != OPPROF_OK) continue;
        for (size_t i = 0; i < n; i++)
            if (!strcmp(e.name, names[i])) calls[i]++;
    }
    opprof_trace_free(t);
    return 0;
}

static int is_pftrace(const char *path)
{
    size_t n = strlen(path);
    if (n >= 3 && !strcmp(path + n - 3, ".gz")) n -= 3;
    return n >= 8 && !strncmp(path + n - 8, ".pftrace", 8);
}

int main(int argc, char **argv)
{
    int rounds = 3, first_extra = argc;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else {
            first_extra = i;
            break;
        }
    }
    if (rounds < 1 || rounds > 50) {
        fprintf(stderr, "usage: %s [--rounds R (1-50)] [EXEC OPTIONS...]\n", argv[0]);
        return 2;
    }
    char dir[4096];
    child_self_path(dir, sizeof dir);
    *strrchr(dir, '/') = '\0';
    char work[4200], opprof[4200], table[64];
    snprintf(work, sizeof work, "%s/wholeprog_work", dir);
    snprintf(opprof, sizeof opprof, "%s/opprof", dir);
    snprintf(table, sizeof table, "/tmp/bench_wholeprog_%d.txt", (int)getpid());
    char *plain_argv[] = {work, NULL};
    char *exec_argv[64];
    int n = 0;
    exec_argv[n++] = opprof;
    exec_argv[n++] = "exec";
    exec_argv[n++] = "--table";
    exec_argv[n++] = table;
    exec_argv[n++] = "--row-limit";
    exec_argv[n++] = "-1";
    /* A streamed trace (--trace) has no cap; a cap would keep its events to the end. */
    int trace = 0;
    const char *trace_path = NULL;
    for (int i = first_extra; i < argc; i++)
        if (!strcmp(argv[i], "--trace") && i + 1 < argc) trace = 1, trace_path = argv[i + 1];
    if (!trace) {
        exec_argv[n++] = "--max-events";
        exec_argv[n++] = "64000000";
    }
    for (int i = first_extra; i < argc && n < 60; i++) exec_argv[n++] = argv[i];
    exec_argv[n++] = "--";
    exec_argv[n++] = work;
    exec_argv[n] = NULL;
    double tp[50], tq[50];
    long rss_plain = 0, rss_prof = 0, k;
    for (int r = 0; r < rounds; r++) {
        tp[r] = child_run(plain_argv, &k);
        if (k > rss_plain) rss_plain = k;
        tq[r] = child_run(exec_argv, &k);
        if (k > rss_prof) rss_prof = k;
    }
    FILE *f = fopen(table, "rb");
    static char text[1 << 20];
    size_t got = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[got] = '\0';
    unlink(table);
    static const struct {
        const char *name;
        long calls;
    } want[] = {{"leaf", 30000000}, {"mid", 100000}, {"heavy", 10}, {"block", 1000}, {"run", 1}, {"main", 1}};
    enum { NWANT = sizeof want / sizeof want[0] };
    const char *names[NWANT];
    long in_trace[NWANT];
    for (size_t i = 0; i < NWANT; i++) names[i] = want[i].name, in_trace[i] = want[i].calls;
    size_t slices = 0;
    int pf = trace_path && is_pftrace(trace_path);
    if (trace_path && (pf ? pftrace_calls(trace_path, names, NWANT, in_trace, &slices)
                          : trace_calls(trace_path, names, NWANT, in_trace)) != 0)
        fprintf(stderr, "bench_wholeprog: cannot read %s\n", trace_path);
    int exact = 1;
    for (size_t i = 0; i < NWANT; i++) {
        long c = calls_of(text, want[i].name);
        if (c != want[i].calls) {
            fprintf(stderr, "bench_wholeprog: %s: %ld calls in the table, %ld made\n", want[i].name, c, want[i].calls);
            exact = 0;
        }
        long e = in_trace[i];
        if (e != want[i].calls) {
            fprintf(stderr, "bench_wholeprog: %s: %ld events in %s, %ld calls made\n", want[i].name, e, trace_path,
                    want[i].calls);
            exact = 0;
        }
    }
    double p = median(tp, rounds), q = median(tq, rounds);
    printf("bench_wholeprog: 30.1M instrumented calls, %d rounds (median)\n", rounds);
    printf("  plain          %8.3f s   peak RSS %7.1f MB\n", p, (double)rss_plain / 1024.0);
    printf("  opprof exec    %8.3f s   peak RSS %7.1f MB\n", q, (double)rss_prof / 1024.0);
    if (trace_path)
        printf("  exec / plain  %.2fx   peak RSS %.1f MB (target <= 256 MB)   counts in table and trace %s\n", q / p,
               (double)rss_prof / 1024.0, exact ? "exact" : "WRONG");
    if (pf) {
        struct stat st;
        if (stat(trace_path, &st) == 0 && slices)
            printf("  %s: %zu slices, %.0f bytes, %.2f bytes per slice (goal <= 12)\n", trace_path, slices,
                   (double)st.st_size, (double)st.st_size / (double)slices);
    }
    if (!trace_path)
        printf("  exec / plain  %.2fx (target <= 3x)   RSS growth %.1f MB (target <= 64 MB)   counts %s\n", q / p,
               (double)(rss_prof - rss_plain) / 1024.0, exact ? "exact" : "WRONG");
    return exact ? 0 : 1;
}

/* `opprof run`'s outputs beyond the first table, each an example of the
 * PyTorch profiler guide: the memory table and its timeline, a Chrome trace,
 * the long-running schedule with a trace directory, and folded stacks. Runs
 * the built CLI on small inputs and reads what it wrote back with the trace
 * reader and the strict JSON checker. */
#define _GNU_SOURCE /* mkdtemp */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_run.h"
#include "json.h"
#include "opprof_trace.h"
#include "slurp.h"
#include "trace_check.h"

/* Under the sanitizers a ResNet-18 training step costs a second (SGD over
 * 11.7M parameters, unoptimised): the schedule test runs the MLP there, the
 * same steps through the same code. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TRAIN_MODEL "mlp-train"
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TRAIN_MODEL "mlp-train"
#endif
#endif
#ifndef TRAIN_MODEL
#define TRAIN_MODEL "resnet18-train --image-size 32 --batch 2"
#endif

static char g_dir[64];

static int make_dir(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/opprof_run_outputs_XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Runs `opprof run ARGS`, ARGS a format with %s for the scratch folder
 * (at most twice); checks it exits 0 and returns its stdout. */
static char *run_ok(const char *fmt)
{
    char args[768];
    snprintf(args, sizeof args, fmt, g_dir, g_dir);
    int st;
    char *out = run(args, &st);
    if (st != 0) fail_msg("'opprof %s' exited %d", args, st);
    return out;
}

static int count_of(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

/* The bytes in a memory cell ("98.64 Mb", "-1.50 Kb", "0 b") that ends at
 * column end of line (cells are right-aligned under their heading). */
static double mem_cell(const char *line, size_t end)
{
    const char *p = line + end;
    while (p > line && p[-1] != ' ') p--; /* the unit */
    double scale = !strncmp(p, "Gb", 2) ? 1024.0 * 1024 * 1024 : !strncmp(p, "Mb", 2) ? 1024.0 * 1024
                                                                 : !strncmp(p, "Kb", 2) ? 1024.0
                                                                                        : 1.0;
    p--;
    while (p > line && p[-1] != ' ') p--; /* the number */
    return strtod(p, NULL) * scale;
}

/* The seed's second example: CPU Mem and Self CPU Mem, sorted by the latter. */
static void test_memory_table(void **state)
{
    (void)state;
    char *out = run_ok("run resnet18 --batch 1 --image-size 64 --threads 1 --memory --sort self_cpu_memory_usage "
                       "--row-limit 10 --memory-timeline %s/mem.csv");
    const char *head = strstr(out, "CPU Mem  Self CPU Mem    # of Calls");
    assert_non_null(head);
    assert_non_null(strstr(out, "CPU total %"));
    const char *line = head;
    while (line > out && line[-1] != '\n') line--;
    size_t self_end = (size_t)(head - line) + strlen("CPU Mem  Self CPU Mem");
    /* rows start two lines below the heading */
    const char *row = strchr(strchr(head, '\n') + 1, '\n') + 1;
    double prev = 1e300;
    int rows = 0;
    for (; strncmp(row, "---", 3) != 0; row = strchr(row, '\n') + 1, rows++) {
        double self = mem_cell(row, self_end);
        if (self > prev) fail_msg("row %d: Self CPU Mem %.0f after %.0f: not sorted", rows, self, prev);
        prev = self;
        if (rows == 0) { /* every tensor's memory: Mb of activations */
            assert_true(strstr(row, " aten::empty ") < strchr(row, '\n'));
            assert_true(self > 1024.0 * 1024);
        }
    }
    assert_int_equal(rows, 10);
    assert_non_null(strstr(out, "Self CPU time total:"));
    assert_non_null(strstr(out, "Peak CPU memory: "));
    assert_non_null(strstr(out, "live at the end 0 b\n"));
    free(out);

    /* the timeline: a row per allocation and free, back to 0 at the end */
    char path[128];
    snprintf(path, sizeof path, "%s/mem.csv", g_dir);
    char *csv = slurp(path);
    assert_non_null(csv);
    assert_int_equal(strncmp(csv, "ts_us,addr,bytes,total_allocated,tid,op\n", 40), 0);
    assert_true(count_of(csv, "\n") > 100);
    size_t n = strlen(csv);
    assert_true(n > 2 && csv[n - 1] == '\n');
    const char *last = csv + n - 1;
    while (last > csv && last[-1] != '\n') last--;
    const char *f = last;
    for (int k = 0; k < 3; k++) f = strchr(f, ',') + 1;
    assert_int_equal(strtoll(f, NULL, 10), 0); /* total_allocated after the output's free */
    free(csv);
}

static opprof_trace *load(const char *path)
{
    opprof_trace *t = NULL;
    if (opprof_trace_load(path, &t) != OPPROF_OK) fail_msg("%s: %s", path, opprof_last_error());
    if (trace_check_available()) {
        char *summary = trace_check(path);
        if (!summary) fail_msg("%s is not a strict Kineto-style JSON trace", path);
        free(summary);
    }
    return t;
}

static size_t events_named(const opprof_trace *t, const char *prefix)
{
    size_t n = 0;
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        if (opprof_trace_event(t, i, &e) == OPPROF_OK && !strncmp(e.name, prefix, strlen(prefix))) n++;
    }
    return n;
}

/* The seed's Chrome-trace example, plain and gzip'd with memory and shapes. */
static void test_chrome_trace(void **state)
{
    (void)state;
    free(run_ok("run resnet18 --batch 1 --image-size 32 --trace %s/trace.json"));
    char path[128];
    snprintf(path, sizeof path, "%s/trace.json", g_dir);
    opprof_trace *t = load(path);
    assert_int_equal(events_named(t, "aten::conv2d"), 20);
    assert_int_equal(events_named(t, "aten::linear"), 1);
    assert_int_equal(events_named(t, "ProfilerStep#"), 0); /* no schedule, no steps */
    opprof_trace_free(t);

    free(run_ok("run resnet18 --batch 1 --image-size 32 --memory --shapes --trace %s/trace.json.gz "
                "--memory-timeline %s/mem.json"));
    snprintf(path, sizeof path, "%s/trace.json.gz", g_dir);
    size_t len;
    char *raw = slurp_len(path, &len);
    assert_true(raw && len > 2 && (unsigned char)raw[0] == 0x1f && (unsigned char)raw[1] == 0x8b);
    free(raw);
    t = load(path);
    opprof_memory_stats st;
    assert_int_equal(opprof_trace_memory_stats(t, &st), OPPROF_OK);
    assert_true(st.allocations > 80); /* the [memory] events: every tensor at least */
    assert_int_equal(st.bytes_allocated, st.bytes_freed);
    int shaped = 0;
    for (size_t i = 0; i < opprof_trace_event_count(t) && !shaped; i++) {
        opprof_event e;
        opprof_trace_event(t, i, &e);
        shaped = !strcmp(e.name, "aten::conv2d") && strstr(e.input_shapes, "[1, 3, 32, 32]");
    }
    assert_true(shaped);
    opprof_trace_free(t);
    snprintf(path, sizeof path, "%s/mem.json", g_dir);
    json *doc = json_read_file(path);
    assert_non_null(doc);
    const json *rows = json_get(doc, "memory_timeline");
    assert_true(rows && rows->type == JSON_ARR && rows->n == st.allocations + st.frees);
    json_free(doc);
}

/* The .pt.trace.json files of dir, in name order (time order: the names
 * hold the time in ns, all of the same width). */
static int trace_files(const char *dir, char names[][256], int max)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') {
            if (n == max) fail_msg("more than %d files in %s", max, dir);
            snprintf(names[n++], 256, "%s", e->d_name);
        }
    closedir(d);
    for (int i = 1; i < n; i++) /* insertion sort */
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char tmp[256];
            memcpy(tmp, names[j], 256);
            memcpy(names[j], names[j - 1], 256);
            memcpy(names[j - 1], tmp, 256);
        }
    return n;
}

/* name is "{host}_{pid}.{time_ns}" then suffix */
static void check_name(const char *name, const char *suffix)
{
    const char *dot = strchr(name, '.');
    assert_non_null(dot);
    const char *us = dot;
    while (us > name && us[-1] != '_') us--;
    assert_true(us > name + 1);
    for (const char *p = us; p < dot; p++) assert_true(*p >= '0' && *p <= '9');
    const char *q = dot + 1;
    while (*q >= '0' && *q <= '9') q++;
    assert_true(q > dot + 10);
    assert_string_equal(q, suffix);
}

/* The seed's long-running example: skip_first=10, wait=5, warmup=1,
 * active=3, repeat=2 over 30 steps records steps 16-18 and 25-27. */
static void test_schedule_trace_dir(void **state)
{
    (void)state;
    char *out = run_ok("run " TRAIN_MODEL " --steps 30 --schedule skip_first=10,wait=5,warmup=1,active=3,repeat=2 "
                       "--trace-dir %s/log --row-limit 5");
    assert_int_equal(count_of(out, "Self CPU time total:"), 2); /* a table per trace */
    assert_int_equal(count_of(out, " ProfilerStep* "), 2); /* by CPU total, the steps lead */
    char dir[128], names[4][256], path[1536];
    snprintf(dir, sizeof dir, "%s/log", g_dir);
    assert_int_equal(trace_files(dir, names, 4), 2);
    static const int first_step[2] = {16, 25};
    for (int k = 0; k < 2; k++) {
        check_name(names[k], ".pt.trace.json");
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        opprof_trace *t = load(path);
        assert_int_equal(events_named(t, "ProfilerStep#"), 3);
        for (int s = 0; s < 3; s++) {
            char step[32];
            snprintf(step, sizeof step, "ProfilerStep#%d", first_step[k] + s);
            if (events_named(t, step) != 1) fail_msg("%s has no %s", names[k], step);
        }
        assert_int_equal(events_named(t, "train_step"), 3);
        opprof_trace_free(t);
    }
    free(out);

    /* gzip'd, and a schedule without skip_first or repeat: one cycle in 4 steps */
    out = run_ok("run mlp-train --steps 4 --schedule wait=1,warmup=1,active=2 --trace-dir %s/gz --gzip");
    assert_int_equal(count_of(out, "Self CPU time total:"), 1);
    snprintf(dir, sizeof dir, "%s/gz", g_dir);
    assert_int_equal(trace_files(dir, names, 4), 1);
    check_name(names[0], ".pt.trace.json.gz");
    snprintf(path, sizeof path, "%s/%s", dir, names[0]);
    opprof_trace *t = load(path);
    assert_int_equal(events_named(t, "ProfilerStep#"), 2);
    opprof_trace_free(t);
    free(out);
}

/* with_stack: folded stacks naming the runtime's functions, and the table
 * split by call site. */
static void test_stacks(void **state)
{
    (void)state;
    char *out = run_ok("run resnet18 --batch 1 --image-size 32 --stacks-out %s/r.folded "
                       "--stacks-metric self_cpu_time_total --group-by-stack 2 --row-limit 3");
    assert_non_null(strstr(out, "Source Location"));
    assert_non_null(strstr(out, "resnet.c("));
    free(out);
    char path[128];
    snprintf(path, sizeof path, "%s/r.folded", g_dir);
    char *folded = slurp(path);
    assert_non_null(folded);
    assert_true(strlen(folded) > 0);
    assert_non_null(strstr(folded, "resnet_forward;"));   /* nn frames, resolved */
    assert_non_null(strstr(folded, "op_nn_conv_forward;aten::conv2d "));
    for (const char *l = folded; *l; l = strchr(l, '\n') + 1) {
        const char *eol = strchr(l, '\n');
        assert_non_null(eol);
        const char *sp = eol;
        while (sp > l && sp[-1] != ' ') sp--;
        char *end;
        long v = strtol(sp, &end, 10);
        if (end != eol || v <= 0 || !memchr(l, ';', (size_t)(sp - l)))
            fail_msg("not a folded line: %.*s", (int)(eol - l), l);
    }
    free(folded);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_table),
        cmocka_unit_test(test_chrome_trace),
        cmocka_unit_test(test_schedule_trace_dir),
        cmocka_unit_test(test_stacks),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}

/* Samples in trace files: a sampled session written as Chrome JSON carries
 * each thread's samples as a V8 CPU profile (read strictly, as speedscope
 * and Chrome's viewer read it, by profile_json.py) and as .pftrace carries
 * them as PerfSample packets with interned callstacks, frames, function
 * names and mappings (decoded by protoc with Perfetto's schema); the right
 * thread and function names in both. opprof summary of either file gives
 * the operator table of the same trace written without its samples, byte
 * for byte, and says how many sample events it read past.
 *
 * The threads work until they have used their CPU time (no sleeps), so a
 * loaded machine only makes the test slower. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_shell.h"
#include "fixtures.h"
#include "model/model.h"
#include "opprof_trace.h"
#include "sample_work.h"
#include "slurp.h"
#include "tmpdir.h"
#include "trace_check.h"

#define WORKER_NAME "sw-worker"
#define CPU_S 0.3 /* each thread's CPU time: ~75 samples at a 250 Hz tick, whatever the load */

static char g_dir[] = "/tmp/opprof_sample_trace_XXXXXX";
static opprof_trace *g_trace;
static long g_worker_tid;

OPPROF_SITE(site_step, "step");
OPPROF_SITE(site_inner, "inner");

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *worker(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), WORKER_NAME);
    g_worker_tid = (long)syscall(SYS_gettid);
    opprof_sample_thread();
    double t0 = thread_cpu_s();
    while (thread_cpu_s() - t0 < CPU_S) sw_work_b();
    return NULL;
}

static const char *bin(void)
{
    const char *v = getenv("OPPROF_BIN");
    if (!v) fail_msg("OPPROF_BIN is not set (run under ctest)");
    return v;
}

static char *file_in(const char *name)
{
    static char path[16][600];
    static int k;
    k = (k + 1) % 16;
    snprintf(path[k], sizeof path[k], "%s/%s", g_dir, name);
    return path[k];
}

static size_t count(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* The line of the profile of thread tid that profile_json.py prints, NULL
 * when none. */
static char *profile_line(const char *out, long tid)
{
    char key[64];
    snprintf(key, sizeof key, " tid=%ld ", tid);
    const char *p = strstr(out, key);
    if (!p) return NULL;
    while (p > out && p[-1] != '\n') p--;
    return strndup(p, strcspn(p, "\n"));
}

static long field(const char *line, const char *name)
{
    const char *p = strstr(line, name);
    assert_non_null(p);
    return strtol(p + strlen(name), NULL, 10);
}

static void test_json_carries_the_samples(void **state)
{
    (void)state;
    if (!trace_check_available()) skip();
    const char *json = file_in("s.json");
    assert_int_equal(opprof_export_chrome_trace(g_trace, json), OPPROF_OK);
    const char *out = file_in("s.profiles");
    assert_int_equal(shell_status("'%s' '%s/tests/sample/profile_json.py' %s > %s", trace_check_python(),
                                  getenv("OPPROF_SOURCE_DIR"), json, out),
                     0);
    char *text = slurp(out);
    assert_non_null(text);
    print_message("%s", text);
    char *w = profile_line(text, g_worker_tid), *m = profile_line(text, (long)syscall(SYS_gettid));
    assert_non_null(w);
    assert_non_null(m);
    assert_non_null(strstr(w, " name=" WORKER_NAME " "));
    assert_non_null(strstr(w, "sw_work_b"));
    assert_null(strstr(w, "sw_work_a")); /* the main thread's function, not the worker's */
    assert_non_null(strstr(m, "sw_work_a"));
    assert_true(field(w, "samples=") > 0);
    /* Every sample of the trace is in the file, once: the non-idle ones. */
    long all = 0;
    for (const char *p = text; (p = strstr(p, "samples=")); p++) all += strtol(p + 8, NULL, 10);
    assert_int_equal(all, (long)opprof_trace_sample_count(g_trace));
    free(w);
    free(m);
    free(text);
}

static void need_protoc(void)
{
    char schema[1024];
    if (!fixture_path(schema, sizeof schema, "perfetto/perfetto_trace.proto")) {
        print_message("%s missing: skipped\n", schema);
        skip();
    }
    if (system("command -v protoc >/dev/null 2>&1") != 0)
        fail_msg("protoc not found: install protobuf-compiler (scripts/deps.sh)");
}

static void test_pftrace_carries_the_samples(void **state)
{
    (void)state;
    need_protoc();
    const char *pf = file_in("s.pftrace");
    /* Plain packets, so that protoc sees them without inflating batches. */
    setenv("OPPROF_PFTRACE_COMPRESS", "0", 1);
    assert_int_equal(opprof_export_chrome_trace(g_trace, pf), OPPROF_OK);
    unsetenv("OPPROF_PFTRACE_COMPRESS");
    const char *txt = file_in("s.pftrace.txt");
    assert_int_equal(shell_status("protoc -I %s/perfetto --decode=perfetto.protos.Trace perfetto_trace.proto < %s > %s",
                                  fixtures_dir(), pf, txt),
                     0);
    char *text = slurp(txt);
    assert_non_null(text);
    size_t n = opprof_trace_sample_count(g_trace);
    assert_int_equal(count(text, "perf_sample {"), n);
    assert_int_equal(count(text, "callstack_iid: "), n);
    char key[64];
    snprintf(key, sizeof key, "tid: %ld\n", g_worker_tid);
    /* the worker's samples, and its descriptor with its name */
    assert_true(count(text, key) > 1);
    assert_non_null(strstr(text, "thread_name: \"" WORKER_NAME "\""));
    /* Each function named once on the sequence, a frame, a mapping and a
     * callstack that refer to it. */
    assert_true(count(text, "function_names {") >= 2);
    assert_non_null(strstr(text, "str: \"sw_work_a\""));
    assert_non_null(strstr(text, "str: \"sw_work_b\""));
    assert_int_equal(count(text, "str: \"sw_work_b\""), 1);
    assert_true(count(text, "frames {") >= 2);
    assert_true(count(text, "mappings {") >= 2);
    assert_true(count(text, "callstacks {") >= 2);
    assert_true(count(text, "frame_ids: ") >= 2);
    free(text);
}

/* opprof summary of FILE: stdout into OUT, stderr into ERR. */
static void summary(const char *file, const char *out, const char *err)
{
    if (shell_status("'%s' summary --row-limit -1 %s > %s 2> %s", bin(), file, out, err) != 0) {
        char *why = slurp(err);
        fail_msg("opprof summary %s failed: %s", file, why ? why : "?");
    }
}

/* The table of the file with samples is the table of the same trace
 * written without them; the note counts what was read past. */
static void same_table(const char *with, const char *without, size_t skipped)
{
    const char *o1 = file_in("with.out"), *e1 = file_in("with.err");
    summary(with, o1, e1);
    const char *o2 = file_in("without.out"), *e2 = file_in("without.err");
    summary(without, o2, e2);
    char *a = slurp(o1), *b = slurp(o2), *ea = slurp(e1), *eb = slurp(e2);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(strstr(a, "step"));
    assert_non_null(strstr(a, "inner"));
    assert_string_equal(a, b);
    char note[128];
    snprintf(note, sizeof note, "%zu sample events of the file", skipped);
    if (!strstr(ea, note)) fail_msg("no \"%s\" in: %s", note, ea);
    assert_null(strstr(eb, "sample events"));
    free(a);
    free(b);
    free(ea);
    free(eb);
}

/* The trace's own events, written as if it had no samples. */
static void write_without_samples(const char *path)
{
    opprof_trace *t = g_trace;
    size_t n = t->nsamples;
    t->nsamples = 0;
    int rc = opprof_export_chrome_trace(t, path);
    t->nsamples = n;
    assert_int_equal(rc, OPPROF_OK);
}

static void test_summary_reads_past_the_samples(void **state)
{
    (void)state;
    const char *json = file_in("r.json"), *json0 = file_in("r0.json");
    assert_int_equal(opprof_export_chrome_trace(g_trace, json), OPPROF_OK);
    write_without_samples(json0);
    /* one ProfileChunk per thread sampled here (10000 samples each at most) */
    size_t threads = 0;
    for (size_t i = 0; i < g_trace->nsamples; i++) {
        size_t j = 0;
        while (j < i && g_trace->samples[j].thread != g_trace->samples[i].thread) j++;
        threads += j == i;
    }
    assert_true(threads >= 2);
    same_table(json, json0, threads);
    const char *pf = file_in("r.pftrace"), *pf0 = file_in("r0.pftrace");
    assert_int_equal(opprof_export_chrome_trace(g_trace, pf), OPPROF_OK);
    write_without_samples(pf0);
    same_table(pf, pf0, opprof_trace_sample_count(g_trace));
}

/* One sampled session for the group: the main thread records ranges around
 * sw_work_a; the named worker records nothing and runs sw_work_b. */
static int setup(void **state)
{
    (void)state;
    if (tmpdir_make(g_dir) != 0) return -1;
    opprof_config c;
    opprof_config_init(&c);
    c.sample_hz = 1000;
    if (opprof_start(&c) != OPPROF_OK) return -1;
    pthread_t th;
    if (pthread_create(&th, NULL, worker, NULL) != 0) return -1;
    double t0 = thread_cpu_s();
    while (thread_cpu_s() - t0 < CPU_S) {
        opprof_begin(&site_step);
        opprof_begin(&site_inner);
        sw_work_a();
        opprof_end(&site_inner);
        opprof_end(&site_step);
    }
    pthread_join(th, NULL);
    if (opprof_stop(&g_trace) != OPPROF_OK || !g_trace) return -1;
    /* both threads sampled: the worker's CPU alone is ~75 ticks */
    return opprof_trace_sample_count(g_trace) > 20 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    opprof_trace_free(g_trace);
    return tmpdir_remove(g_dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_carries_the_samples),
        cmocka_unit_test(test_pftrace_carries_the_samples),
        cmocka_unit_test(test_summary_reads_past_the_samples),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

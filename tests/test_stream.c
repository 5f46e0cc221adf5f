/* Streamed traces (opprof_config.stream_trace): the file written while the
 * session records holds the events the event path keeps, and reads back to
 * the same tables; the session's own tables (from sums) equal the event
 * path's byte for byte under an injected clock; a run many times larger
 * than the writer's queue keeps few chunks alive and loses nothing; many
 * threads, some exiting before stop, some recording through it. */
#define _GNU_SOURCE /* O_DIRECT */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "opprof_trace.h"

#include "agg_script.h"
#include "capture/pool.h"
#include "capture/spill.h"
#include "capture/state.h"
#include "slurp.h"
#include "tmpdir.h"
#include "trace_check.h"

TMPDIR_GROUP(g_dir, "/tmp/opprof_stream_XXXXXX")

static void path_in(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", g_dir, name);
}

/* The script under the fake clock, streamed to `stream` (NULL: events
 * kept); opts 1: shapes, memory and FLOPs; 2: memory alone (so a .pftrace's
 * plain ranges go straight to its writer between the memory events). */
static opprof_trace *record(const char *stream, int opts)
{
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.profile_memory = opts != 0;
    cfg.with_flops = cfg.record_shapes = opts == 1;
    cfg.stream_trace = stream;
    return script_session(&cfg);
}

static void tables_equal(const opprof_trace *a, const opprof_trace *b)
{
    const char *sorts[] = {NULL, "self_cpu_time_total", "count", "cpu_memory_usage", "flops"};
    opprof_avg_options by_shape = {.group_by_input_shape = 1};
    for (size_t i = 0; i < sizeof sorts / sizeof sorts[0]; i++) {
        for (int shape = 0; shape < 2; shape++) {
            char *x = table_of(a, shape ? &by_shape : NULL, sorts[i]);
            char *y = table_of(b, shape ? &by_shape : NULL, sorts[i]);
            assert_string_equal(x, y);
            free(x);
            free(y);
        }
    }
}

/* Events per name and thread in a loaded trace: each thread's as
 * "name=count;" text in first-seen order, the threads' texts sorted and
 * joined by '|', so that two traces of the same script compare equal
 * whatever their threads' ids and order. */
static int text_before(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void counts_of(const opprof_trace *t, char *out, size_t cap)
{
    enum { NAMES = 64, THREADS = 16 };
    struct {
        int64_t tid;
        size_t ns;
        struct {
            const char *name;
            size_t n;
        } seen[NAMES];
    } th[THREADS];
    size_t nth = 0;
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        assert_int_equal(opprof_trace_event(t, i, &e), OPPROF_OK);
        size_t j = 0;
        while (j < nth && th[j].tid != e.tid) j++;
        if (j == nth) {
            assert_true(nth < THREADS);
            th[nth].tid = e.tid;
            th[nth++].ns = 0;
        }
        size_t k = 0;
        while (k < th[j].ns && strcmp(th[j].seen[k].name, e.name)) k++;
        if (k == th[j].ns) {
            assert_true(k < NAMES);
            th[j].seen[k].name = e.name;
            th[j].seen[th[j].ns++].n = 0;
        }
        th[j].seen[k].n++;
    }
    char *text[THREADS];
    for (size_t j = 0; j < nth; j++) {
        char buf[1024];
        size_t len = 0;
        buf[0] = '\0';
        for (size_t k = 0; k < th[j].ns; k++)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s=%zu;", th[j].seen[k].name, th[j].seen[k].n);
        text[j] = strdup(buf);
        assert_non_null(text[j]);
    }
    qsort(text, nth, sizeof *text, text_before);
    size_t len = 0;
    out[0] = '\0';
    for (size_t j = 0; j < nth; j++) {
        len += (size_t)snprintf(out + len, cap - len, "%s%s", j ? "|" : "", text[j]);
        free(text[j]);
    }
}

/* The session's tables equal the event path's; the file holds the same
 * events and reads back to the same tables: Chrome JSON, and .pftrace
 * (slice begins written before their ends are known; FLOPs given at the
 * end ride on the end), plain, in compressed batches and gzip'd. */
static void test_streamed_equals_event_path(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int opts, plain;
    } files[] = {
        {"s0.json", 0, 0},       {"s1.json.gz", 1, 0},  {"s0.pftrace", 0, 0},
        {"s1.pftrace", 1, 0},    {"s1p.pftrace", 1, 1}, {"s1.pftrace.gz", 1, 0},
        {"s2.json", 2, 0},       {"s2.pftrace", 2, 0},  {"s2p.pftrace", 2, 1},
    };
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        int opts = files[f].opts;
        char streamed[600], exported[600];
        path_in(streamed, sizeof streamed, files[f].name);
        path_in(exported, sizeof exported, opts == 2 ? "e2.json" : opts ? "e1.json" : "e0.json");
        if (files[f].plain) setenv("OPPROF_PFTRACE_COMPRESS", "0", 1);
        opprof_trace *ev = record(NULL, opts), *sums = record(streamed, opts);
        unsetenv("OPPROF_PFTRACE_COMPRESS");
        assert_int_equal(opprof_trace_streamed(ev), 0);
        assert_int_equal(opprof_trace_streamed(sums), 1);
        assert_int_equal(opprof_trace_event_count(sums), 0);
        assert_int_equal(opprof_trace_aggregated(sums), opprof_trace_event_count(ev));
        assert_int_equal(opprof_trace_dropped(sums), 0);
        tables_equal(ev, sums);
        int pf = strstr(files[f].name, ".pftrace") != NULL;
        if (!pf && trace_check_available()) { /* strict JSON, as Python's json reads it */
            char *ok = trace_check(streamed);
            if (!ok) fail_msg("%s failed the strict JSON check (see stderr)", streamed);
            free(ok);
        }
        assert_int_equal(opprof_export_chrome_trace(ev, exported), OPPROF_OK);
        opprof_trace *a = NULL, *b = NULL;
        assert_int_equal(opprof_trace_load(exported, &a), OPPROF_OK);
        if (opprof_trace_load(streamed, &b) != OPPROF_OK) fail_msg("%s: %s", streamed, opprof_last_error());
        assert_int_equal(opprof_trace_event_count(a), opprof_trace_event_count(b));
        char ca[2048], cb[2048];
        counts_of(a, ca, sizeof ca);
        counts_of(b, cb, sizeof cb);
        print_message("%s events by thread and name: %s\n", files[f].name, cb);
        assert_non_null(strstr(cb, "A=")); /* the script's names are there */
        assert_string_equal(ca, cb); /* each on its own thread */
        if (opts) { /* the memory events, each once */
            opprof_memory_stats ma, mb;
            assert_int_equal(opprof_trace_memory_stats(a, &ma), OPPROF_OK);
            assert_int_equal(opprof_trace_memory_stats(b, &mb), OPPROF_OK);
            assert_true(ma.allocations > 0);
            assert_int_equal(ma.allocations, mb.allocations);
            assert_int_equal(ma.frees, mb.frees);
            assert_int_equal(ma.bytes_allocated, mb.bytes_allocated);
            assert_int_equal(ma.bytes_freed, mb.bytes_freed);
        }
        tables_equal(a, b);
        assert_int_equal(opprof_trace_incomplete(b), 0);
        opprof_trace_free(a);
        opprof_trace_free(b);
        opprof_trace_free(ev);
        opprof_trace_free(sums);
    }
}

/* with_stack: each distinct stack becomes the trace's as its first range
 * is read (its thread's stack table may go before the range is done); the
 * sums are keyed by it, so the tables split by stack equal the event
 * path's, and the file (JSON or .pftrace) carries the same call stacks. */
static __attribute__((noinline)) opprof_trace *stack_session(opprof_config *cfg, const char *stream)
{
    cfg->stream_trace = stream;
    opprof_trace *t = script_session(cfg);
    __asm__ volatile("" ::: "memory"); /* not a tail call, which would leave this frame out */
    return t;
}

/* Events in the trace file at path whose "Call stack" names fn: counted
 * in the JSON text, or in the stacks the .pftrace reader gives them. */
static size_t stacks_naming(const char *path, const char *fn)
{
    size_t n = 0;
    if (strstr(path, ".pftrace")) {
        opprof_trace *t = NULL;
        if (opprof_trace_load(path, &t) != OPPROF_OK) fail_msg("%s: %s", path, opprof_last_error());
        for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
            opprof_event e;
            assert_int_equal(opprof_trace_event(t, i, &e), OPPROF_OK);
            int named = 0;
            for (unsigned k = 0; k < opprof_trace_event_stack_depth(t, i) && !named; k++)
                named = strstr(opprof_trace_event_frame(t, i, k), fn) != NULL;
            n += named;
        }
        opprof_trace_free(t);
        return n;
    }
    char *text = slurp(path);
    assert_non_null(text);
    for (char *l = text; l && *l;) {
        char *nl = strchr(l, '\n');
        if (nl) *nl = '\0';
        const char *cs = strstr(l, "\"Call stack\": \"");
        if (cs && strstr(cs, fn)) n++;
        l = nl ? nl + 1 : NULL;
    }
    free(text);
    return n;
}

static void test_streamed_with_stack(void **state)
{
    (void)state;
    static const char *const names[] = {"k.json", "k.pftrace"};
    for (size_t f = 0; f < 2; f++) {
        char streamed[600], exported[600];
        path_in(streamed, sizeof streamed, names[f]);
        path_in(exported, sizeof exported, "k_events.json");
        opprof_config cfg;
        opprof_config_init(&cfg);
        cfg.with_stack = 1;
        cfg.record_shapes = 1;
        opprof_trace *both[2];
        for (int k = 0; k < 2; k++) both[k] = stack_session(&cfg, k ? streamed : NULL); /* one return address */
        opprof_trace *ev = both[0], *sums = both[1];
        assert_int_equal(opprof_trace_streamed(sums), 1);
        assert_int_equal(opprof_trace_aggregated(sums), opprof_trace_event_count(ev));
        /* The live tables, split by stack. */
        opprof_avg_options by_stack = {.group_by_stack_n = 2};
        char *x = table_of(ev, &by_stack, NULL), *y = table_of(sums, &by_stack, NULL);
        if (!strstr(x, "script_session")) fail_msg("no stacks in:\n%s", x); /* symbolized */
        assert_string_equal(x, y);
        free(x);
        free(y);
        tables_equal(ev, sums);
        /* The file: every event with its call stack, as the event path's export. */
        assert_int_equal(opprof_export_chrome_trace(ev, exported), OPPROF_OK);
        opprof_trace *a = NULL, *b = NULL;
        assert_int_equal(opprof_trace_load(exported, &a), OPPROF_OK);
        if (opprof_trace_load(streamed, &b) != OPPROF_OK) fail_msg("%s: %s", streamed, opprof_last_error());
        size_t na = stacks_naming(exported, "script_session"), nb = stacks_naming(streamed, "script_session");
        assert_true(na > opprof_trace_event_count(a) / 2); /* those begun in the script */
        assert_int_equal(nb, na);
        tables_equal(a, b);
        opprof_trace_free(a);
        opprof_trace_free(b);
        opprof_trace_free(ev);
        opprof_trace_free(sums);
    }
}

/* Nested ranges microseconds long, so that folded lines have values. */
static void deep_tree(void)
{
    for (int i = 0; i < 4; i++) {
        g_now += 1000; opprof_begin(&site_a);
        g_now += 2000; opprof_begin(&site_b);
        g_now += 3000; opprof_begin(&site_c);
        g_now += 2500 + 10 * i; opprof_end(&site_c);
        g_now += 700; opprof_end(&site_b);
        g_now += 1500; opprof_end(&site_a);
    }
}

static char *stacks_text(const opprof_trace *t)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    if (opprof_write_stacks(t, f, NULL, OPPROF_STACKS_OPERATORS) != OPPROF_OK) fail_msg("%s", opprof_last_error());
    fclose(f);
    return text;
}

/* A streamed session whose sums are keyed by call path (what opprof exec
 * --trace --stacks asks for): the call tree's folded stacks from the
 * writer's sums equal the event path's. */
static void test_streamed_call_paths(void **state)
{
    (void)state;
    char path[600];
    path_in(path, sizeof path, "paths.pftrace");
    g_after_script = deep_tree;
    opprof_config cfg;
    opprof_config_init(&cfg);
    opprof_trace *ev = script_session(&cfg);
    cfg.stream_trace = path;
    cfg.aggregate = OPPROF_AGGREGATE_PATHS;
    opprof_trace *sums = script_session(&cfg);
    g_after_script = NULL;
    assert_int_equal(opprof_trace_streamed(sums), 1);
    char *a = stacks_text(ev), *b = stacks_text(sums);
    if (strcmp(a, b) != 0) fail_msg("events:\n%s\nstreamed sums:\n%s", a, b);
    assert_non_null(strstr(a, ";A;B;C 10\n")); /* 4 x 2.5 us */
    free(a);
    free(b);
    tables_equal(ev, sums);
    opprof_trace_free(ev);
    opprof_trace_free(sums);
}

OPPROF_SITE(site_leaf, "leaf");
OPPROF_SITE(site_loop, "loop");

/* A run many times larger than the writer's queue: the chunks mapped stay
 * those of the queue and the threads' current ones, the calls are all in
 * the sums and in the file. */
enum { CALLS = 2000000 }; /* some 46 MiB of records */

/* The status flags of the spool's descriptor: the unnamed file in g_dir
 * (O_TMPFILE's "#inode (deleted)", or a name unlinked at once); -1 none. */
static long spool_flags(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    long flags = -1;
    for (struct dirent *de; flags < 0 && (de = readdir(d));) {
        char link[700], target[700] = "";
        snprintf(link, sizeof link, "/proc/self/fd/%s", de->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0) continue;
        target[n] = '\0';
        if (strncmp(target, g_dir, strlen(g_dir)) != 0 || !strstr(target, "(deleted)")) continue;
        snprintf(link, sizeof link, "/proc/self/fdinfo/%s", de->d_name);
        FILE *f = fopen(link, "r");
        char line[128];
        while (f && fgets(line, sizeof line, f))
            if (sscanf(line, "flags: %lo", &flags) == 1) break;
        if (f) fclose(f);
    }
    closedir(d);
    return flags;
}

static void long_run(const char *name)
{
    char path[600];
    path_in(path, sizeof path, name);
    op_spill_limit((size_t)4 << 20);
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.stream_trace = path;
    cfg.max_events = 1000; /* no cap applies to a stream */
    uint64_t mapped0 = op_capture_chunks_mapped();
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    opprof_begin(&site_loop); /* open through all of it: its chunk is kept, the others go */
    for (int i = 0; i < CALLS; i++) {
        opprof_begin(&site_leaf);
        opprof_end(&site_leaf);
    }
    opprof_end(&site_loop);
    /* The spool is written past the page cache (spool.h) unless asked not
     * to: the suite runs once more with OPPROF_SPOOL_DIRECT=0. */
    long flags = spool_flags();
    assert_true(flags >= 0);
    const char *direct = getenv("OPPROF_SPOOL_DIRECT");
    if (direct && strcmp(direct, "0") == 0) assert_int_equal(flags & O_DIRECT, 0);
    else if (tmpdir_takes_direct(g_dir)) assert_int_not_equal(flags & O_DIRECT, 0);
    op_spill_stats st;
    op_spill_stats_get(&st);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    op_spill_limit(0);
    uint64_t mapped = op_capture_chunks_mapped() - mapped0;
    print_message("%d calls: %llu chunks handed over, %llu at most queued, %llu deferred, %llu chunks mapped\n", CALLS,
                  (unsigned long long)st.handed, (unsigned long long)st.peak_queued, (unsigned long long)st.deferred,
                  (unsigned long long)mapped);
    /* A hand-off the full queue deferred goes with the thread's next one
     * (the spooler fell behind: a loaded machine), never waited for. */
    assert_true(st.handed >= 1 && st.handed + st.deferred >= 40);
    assert_true(st.peak_queued <= 5); /* 4 MiB of 1 MiB chunks, and the one that passed it */
    assert_true(mapped <= 16 + st.deferred);
    assert_int_equal(opprof_trace_aggregated(t), CALLS + 1);
    assert_int_equal(opprof_trace_dropped(t), 0);
    opprof_trace_free(t);
    if (strstr(name, ".pftrace")) { /* the loop's end pairs with a begin some 40 pieces before */
        opprof_trace *back = NULL;
        if (opprof_trace_load(path, &back) != OPPROF_OK) fail_msg("%s: %s", path, opprof_last_error());
        assert_int_equal(count_of(back, "leaf"), CALLS);
        assert_int_equal(count_of(back, "loop"), 1);
        opprof_avg_options top = {.top_level_only = 1};
        char *tt = table_of(back, &top, NULL);
        assert_non_null(strstr(tt, "loop"));
        assert_null(strstr(tt, "leaf")); /* every leaf inside the loop */
        free(tt);
        opprof_trace_free(back);
        return;
    }
    /* Every call is in the file: count its leaf events without a model. */
    char cmd[700];
    snprintf(cmd, sizeof cmd, "zcat '%s' | grep -c '\"name\": \"leaf\"'", path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    long n = -1;
    assert_int_equal(fscanf(p, "%ld", &n), 1);
    pclose(p);
    assert_int_equal(n, CALLS);
}

static void test_memory_bounded_for_a_long_run(void **state)
{
    (void)state;
    long_run("long.json.gz");
    long_run("long.pftrace");
}

enum { NTHREADS = 4, PER_THREAD = 60000 };

/* Each worker's ranges on its own track: its PER_THREAD pairs of A and B
 * and its C, nothing of another thread's (a begin written into the wrong
 * thread's piece of the file is a slice of that thread's). */
static void threads_read_back_alike(const opprof_trace *back)
{
    char text[4096], worker[64];
    counts_of(back, text, sizeof text);
    snprintf(worker, sizeof worker, "A=%d;B=%d;C=1;", PER_THREAD, PER_THREAD);
    size_t workers = 0;
    for (char *seg = strtok(text, "|"); seg; seg = strtok(NULL, "|")) {
        if (!strstr(seg, "C=")) continue; /* a busy thread, cut short at stop */
        if (strcmp(seg, worker)) fail_msg("a worker's slices: %s, not %s", seg, worker);
        workers++;
    }
    assert_int_equal(workers, NTHREADS);
}

/* Threads that exit before stop and threads still recording at stop: the
 * exact counts of the first, the file readable, and a stop cut short
 * (opprof_stop_incomplete) says so in the file. */
static void threads_through_stop(const char *name)
{
    char path[600];
    path_in(path, sizeof path, name);
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.stream_trace = path;
    g_per_thread = PER_THREAD;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    pthread_t th[NTHREADS], busy[2];
    volatile int stop = 0;
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&busy[i], NULL, until_stopped, (void *)&stop), 0);
    for (int i = 0; i < NTHREADS; i++) assert_int_equal(pthread_create(&th[i], NULL, worker, NULL), 0);
    for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop_incomplete(&t), OPPROF_OK);
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < 2; i++) pthread_join(busy[i], NULL);
    assert_int_equal(opprof_trace_streamed(t), 1);
    assert_int_equal(opprof_trace_incomplete(t), 1);
    uint64_t c = count_of(t, "C"), a = count_of(t, "A");
    assert_int_equal(c, NTHREADS);
    assert_true(a >= NTHREADS * PER_THREAD);
    opprof_trace *back = NULL;
    assert_int_equal(opprof_trace_load(path, &back), OPPROF_OK);
    assert_int_equal(opprof_trace_incomplete(back), 1);
    assert_int_equal(count_of(back, "C"), NTHREADS);
    assert_int_equal(count_of(back, "A"), a);
    assert_int_equal(count_of(back, "B"), count_of(t, "B"));
    threads_read_back_alike(back);
    opprof_trace_free(back);
    opprof_trace_free(t);
}

/* Both formats: a .pftrace pairs a slice's begin and end across the
 * pieces of its thread's sequence. */
static void test_threads_exit_and_record_through_stop(void **state)
{
    (void)state;
    threads_through_stop("threads.json");
    threads_through_stop("threads.pftrace");
}

/* What streaming cannot do is refused at start, with the reason. */
static void test_refusals(void **state)
{
    (void)state;
    char path[600];
    opprof_config cfg;
    opprof_config_init(&cfg);
    path_in(path, sizeof path, "x.json");
    cfg.stream_trace = path;
    cfg.schedule.enabled = 1;
    cfg.schedule.active = 1;
    assert_int_equal(opprof_start(&cfg), OPPROF_E_INVAL);
    assert_non_null(strstr(opprof_last_error(), "schedule"));
    cfg.schedule.enabled = 0;
    cfg.stream_trace = "/nonexistent-dir/x.json";
    assert_true(opprof_start(&cfg) != OPPROF_OK);
    assert_int_equal(opprof_is_active(), 0);
    /* and a session after them streams as asked */
    cfg.stream_trace = path;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    opprof_begin(&site_a);
    opprof_end(&site_a);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_int_equal(count_of(t, "A"), 1);
    opprof_trace_free(t);
    char *text = slurp(path);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"name\": \"A\""));
    free(text);
}

/* A file that cannot be written (a full disk): the stop says so, the sums
 * are handed out all the same, and the program's threads never wait on a
 * writer that gave up. */
static void write_failure(const char *path)
{
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.stream_trace = path;
    op_spill_limit((size_t)2 << 20);
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    for (int i = 0; i < 300000; i++) { /* several chunks: the writer fails early and drains the rest */
        opprof_begin(&site_leaf);
        opprof_end(&site_leaf);
    }
    opprof_trace *t = NULL;
    int rc = opprof_stop(&t);
    op_spill_limit(0);
    assert_int_equal(rc, OPPROF_E_IO);
    assert_non_null(strstr(opprof_last_error(), path));
    assert_non_null(t);
    assert_int_equal(count_of(t, "leaf"), 300000);
    opprof_trace_free(t);
}

/* Chrome JSON, and a .pftrace (a link to the full device: the name picks
 * the format). */
static void test_write_failure_is_reported(void **state)
{
    (void)state;
    write_failure("/dev/full");
    char link[600];
    path_in(link, sizeof link, "full.pftrace");
    assert_int_equal(symlink("/dev/full", link), 0);
    write_failure(link);
}

/* Filters keep ranges out of the file, never out of the sums, and the file
 * says what it left out. deep_tree's ranges: A 10.7 us > B 6.2 us > C 2.5 us. */
static void filtered(const char *name, int64_t min_ns, int max_depth, uint64_t a, uint64_t b, uint64_t c)
{
    char path[600];
    path_in(path, sizeof path, name);
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.stream_trace = path;
    cfg.clock = fake_clock;
    cfg.trace_min_duration_ns = min_ns;
    cfg.trace_max_depth = max_depth;
    g_now = 1000;
    g_step = 0;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    deep_tree();
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_int_equal(count_of(t, "A"), 4);
    assert_int_equal(count_of(t, "B"), 4);
    assert_int_equal(count_of(t, "C"), 4);
    opprof_trace_free(t);
    opprof_trace *back = NULL;
    if (opprof_trace_load(path, &back) != OPPROF_OK) fail_msg("%s: %s", path, opprof_last_error());
    assert_int_equal(count_of(back, "A"), a);
    assert_int_equal(count_of(back, "B"), b);
    assert_int_equal(count_of(back, "C"), c);
    opprof_trace_free(back);
    if (!strstr(name, ".json")) return;
    char want[200];
    snprintf(want, sizeof want, "\"opprofFiltered\": {\"minDurationNs\": %lld, \"maxDepth\": %d, \"slices\": %llu}",
             (long long)min_ns, max_depth, (unsigned long long)(12 - a - b - c));
    char *text = slurp(path);
    assert_non_null(text);
    if (!strstr(text, want)) fail_msg("no %s in:\n%s", want, text);
    free(text);
}

static void test_filters_leave_the_sums_alone(void **state)
{
    (void)state;
    filtered("short.json", 3000, 0, 4, 4, 0);
    filtered("short.pftrace", 3000, 0, 4, 4, 0);
    filtered("deep.json", 0, 1, 4, 0, 0);
    filtered("deep.pftrace", 0, 2, 4, 4, 0);
    filtered("both.json", 7000, 2, 4, 0, 0);
    /* without a streamed trace, or negative: refused */
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.trace_max_depth = 1;
    assert_int_equal(opprof_start(&cfg), OPPROF_E_INVAL);
    assert_non_null(strstr(opprof_last_error(), "stream_trace"));
    char path[600];
    path_in(path, sizeof path, "neg.json");
    cfg.trace_max_depth = 0;
    cfg.trace_min_duration_ns = -1;
    cfg.stream_trace = path;
    assert_int_equal(opprof_start(&cfg), OPPROF_E_INVAL);
    assert_int_equal(opprof_is_active(), 0);
}

/* A queue that takes one hand-off at a time (a disk that cannot keep up):
 * the threads never wait; what the queue refused goes with their next
 * hand-off, and every call is in the sums and in the file. */
static void test_full_queue_defers_and_loses_nothing(void **state)
{
    (void)state;
    char path[600];
    path_in(path, sizeof path, "deferred.pftrace");
    op_spill_limit(1);
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.stream_trace = path;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    pthread_t th[NTHREADS];
    g_per_thread = PER_THREAD;
    for (int i = 0; i < NTHREADS; i++) assert_int_equal(pthread_create(&th[i], NULL, worker, NULL), 0);
    for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
    op_spill_stats st;
    op_spill_stats_get(&st);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    op_spill_limit(0);
    print_message("%llu hand-offs, %llu deferred\n", (unsigned long long)st.handed, (unsigned long long)st.deferred);
    uint64_t a = count_of(t, "A");
    assert_true(a >= NTHREADS * PER_THREAD);
    opprof_trace *back = NULL;
    assert_int_equal(opprof_trace_load(path, &back), OPPROF_OK);
    assert_int_equal(count_of(back, "A"), a);
    assert_int_equal(count_of(back, "C"), count_of(t, "C"));
    opprof_trace_free(back);
    opprof_trace_free(t);
}

/* A child forked while the parent streams has no session; it may stream
 * its own, and each file is whole. */
static void test_fork_child_streams_its_own(void **state)
{
    (void)state;
#if defined(__SANITIZE_THREAD__)
    skip(); /* TSan cannot start threads (the child's writer) after a multi-threaded fork */
#endif
    char mine[600], childs[600];
    path_in(mine, sizeof mine, "parent.json");
    path_in(childs, sizeof childs, "child.json");
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.stream_trace = mine;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    pthread_t busy;
    volatile int stop = 0;
    assert_int_equal(pthread_create(&busy, NULL, until_stopped, (void *)&stop), 0); /* hands chunks over meanwhile */
    opprof_begin(&site_a);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int ok = !opprof_is_active();
        cfg.stream_trace = childs;
        ok = ok && opprof_start(&cfg) == OPPROF_OK;
        opprof_begin(&site_c);
        opprof_end(&site_c);
        opprof_trace *t = NULL;
        ok = ok && opprof_stop(&t) == OPPROF_OK && opprof_trace_aggregated(t) == 1;
        opprof_trace_free(t);
        _exit(ok ? 0 : 1);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    opprof_end(&site_a);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    pthread_join(busy, NULL);
    opprof_trace *p = NULL, *c = NULL;
    assert_int_equal(opprof_trace_load(mine, &p), OPPROF_OK);
    assert_int_equal(opprof_trace_load(childs, &c), OPPROF_OK);
    assert_int_equal(count_of(p, "A"), count_of(t, "A"));
    assert_int_equal(count_of(c, "C"), 1);
    assert_int_equal(count_of(c, "A"), 0);
    opprof_trace_free(p);
    opprof_trace_free(c);
    opprof_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_streamed_equals_event_path),
        cmocka_unit_test(test_streamed_with_stack),
        cmocka_unit_test(test_streamed_call_paths),
        cmocka_unit_test(test_memory_bounded_for_a_long_run),
        cmocka_unit_test(test_threads_exit_and_record_through_stop),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_write_failure_is_reported),
        cmocka_unit_test(test_full_queue_defers_and_loses_nothing),
        cmocka_unit_test(test_filters_leave_the_sums_alone),
        cmocka_unit_test(test_fork_child_streams_its_own),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

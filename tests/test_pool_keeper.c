/* The pool keeper (capture/keeper.c): a long session's fresh chunks are
 * mapped and faulted in by the keeper thread, not by the thread that
 * records; the keeper runs only while a session does; a child forked then
 * records without one, a child forked between sessions gets its own; and
 * every event is kept. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "capture/state.h"
#include "opprof_trace.h"

OPPROF_SITE(site_op, "op");

/* More ranges than a full-size chunk holds (24 bytes each). */
#define PER_CHUNK ((long)(OP_CHUNK_BYTES / 24) + 100)

/* Waits (up to 20 s, for loaded machines and sanitizers) until the pool
 * holds the keeper's target again; 0 when it does. */
static int wait_refilled(void)
{
    for (int i = 0; i < 20000; i++) {
        if (op_capture_pool_full() >= OP_KEEP_AHEAD_CHUNKS) return 0;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return -1;
}

/* This process's threads named as the keeper names itself. */
static int keepers(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        char path[300], comm[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fgets(comm, sizeof comm, f)) n += strcmp(comm, "opprof-pool\n") == 0;
        fclose(f);
    }
    closedir(d);
    return n;
}

/* Records `chunks` chunks' worth, letting the keeper catch up after each
 * (when `wait`); returns the chunks this thread had to map itself, -1 on a
 * failure. */
static long record_chunks(int chunks, int wait)
{
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.max_events = 1ull << 40;
    if (opprof_start(&cfg) != OPPROF_OK) return -1;
    uint64_t mapped = op_capture_chunks_mapped();
    for (int k = 0; k < chunks; k++) {
        for (long i = 0; i < PER_CHUNK; i++) {
            opprof_begin(&site_op);
            opprof_end(&site_op);
        }
        if (wait && wait_refilled() != 0) return -1;
    }
    long self = (long)(op_capture_chunks_mapped() - mapped);
    opprof_trace *t = NULL;
    if (opprof_stop(&t) != OPPROF_OK) return -1;
    long n = (long)opprof_trace_event_count(t);
    opprof_trace_free(t);
    return n == chunks * PER_CHUNK ? self : -1;
}

static void test_keeper_maps_fresh_chunks_ahead_of_the_recording_thread(void **state)
{
    (void)state;
    assert_int_equal(record_chunks(20, 1), 0); /* the pool holds 4 at the first start */
    assert_int_equal(keepers(), 0);            /* the keeper is gone with the session */
}

static void test_keeper_runs_only_during_a_session(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    assert_int_equal(keepers(), 1);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    opprof_trace_free(t);
    assert_int_equal(keepers(), 0);
    cfg.aggregate = 1; /* tables only: no chunks to keep ahead */
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    assert_int_equal(keepers(), 0);
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    opprof_trace_free(t);
}

static int child_status(pid_t pid)
{
    int st = 0;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

/* Forked between sessions, a child starts its own keeper. It records more
 * chunks than the pool it inherits can hold. */
static void test_child_forked_between_sessions_gets_a_keeper(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        long self = record_chunks(80, 1);
        if (self != 0) fprintf(stderr, "child: %ld chunks mapped by the recording thread\n", self);
        _exit(self == 0 ? 0 : 1);
    }
    assert_int_equal(child_status(pid), 0);
}

/* Forked while a keeper runs, a child starts no thread: its session maps
 * its own chunks, and keeps every event. */
static void test_child_forked_during_a_session_maps_its_own(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        long self = record_chunks(80, 0);
        if (self <= 0) fprintf(stderr, "child: recording thread mapped %ld chunks\n", self);
        _exit(self > 0 && keepers() == 0 ? 0 : 1);
    }
    assert_int_equal(child_status(pid), 0);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    opprof_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keeper_maps_fresh_chunks_ahead_of_the_recording_thread),
        cmocka_unit_test(test_keeper_runs_only_during_a_session),
        cmocka_unit_test(test_child_forked_between_sessions_gets_a_keeper),
        cmocka_unit_test(test_child_forked_during_a_session_maps_its_own),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

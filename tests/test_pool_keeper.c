/* The pool keeper (capture/keeper.c): a long session's fresh chunks are
 * mapped and faulted in by the keeper thread, not by the thread that
 * records, also in a forked child; and every event is kept. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

/* Records `chunks` chunks' worth, letting the keeper catch up after each;
 * returns the chunks this thread had to map itself, -1 on a failure. */
static long record_chunks(int chunks)
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
        if (wait_refilled() != 0) return -1;
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
    assert_int_equal(record_chunks(20), 0); /* the pool holds 4 at the first start */
}

/* A forked child has no keeper thread until its first session starts one.
 * It records more chunks than the pool it inherits can hold. */
static void test_forked_child_gets_its_own_keeper(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(record_chunks(80) == 0 ? 0 : 1);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keeper_maps_fresh_chunks_ahead_of_the_recording_thread),
        cmocka_unit_test(test_forked_child_gets_its_own_keeper),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

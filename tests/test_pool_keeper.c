/* The pool keeper (capture/keeper.c): a long session's fresh chunks are
 * mapped and faulted in by the keeper thread, not by the thread that
 * records; one keeper serves every later session; a fork finds no keeper
 * thread (the parent's is joined and started again) and a forked child
 * gets its own with its first session; and every event is kept. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "capture/pool.h"
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
    assert_int_equal(keepers(), 0);
    assert_int_equal(record_chunks(20, 1), 0); /* the pool holds 4 at the first start */
    assert_int_equal(keepers(), 1);
}

/* Full-size chunks are mapped two to a 2 MiB-aligned block (one huge page
 * where the kernel offers them) and handed out faulted in. */
static void test_full_chunks_come_faulted_in_from_2mib_blocks(void **state)
{
    (void)state;
    long page = sysconf(_SC_PAGESIZE);
    assert_true(page > 0);
    size_t npages = OP_CHUNK_BYTES / (size_t)page;
    unsigned char *vec = malloc(npages);
    assert_non_null(vec);
    op_chunk *c[6];
    for (int i = 0; i < 6; i++) {
        c[i] = op_chunk_new();
        assert_non_null(c[i]);
        uintptr_t off = (uintptr_t)c[i] & (((uintptr_t)2 << 20) - 1);
        assert_true(off == 0 || off == OP_CHUNK_BYTES);
        assert_int_equal(mincore(c[i], OP_CHUNK_BYTES, vec), 0);
        for (size_t p = 0; p < npages; p++) assert_true(vec[p] & 1);
    }
    for (int i = 0; i < 6; i++) op_chunks_free(c[i]);
    free(vec);
}

static void test_one_keeper_serves_every_session(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(opprof_start(&cfg), OPPROF_OK);
        assert_int_equal(keepers(), 1);
        opprof_trace *t = NULL;
        assert_int_equal(opprof_stop(&t), OPPROF_OK);
        opprof_trace_free(t);
        assert_int_equal(keepers(), 1);
    }
}

static int child_status(pid_t pid)
{
    int st = 0;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

/* A child's first sessions: one of tables only starts no keeper (it takes
 * no chunks after its first); one that keeps events does, and records more
 * chunks than the pool it inherits can hold without mapping any itself. */
static int child_sessions(void)
{
    if (keepers() != 0) return 1;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.aggregate = 1;
    opprof_trace *t = NULL;
    if (opprof_start(&cfg) != OPPROF_OK || keepers() != 0 || opprof_stop(&t) != OPPROF_OK) return 2;
    opprof_trace_free(t);
    long self = record_chunks(80, 1);
    if (self != 0) fprintf(stderr, "child: the recording thread mapped %ld chunks\n", self);
    return self == 0 && keepers() == 1 ? 0 : 3;
}

/* Forked between sessions and during one (ThreadSanitizer, which refuses
 * a child's threads after a multi-threaded fork, checks that the keeper
 * was joined first); the parent's keeper is running again after each. */
static void test_forked_child_starts_its_own_keeper(void **state)
{
    (void)state;
    for (int during = 0; during < 2; during++) {
        opprof_config cfg;
        opprof_config_init(&cfg);
        if (during) assert_int_equal(opprof_start(&cfg), OPPROF_OK);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) _exit(child_sessions());
        assert_int_equal(child_status(pid), 0);
        assert_int_equal(keepers(), 1);
        if (during) {
            opprof_trace *t = NULL;
            assert_int_equal(opprof_stop(&t), OPPROF_OK);
            opprof_trace_free(t);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keeper_maps_fresh_chunks_ahead_of_the_recording_thread),
        cmocka_unit_test(test_full_chunks_come_faulted_in_from_2mib_blocks),
        cmocka_unit_test(test_one_keeper_serves_every_session),
        cmocka_unit_test(test_forked_child_starts_its_own_keeper),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

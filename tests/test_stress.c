/* Stress and misuse under load: many threads against the cap, thousands of
 * sessions in one process, callbacks that misbehave, fork.
 *
 * Sizes are small by default so that the suite stays fast; `make stress`
 * sets OPPROF_STRESS=long for the sizes of issue 9 (16 threads, 50 million
 * events, a cap of 10 million; 10,000 sessions). */
#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "opprof.h"

static int long_run(void)
{
    const char *s = getenv("OPPROF_STRESS");
    return s && !strcmp(s, "long");
}

OPPROF_SITE(site_op, "stress::op");
OPPROF_SITE(site_inner, "stress::inner");

typedef struct worker_arg {
    long ranges;
    pthread_barrier_t *bar;
} worker_arg;

static void *worker(void *p)
{
    worker_arg *a = p;
    pthread_barrier_wait(a->bar);
    for (long i = 0; i < a->ranges / 2; i++) {
        opprof_begin(&site_op);
        opprof_begin(&site_inner);
        opprof_end(&site_inner);
        opprof_end(&site_op);
    }
    return NULL;
}

static void test_sixteen_threads_against_the_cap(void **state)
{
    (void)state;
    enum { NTHREADS = 16 };
    long total = long_run() ? 50000000L : 4000000L;
    uint64_t cap = long_run() ? 10000000u : 800000u;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.max_events = cap;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, NTHREADS);
    pthread_t th[NTHREADS];
    worker_arg a = {total / NTHREADS, &bar};
    for (int i = 0; i < NTHREADS; i++) assert_int_equal(pthread_create(&th[i], NULL, worker, &a), 0);
    for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&bar);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    uint64_t recorded = opprof_trace_event_count(t), dropped = opprof_trace_dropped(t);
    print_message("stress: attempted %ld, recorded %llu, dropped %llu, cap %llu\n", total,
                  (unsigned long long)recorded, (unsigned long long)dropped, (unsigned long long)cap);
    assert_int_equal(recorded + dropped, (uint64_t)total);
    assert_true(recorded <= cap);
    /* a thread that finished early may hold part of a budget grant unused */
    assert_true(recorded >= cap - NTHREADS * 4096);
    /* what was kept is whole: every inner range sits in an outer one */
    for (size_t i = 0; i < recorded; i++) {
        opprof_event e;
        opprof_trace_event(t, i, &e);
        assert_int_equal(e.flags, 0);
        if (!strcmp(e.name, "stress::inner") && e.parent >= 0) {
            opprof_event p;
            opprof_trace_event(t, (size_t)e.parent, &p);
            assert_string_equal(p.name, "stress::op");
        }
    }
    /* and the table says how many were dropped */
    opprof_key_averages *ka = NULL;
    assert_int_equal(opprof_key_averages(t, NULL, &ka), OPPROF_OK);
    char *text = NULL;
    assert_int_equal(opprof_table_string(ka, "count", -1, &text), OPPROF_OK);
    char want[64];
    snprintf(want, sizeof want, "Dropped events: %llu", (unsigned long long)dropped);
    assert_non_null(strstr(text, want));
    free(text);
    opprof_key_averages_free(ka);
    opprof_trace_free(t);
}

static long resident_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, rss = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
        fclose(f);
    }
    return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static int open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    while (readdir(d)) n++;
    closedir(d);
    return n;
}

static void one_session(int memory)
{
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.profile_memory = memory;
    cfg.record_shapes = 1;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    for (int k = 0; k < 50; k++) {
        opprof_input in[2] = {{OPPROF_DTYPE_FLOAT, 2, {k, 3}}, {OPPROF_DTYPE_INT64, 1, {k}}};
        opprof_begin_inputs(&site_op, in, 2);
        opprof_record_alloc((void *)(uintptr_t)(0x1000 + 16 * k), 64);
        opprof_record_free((void *)(uintptr_t)(0x1000 + 16 * k));
        opprof_end(&site_op);
    }
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_int_equal(opprof_trace_event_count(t), 50);
    opprof_trace_free(t);
}

static void test_many_sessions_leak_nothing(void **state)
{
    (void)state;
    int cycles = long_run() ? 10000 : 1000;
    for (int i = 0; i < 50; i++) one_session(i & 1); /* warm up pools and caches */
    long rss0 = resident_kb();
    int fds0 = open_fds();
    for (int i = 0; i < cycles; i++) one_session(i & 1);
    long rss1 = resident_kb();
    int fds1 = open_fds();
    print_message("sessions: %d cycles, resident %ld -> %ld KiB, fds %d -> %d\n", cycles, rss0, rss1, fds0, fds1);
    assert_int_equal(fds0, fds1);
    assert_true(rss1 - rss0 < 2048); /* stable: not growing with the cycles */
}

static struct {
    int calls, nested_start_rc, active_inside;
} g_cb;

static void callback_into_api(const opprof_trace *t, void *user)
{
    (void)user;
    g_cb.calls++;
    g_cb.active_inside = opprof_is_active();
    /* a callback may read the trace, and may even start a new session */
    assert_true(opprof_trace_event_count(t) >= 1);
    opprof_config cfg;
    opprof_config_init(&cfg);
    g_cb.nested_start_rc = opprof_start(&cfg);
    opprof_begin(&site_inner);
    opprof_end(&site_inner);
}

static void test_callback_may_call_back_into_the_api(void **state)
{
    (void)state;
    memset(&g_cb, 0, sizeof g_cb);
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.on_trace_ready = callback_into_api;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    opprof_begin(&site_op);
    opprof_end(&site_op);
    assert_int_equal(opprof_stop(NULL), OPPROF_OK);
    assert_int_equal(g_cb.calls, 1);
    assert_int_equal(g_cb.active_inside, 0);
    assert_int_equal(g_cb.nested_start_rc, OPPROF_OK);
    /* the session the callback started is a normal one */
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_int_equal(opprof_trace_event_count(t), 1);
    opprof_trace_free(t);
}

static void test_fork_child_profiles_on_its_own(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    opprof_begin(&site_op);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* the child has no session; it can start its own */
        int ok = opprof_is_active() == 0;
        opprof_config c;
        opprof_config_init(&c);
        ok = ok && opprof_start(&c) == OPPROF_OK;
        for (int i = 0; i < 10; i++) {
            opprof_begin(&site_inner);
            opprof_end(&site_inner);
        }
        opprof_trace *t = NULL;
        ok = ok && opprof_stop(&t) == OPPROF_OK && opprof_trace_event_count(t) == 10;
        opprof_trace_free(t);
        _exit(ok ? 0 : 1);
    }
    for (int i = 0; i < 5; i++) {
        opprof_begin(&site_inner);
        opprof_end(&site_inner);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    opprof_end(&site_op);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_int_equal(opprof_trace_event_count(t), 6);
    opprof_event e;
    opprof_trace_event(t, 0, &e);
    assert_string_equal(e.name, "stress::op");
    assert_int_equal(e.flags, 0);
    opprof_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sixteen_threads_against_the_cap),
        cmocka_unit_test(test_many_sessions_leak_nothing),
        cmocka_unit_test(test_callback_may_call_back_into_the_api),
        cmocka_unit_test(test_fork_child_profiles_on_its_own),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

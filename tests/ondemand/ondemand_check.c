/* On demand: a program started with OPPROF_ON_DEMAND=1 records only when
 * triggered, for the time asked (within 10%), writes each trigger's files,
 * and keeps its own stdout and exit status; a trigger to a process that
 * does not accept them, to one that is gone, or from another user fails
 * with a clear message (opprof trigger exits 2); --list shows the process
 * and removes stale sockets. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <cmocka.h>

#include "proc.h"
#include "slurp.h"
#include "tmpdir.h"

static char g_dir[] = "/tmp/opprof_od_XXXXXX";
static char g_xdg[600], g_xdg_env[700];

static void path_in(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", g_dir, name);
}

/* od_target, for secs or until end_target (its stop file, tag.stop):
 * "600" waits for the test whatever the machine's load. */
static pid_t start_target(const char *secs, int on_demand, const char *tag)
{
    char out[600], err[600], stop[600];
    snprintf(out, sizeof out, "%s/%s.out", g_dir, tag);
    snprintf(err, sizeof err, "%s/%s.err", g_dir, tag);
    snprintf(stop, sizeof stop, "%s/%s.stop", g_dir, tag);
    char *argv[] = {getenv("OD_TARGET"), (char *)secs, stop, NULL};
    const char *env[] = {g_xdg_env, on_demand ? "OPPROF_ON_DEMAND=1" : "OPPROF_ON_DEMAND=0", NULL};
    pid_t pid = proc_spawn(argv, env, out, err);
    assert_true(pid > 0);
    return pid;
}

/* Ends the target started with tag: its exit status. */
static int end_target(pid_t pid, const char *tag)
{
    char stop[600];
    snprintf(stop, sizeof stop, "%s/%s.stop", g_dir, tag);
    assert_int_equal(proc_touch(stop), 0);
    return proc_wait_ms(pid, PROC_DEADLINE_MS);
}

/* The span of the "work" events of a trace file, in seconds. */
static double work_span(const char *path, size_t *nwork)
{
    opprof_trace *t = NULL;
    assert_int_equal(opprof_trace_load(path, &t), OPPROF_OK);
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    *nwork = 0;
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        assert_int_equal(opprof_trace_event(t, i, &e), OPPROF_OK);
        if (strcmp(e.name, "work") != 0) continue;
        if (e.start_ns < lo) lo = e.start_ns;
        if (e.start_ns + e.dur_ns > hi) hi = e.start_ns + e.dur_ns;
        (*nwork)++;
    }
    opprof_trace_free(t);
    return *nwork ? (double)(hi - lo) / 1e9 : 0;
}

static void trigger_records_the_requested_time(void **state)
{
    (void)state;
    pid_t pid = start_target("600", 1, "od");
    assert_true(proc_wait_listening(pid));
    char trace[600], table[600];
    path_in(trace, sizeof trace, "t_{n}.json");
    opprof_trigger_request r;
    opprof_trigger_request_init(&r);
    r.duration_ns = 2000000000;
    r.trace = trace;
    char *reply = NULL;
    size_t rlen = 0;
    FILE *f = open_memstream(&reply, &rlen);
    assert_int_equal(opprof_trigger(pid, &r, f), OPPROF_OK);
    fclose(f);
    assert_non_null(strstr(reply, "wrote "));
    free(reply);
    /* A second trigger, half as long, into its own file, with a table. */
    r.duration_ns = 1000000000;
    path_in(table, sizeof table, "table_{n}.txt");
    r.table = table;
    assert_int_equal(opprof_trigger(pid, &r, NULL), OPPROF_OK);
    char t1[600], t2[600], tab2[600];
    path_in(t1, sizeof t1, "t_1.json");
    path_in(t2, sizeof t2, "t_2.json");
    path_in(tab2, sizeof tab2, "table_2.txt");
    size_t n1, n2;
    double s1 = work_span(t1, &n1), s2 = work_span(t2, &n2);
    print_message("recorded spans: %.4f s (asked 2 s, %zu work ranges), %.4f s (asked 1 s, %zu)\n", s1, n1, s2, n2);
    assert_true(n1 > 100 && n2 > 50);
    assert_true(s1 > 1.8 && s1 < 2.2);
    assert_true(s2 > 0.9 && s2 < 1.1);
    char *tab = slurp(tab2);
    assert_non_null(tab);
    assert_non_null(strstr(tab, "work"));
    free(tab);
    /* The command line too: the table printed here. */
    char pidarg[32], out[600], err[600];
    snprintf(pidarg, sizeof pidarg, "%lld", (long long)pid);
    path_in(out, sizeof out, "cli.out");
    path_in(err, sizeof err, "cli.err");
    char *argv[] = {getenv("OPPROF_BIN"), "trigger", pidarg, "--duration", "200ms", "--table", "-", NULL};
    assert_int_equal(proc_run(argv, out, err), 0);
    char *o = slurp(out);
    assert_non_null(strstr(o, "Self CPU time total"));
    assert_non_null(strstr(o, "inner"));
    free(o);
    /* The program's own output and status, as without triggers. */
    assert_int_equal(end_target(pid, "od"), 7);
    char od_out[600];
    path_in(od_out, sizeof od_out, "od.out");
    char *text = slurp(od_out);
    assert_string_equal(text, "start\ndone\n");
    free(text);
    pid_t plain = start_target("0.2", 0, "plain");
    assert_int_equal(proc_wait(plain), 7);
    path_in(od_out, sizeof od_out, "plain.out");
    text = slurp(od_out);
    assert_string_equal(text, "start\ndone\n");
    free(text);
}

static void trigger_refuses_clearly(void **state)
{
    (void)state;
    pid_t pid = start_target("600", 0, "deaf");
    char pidarg[32], out[600], err[600];
    snprintf(pidarg, sizeof pidarg, "%lld", (long long)pid);
    path_in(out, sizeof out, "deaf.cli.out");
    path_in(err, sizeof err, "deaf.cli.err");
    char *argv[] = {getenv("OPPROF_BIN"), "trigger", pidarg, "--duration", "1s", NULL};
    assert_int_equal(proc_run(argv, out, err), 2);
    char *e = slurp(err);
    assert_non_null(strstr(e, "does not accept triggers"));
    free(e);
    kill(pid, SIGTERM);
    proc_wait(pid);
    /* Gone now. */
    assert_int_equal(proc_run(argv, out, err), 2);
    e = slurp(err);
    assert_non_null(strstr(e, "no process"));
    free(e);
    /* A flight dump from a process without the recorder. */
    pid = start_target("600", 1, "nodump");
    assert_true(proc_wait_listening(pid));
    opprof_trigger_request r;
    opprof_trigger_request_init(&r);
    r.dump = 1;
    assert_int_equal(opprof_trigger(pid, &r, NULL), OPPROF_E_NO_SESSION);
    assert_non_null(strstr(opprof_last_error(), "no flight recorder"));
    kill(pid, SIGTERM);
    proc_wait(pid);
}

/* Another user: the trigger says whose process it is; and when the socket
 * is reachable, the listener itself (SO_PEERCRED) turns the caller away. */
static void trigger_from_another_user_fails(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        opprof_trigger_request r;
        opprof_trigger_request_init(&r);
        assert_int_equal(opprof_trigger(1, &r, NULL), OPPROF_E_PERM);
        assert_non_null(strstr(opprof_last_error(), "another user"));
        return;
    }
    pid_t pid = start_target("600", 1, "root");
    assert_true(proc_wait_listening(pid));
    char sock[700];
    snprintf(sock, sizeof sock, "%s/opprof/%lld.sock", g_xdg, (long long)pid);
    pid_t child = fork();
    if (child == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0) _exit(90);
        opprof_trigger_request r;
        opprof_trigger_request_init(&r);
        int rc = opprof_trigger(pid, &r, NULL);
        if (rc != OPPROF_E_PERM || !strstr(opprof_last_error(), "another user")) _exit(91);
        _exit(0);
    }
    assert_int_equal(proc_wait(child), 0);
    /* Open the folder and the socket to everyone: the listener still refuses. */
    char dir[700];
    snprintf(dir, sizeof dir, "%s/opprof", g_xdg);
    assert_int_equal(chmod(g_dir, 0755), 0);
    assert_int_equal(chmod(g_xdg, 0755), 0);
    assert_int_equal(chmod(dir, 0755), 0);
    assert_int_equal(chmod(sock, 0666), 0);
    child = fork();
    if (child == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0) _exit(90);
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        if (strlen(sock) >= sizeof a.sun_path) _exit(95);
        memcpy(a.sun_path, sock, strlen(sock) + 1);
        if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) _exit(92);
        /* The listener may have answered and closed before this is sent. */
        const char req[] = "op=record\nduration_ns=1000000\n";
        (void)send(fd, req, sizeof req - 1, MSG_NOSIGNAL);
        shutdown(fd, SHUT_WR);
        char buf[256] = "";
        ssize_t n = read(fd, buf, sizeof buf - 1);
        _exit(n > 0 && !strncmp(buf, "error -12 ", 10) && strstr(buf, "only its own user") ? 0 : 94);
    }
    assert_int_equal(proc_wait(child), 0);
    assert_int_equal(chmod(dir, 0700), 0);
    kill(pid, SIGTERM);
    proc_wait(pid);
}

static void list_shows_and_cleans(void **state)
{
    (void)state;
    pid_t pid = start_target("600", 1, "listed");
    assert_true(proc_wait_listening(pid));
    /* A socket file whose process is gone: --list removes it. */
    char stale[700];
    snprintf(stale, sizeof stale, "%s/opprof/999999999.sock", g_xdg);
    FILE *f = fopen(stale, "w");
    assert_non_null(f);
    fclose(f);
    char out[600], err[600];
    path_in(out, sizeof out, "list.out");
    path_in(err, sizeof err, "list.err");
    char *argv[] = {getenv("OPPROF_BIN"), "trigger", "--list", NULL};
    assert_int_equal(proc_run(argv, out, err), 0);
    char *o = slurp(out), want[64];
    snprintf(want, sizeof want, "%lld on-demand idle od_target", (long long)pid);
    assert_non_null(strstr(o, want));
    free(o);
    assert_int_equal(access(stale, F_OK), -1);
    kill(pid, SIGTERM);
    proc_wait(pid);
    /* Its socket goes with it: a clean exit removes it. */
    pid = start_target("600", 1, "clean");
    assert_true(proc_wait_listening(pid));
    snprintf(stale, sizeof stale, "%s/opprof/%lld.sock", g_xdg, (long long)pid);
    assert_int_equal(access(stale, F_OK), 0);
    assert_int_equal(end_target(pid, "clean"), 7);
    assert_int_equal(access(stale, F_OK), -1);
}

/* A duration or a timeout of INT64_MAX ns (opprof_trigger takes any
 * positive one): recorded until the program ends, which writes what it has;
 * the wait's rounding to milliseconds overflowed (UBSan). */
/* Ends the target of tag once --list shows it recording: what the
 * program's end does to a trigger that waits for ever. */
typedef struct ender {
    pid_t pid;
    const char *tag;
} ender;

static void *end_when_recording(void *arg)
{
    const ender *e = arg;
    char want[64], stop[600];
    snprintf(want, sizeof want, "%lld on-demand recording ", (long long)e->pid);
    snprintf(stop, sizeof stop, "%s/%s.stop", g_dir, e->tag);
    for (int64_t end = proc_now_ms() + PROC_DEADLINE_MS; proc_now_ms() < end; proc_sleep_ms(10)) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f) break;
        opprof_trigger_list(f);
        fclose(f);
        int found = buf && strstr(buf, want) != NULL;
        free(buf);
        if (found) {
            /* It records while it runs: let it use some CPU (3 ticks, about
             * 150 work ranges) before it ends, whatever the machine's load
             * (starved under TSan beside busy loops, it once recorded for
             * 25 ms and no range). */
            (void)proc_wait_cpu(e->pid, 3);
            break;
        }
    }
    (void)proc_touch(stop); /* recording or not: the test must end */
    return NULL;
}

static void trigger_for_ever(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        const char *tag = k ? "ever_steps" : "ever";
        pid_t pid = start_target("600", 1, tag);
        assert_true(proc_wait_listening(pid));
        ender en = {pid, tag};
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, end_when_recording, &en), 0);
        char trace[600];
        path_in(trace, sizeof trace, k ? "ever_steps.json" : "ever.json");
        opprof_trigger_request r;
        opprof_trigger_request_init(&r);
        if (k) {
            r.steps = 1000000000;
            r.timeout_ns = INT64_MAX;
        } else {
            r.duration_ns = INT64_MAX;
        }
        r.trace = trace;
        char *reply = NULL;
        size_t rlen = 0;
        FILE *f = open_memstream(&reply, &rlen);
        int rc = opprof_trigger(pid, &r, f);
        fclose(f);
        print_message("trigger: %d, reply: %s", rc, reply ? reply : "");
        /* Steps are whole steps: the program may end (the ender saw it
         * recording) before the first one did; then nothing was recorded,
         * and the reply says so. */
        long steps_done = -1;
        const char *after = reply ? strstr(reply, "after ") : NULL;
        if (k && after) steps_done = strtol(after + 6, NULL, 10);
        free(reply);
        pthread_join(th, NULL);
        assert_int_equal(proc_wait_ms(pid, PROC_DEADLINE_MS), 7); /* its own exit, not a sanitizer's */
        assert_int_equal(rc, OPPROF_OK);
        size_t n;
        (void)work_span(trace, &n);
        if (k) assert_true(steps_done >= 0); /* the reply says how many steps were recorded */
        if (!k || steps_done > 0) assert_true(n > 0); /* what it recorded until the program ended, written */
    }
}

static int setup(void **state)
{
    (void)state;
    if (proc_group_setup(g_dir, g_xdg_env, sizeof g_xdg_env) != 0) return -1;
    snprintf(g_xdg, sizeof g_xdg, "%s/run", g_dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove(g_dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(trigger_records_the_requested_time),
        cmocka_unit_test(trigger_refuses_clearly),
        cmocka_unit_test(trigger_from_another_user_fails),
        cmocka_unit_test(list_shows_and_cleans),
        cmocka_unit_test(trigger_for_ever),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* The trigger checks what it connects to (issue 25, item 2): a socket
 * planted as PID.sock in a folder another user made first (as
 * /tmp/opprof-UID can be, where $XDG_RUNTIME_DIR and /run/user are
 * absent), or one served by a process that is not PID, is refused before
 * anything is sent; a reply is shown with its control characters escaped;
 * a stopped process (SIGSTOP, a debugger) is given up on, by --list and by
 * a trigger, instead of waited for forever.
 *
 * The folders are this test's own ($XDG_RUNTIME_DIR in its temp folder):
 * the planted one is made there, owned by nobody (65534), which needs
 * root; as another user those cases are skipped. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
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

static char g_dir[] = "/tmp/opprof_planted_XXXXXX";
static char g_xdg[600], g_xdg_env[700]; /* this case's */

#define DEADLINE_MS 60000
#define NOBODY 65534

static const char k_forged[] = "ok\n\033]0;owned\007wrote /home/you/secret\n";

/* Each case its own $XDG_RUNTIME_DIR, so that one that fails leaves
 * nothing in the next one's way. */
static int fresh_xdg(void **state)
{
    (void)state;
    static int k;
    snprintf(g_xdg, sizeof g_xdg, "%s/run%d", g_dir, ++k);
    snprintf(g_xdg_env, sizeof g_xdg_env, "XDG_RUNTIME_DIR=%s", g_xdg);
    /* 0755: nobody must reach the planted folder, as in /tmp */
    if (mkdir(g_xdg, 0755) != 0 || chmod(g_xdg, 0755) != 0) return -1;
    return setenv("XDG_RUNTIME_DIR", g_xdg, 1);
}

static void path_in(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", g_dir, name);
}

/* A process that sleeps until killed: the trigger's target. */
static pid_t start_sleeper(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        for (;;) pause();
    }
    assert_true(pid > 0);
    return pid;
}

/* A forger: as uid (0: stay who we are), binds sock and answers each
 * connection with `answer` after reading its request; the bytes it was
 * sent are appended to got. Reports on the pipe when it listens. */
static pid_t start_forger(uid_t uid, const char *sock, const char *answer, const char *got)
{
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(ready[0]);
        if (uid && (setgid(uid) != 0 || setuid(uid) != 0)) _exit(90);
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        if (fd < 0 || strlen(sock) >= sizeof a.sun_path) _exit(91);
        memcpy(a.sun_path, sock, strlen(sock) + 1);
        if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 8) != 0) _exit(92);
        if (write(ready[1], "r", 1) != 1) _exit(93);
        for (;;) {
            int c = accept(fd, NULL, NULL);
            if (c < 0) continue;
            char buf[4096];
            ssize_t n;
            while ((n = read(c, buf, sizeof buf)) > 0) {
                FILE *f = fopen(got, "a");
                if (f) {
                    fwrite(buf, 1, (size_t)n, f);
                    fclose(f);
                }
            }
            if (write(c, answer, strlen(answer)) < 0) {
            }
            close(c);
        }
    }
    close(ready[1]);
    char b;
    assert_int_equal(read(ready[0], &b, 1), 1);
    close(ready[0]);
    return pid;
}

static int rm_tree(const char *dir)
{
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd);
}

static void end(pid_t pid)
{
    kill(pid, SIGKILL);
    proc_wait(pid);
}

/* What the forger was sent: 0 bytes is the point. */
static long bytes_in(const char *got)
{
    struct stat st;
    return stat(got, &st) == 0 ? (long)st.st_size : 0;
}

/* Another user made our socket folder first, open to all, and listens as
 * PID.sock in it: the trigger refuses the folder and sends nothing. */
static void planted_folder_is_refused(void **state)
{
    (void)state;
    if (geteuid() != 0) skip();
    char dir[700], sock[800], got[800];
    snprintf(dir, sizeof dir, "%s/opprof", g_xdg);
    assert_int_equal(mkdir(dir, 0777), 0);
    assert_int_equal(chown(dir, NOBODY, NOBODY), 0);
    assert_int_equal(chmod(dir, 0777), 0);
    pid_t victim = start_sleeper();
    snprintf(sock, sizeof sock, "%s/%lld.sock", dir, (long long)victim);
    snprintf(got, sizeof got, "%s/got", dir);
    pid_t forger = start_forger(NOBODY, sock, k_forged, got);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    opprof_trigger_request r;
    opprof_trigger_request_init(&r);
    r.duration_ns = 1000000;
    int rc = opprof_trigger(victim, &r, f);
    fclose(f);
    print_message("trigger: %d, %s\n", rc, opprof_last_error());
    end(forger);
    end(victim);
    assert_int_equal(rc, OPPROF_E_PERM);
    assert_non_null(strstr(opprof_last_error(), "not user 0's own folder"));
    assert_int_equal(len, 0);
    free(out);
    out = NULL;
    assert_int_equal(bytes_in(got), 0);
    /* --list does not look into it either (nor removes anything there). */
    f = open_memstream(&out, &len);
    assert_true(opprof_trigger_list(f) >= 0);
    fclose(f);
    char pidsp[32];
    snprintf(pidsp, sizeof pidsp, "%lld ", (long long)victim);
    assert_true(strncmp(out, pidsp, strlen(pidsp)) != 0 && !strstr(out, "owned"));
    free(out);
    assert_int_equal(access(sock, F_OK), 0);
    assert_int_equal(rm_tree(dir), 0);
}

/* Our own folder, but the socket is served by another process than PID:
 * refused by its credentials (SO_PEERCRED) before anything is sent. */
static void impostor_is_refused(void **state)
{
    (void)state;
    char dir[700], sock[800], got[800];
    snprintf(dir, sizeof dir, "%s/opprof", g_xdg);
    assert_int_equal(mkdir(dir, 0700), 0);
    pid_t victim = start_sleeper();
    snprintf(sock, sizeof sock, "%s/%lld.sock", dir, (long long)victim);
    path_in(got, sizeof got, "impostor.got");
    pid_t forger = start_forger(0, sock, k_forged, got);
    opprof_trigger_request r;
    opprof_trigger_request_init(&r);
    r.duration_ns = 1000000;
    int rc = opprof_trigger(victim, &r, NULL);
    print_message("trigger: %d, %s\n", rc, opprof_last_error());
    end(forger);
    end(victim);
    assert_int_equal(rc, OPPROF_E_PERM);
    char want[64];
    snprintf(want, sizeof want, "served by process %lld", (long long)forger);
    assert_non_null(strstr(opprof_last_error(), want));
    assert_int_equal(bytes_in(got), 0);
    assert_int_equal(rm_tree(dir), 0);
}

/* The process itself answers with terminal escapes: shown escaped, in a
 * reply and in an error. */
static void replies_are_escaped(void **state)
{
    (void)state;
    char dir[700], sock[800], got[800];
    snprintf(dir, sizeof dir, "%s/opprof", g_xdg);
    assert_int_equal(mkdir(dir, 0700), 0);
    path_in(got, sizeof got, "escaped.got");
    const char *answers[2] = {k_forged, "error -5 \033[2Jgone\n"};
    for (int i = 0; i < 2; i++) {
        /* The forger is the target: it binds its own PID.sock. */
        int ready[2];
        assert_int_equal(pipe(ready), 0);
        pid_t self = fork();
        if (self == 0) {
            close(ready[0]);
            snprintf(sock, sizeof sock, "%s/%lld.sock", dir, (long long)getpid());
            int fd = socket(AF_UNIX, SOCK_STREAM, 0);
            struct sockaddr_un a = {.sun_family = AF_UNIX};
            memcpy(a.sun_path, sock, strlen(sock) + 1);
            if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 8) != 0) _exit(92);
            if (write(ready[1], "r", 1) != 1) _exit(93);
            int c = accept(fd, NULL, NULL);
            char buf[4096];
            while (read(c, buf, sizeof buf) > 0) {
            }
            if (write(c, answers[i], strlen(answers[i])) < 0) _exit(94);
            close(c);
            unlink(sock);
            _exit(0);
        }
        close(ready[1]);
        char b;
        assert_int_equal(read(ready[0], &b, 1), 1);
        close(ready[0]);
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        opprof_trigger_request r;
        opprof_trigger_request_init(&r);
        r.duration_ns = 1000000;
        int rc = opprof_trigger(self, &r, f);
        fclose(f);
        assert_int_equal(proc_wait_ms(self, DEADLINE_MS), 0);
        if (i == 0) {
            assert_int_equal(rc, OPPROF_OK);
            print_message("shown: %s", out);
            assert_null(strchr(out, '\033'));
            assert_null(strchr(out, '\007'));
            assert_non_null(strstr(out, "\\x1b]0;owned\\x07wrote /home/you/secret\n"));
        } else {
            assert_int_equal(rc, -5); /* the status it sent */
            print_message("error shown: %s\n", opprof_last_error());
            assert_null(strchr(opprof_last_error(), '\033'));
            assert_non_null(strstr(opprof_last_error(), "\\x1b[2Jgone"));
        }
        free(out);
    }
    assert_int_equal(rm_tree(dir), 0);
}

/* A stopped process still has its socket, and the kernel still takes the
 * connection: --list and a trigger give up on it and say so. */
static void stopped_process_times_out(void **state)
{
    (void)state;
    char stop[600], out[600], err[600], pids[32];
    path_in(stop, sizeof stop, "stopped.stop");
    path_in(out, sizeof out, "stopped.out");
    path_in(err, sizeof err, "stopped.err");
    char *argv[] = {getenv("OD_TARGET"), "600", stop, NULL};
    const char *env[] = {g_xdg_env, "OPPROF_ON_DEMAND=1", NULL};
    pid_t pid = proc_spawn(argv, env, out, err);
    assert_true(pid > 0);
    assert_true(proc_wait_listening(pid));
    snprintf(pids, sizeof pids, "%lld", (long long)pid);
    assert_int_equal(kill(pid, SIGSTOP), 0);
    char lout[600], lerr[600];
    path_in(lout, sizeof lout, "list.out");
    path_in(lerr, sizeof lerr, "list.err");
    char *list[] = {getenv("OPPROF_BIN"), "trigger", "--list", NULL};
    pid_t cli = proc_spawn(list, NULL, lout, lerr);
    int rc = proc_wait_ms(cli, DEADLINE_MS);
    char *o = slurp(lout), want[64];
    print_message("--list of a stopped process: exit %d\n%s", rc, o ? o : "");
    assert_int_equal(rc, 0);
    snprintf(want, sizeof want, "%s ? stopped od_target", pids);
    assert_non_null(strstr(o, want));
    free(o);
    char *trig[] = {getenv("OPPROF_BIN"), "trigger", pids, "--duration", "100ms", NULL};
    cli = proc_spawn(trig, NULL, lout, lerr);
    rc = proc_wait_ms(cli, DEADLINE_MS);
    char *e = slurp(lerr);
    print_message("trigger to a stopped process: exit %d: %s", rc, e ? e : "");
    assert_true(rc == 1 || rc == 2);
    assert_non_null(strstr(e, "does not answer"));
    free(e);
    assert_int_equal(kill(pid, SIGCONT), 0);
    FILE *f = fopen(stop, "w");
    assert_non_null(f);
    fclose(f);
    /* The request it took while stopped is answered now, to no one. */
    assert_int_equal(proc_wait_ms(pid, DEADLINE_MS), 7);
}

static int setup(void **state)
{
    (void)state;
    if (proc_group_setup(g_dir, NULL, 0) != 0) return -1;
    return chmod(g_dir, 0755);
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove(g_dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(planted_folder_is_refused, fresh_xdg),
        cmocka_unit_test_setup(impostor_is_refused, fresh_xdg),
        cmocka_unit_test_setup(replies_are_escaped, fresh_xdg),
        cmocka_unit_test_setup(stopped_process_times_out, fresh_xdg),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* A program that knows nothing of opprof, built with -finstrument-functions,
 * for the SIGINT / SIGTERM tests (signal_check.c). It records work() calls
 * until a signal ends it; argv[1] picks how it treats the signal:
 *
 *   default   no handler: the signal's default action must end it
 *   exit      a sigaction handler, installed in main, that writes "handled N"
 *             and calls _exit(42)
 *   flag      a signal() handler that sets a flag: the loop ends, main prints
 *             "stopped" and returns 0
 *   ignore    SIGTERM ignored: it runs to its own end (about 0.3 s), exit 0
 *   threads   two threads keep recording while main waits in pause()
 *   fork      a forked child loops until the test signals it, the parent
 *             waits for it, prints how it ended, and returns 0
 *
 * It prints "ready PID" on stdout (PID: the process to signal) once events
 * are being recorded. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t g_stop;
static volatile double g_sink;

/* About 5 microseconds of arithmetic: a few thousand events a second. */
__attribute__((noinline)) static double work(int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += (double)i * 0.5;
    return s;
}

__attribute__((noinline)) static void step(void)
{
    g_sink += work(4000);
}

static void on_exit_signal(int sig, siginfo_t *si, void *uc)
{
    (void)si;
    (void)uc;
    char msg[32];
    int n = snprintf(msg, sizeof msg, "handled %d\n", sig);
    (void)!write(1, msg, (size_t)n);
    _exit(42);
}

static void on_flag_signal(int sig)
{
    g_stop = sig;
}

static void *spin(void *arg)
{
    (void)arg;
    for (;;) step();
    return NULL;
}

static void ready(pid_t pid)
{
    for (int i = 0; i < 20; i++) step(); /* something recorded before the signal can come */
    printf("ready %ld\n", (long)pid);
    fflush(stdout);
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "default";
    if (!strcmp(mode, "exit")) {
        struct sigaction a;
        memset(&a, 0, sizeof a);
        a.sa_sigaction = on_exit_signal;
        a.sa_flags = SA_SIGINFO;
        sigaction(SIGINT, &a, NULL);
        sigaction(SIGTERM, &a, NULL);
    } else if (!strcmp(mode, "flag")) {
        signal(SIGINT, on_flag_signal);
        signal(SIGTERM, on_flag_signal);
    } else if (!strcmp(mode, "ignore")) {
        signal(SIGTERM, SIG_IGN);
        ready(getpid());
        for (double end = seconds() + 0.3; seconds() < end;) step();
        printf("finished\n");
        return 0;
    } else if (!strcmp(mode, "threads")) {
        pthread_t th[2];
        for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, spin, NULL);
        ready(getpid());
        for (;;) pause();
    } else if (!strcmp(mode, "fork")) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            for (;;) step();
        }
        ready(pid);
        int st = 0;
        waitpid(pid, &st, 0);
        printf("child %s %d\n", WIFSIGNALED(st) ? "signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
        return 0;
    }
    ready(getpid());
    while (!g_stop) step();
    printf("stopped %d\n", (int)g_stop);
    return 0;
}

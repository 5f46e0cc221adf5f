/* The main file of exec_target (see target.h). It prints to stdout and to
 * stderr, forks a child, runs itself again through execv, starts two
 * threads, and exits with status 3: opprof exec must pass all of it through. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "target.h"

static void *thread_main(void *arg)
{
    long sum = 0;
    for (int i = 0; i < 5; i++) sum += worker(2000);
    *(long *)arg = sum;
    return NULL;
}

static int wait_child(pid_t pid)
{
    int st = 0;
    if (waitpid(pid, &st, 0) != pid) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--exec-child")) {
        printf("exec child ran\n");
        return 0;
    }
    /* a program that changes folder before it exits (issue 16): opprof's
     * relative output names must not follow it there */
    const char *go = getenv("EXEC_TARGET_CHDIR");
    if (go && chdir(go) != 0) return 13;
    printf("start\n");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        child_work();
        exit(0); /* runs the preload's exit handler in the child: it must not write */
    }
    if (wait_child(pid) != 0) return 10;
    pid = fork();
    if (pid == 0) {
        execl(argv[0], argv[0], "--exec-child", (char *)NULL);
        _exit(11);
    }
    if (wait_child(pid) != 0) return 12;

    pthread_t th[2];
    long sums[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, thread_main, &sums[i]);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    printf("fib(12) = %d\n", fib(12));
    printf("sums %ld %ld\n", sums[0], sums[1]);
    fprintf(stderr, "warning: this goes to stderr\n");
    return 3;
}

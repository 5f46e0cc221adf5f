/* exec_target: a program that knows nothing of opprof, built with
 * -finstrument-functions from several files, whose calls are known exactly:
 *   main          1
 *   fib           465 (fib(12): 2 * fib(13) - 1), 232 of them from each of
 *                 its two recursive call sites
 *   thread_main   2 (one per thread)
 *   worker        10 (5 per thread)
 *   tiny_step     20000, excluded by the pattern "tiny_*" in the test
 *   child_work    only in a forked child, which is not profiled */
#ifndef EXEC_TARGET_H
#define EXEC_TARGET_H

int fib(int n);
int tiny_step(int x);
long worker(int rounds);
void child_work(void);

#endif

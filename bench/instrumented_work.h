/* The instrumented functions bench_instrument calls (instrumented_work.c). */
#ifndef OPPROF_BENCH_INSTRUMENTED_WORK_H
#define OPPROF_BENCH_INSTRUMENTED_WORK_H

extern volatile int g_inst_sink;
int inst_leaf(int x);
int inst_excluded_leaf(int x);

#endif

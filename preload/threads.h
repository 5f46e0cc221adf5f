/* Threads the program starts join the session's sampling as they start
 * (pthread_create is interposed), so a pool created before it records
 * anything is sampled from its first instruction. */
#ifndef OPPROF_PRELOAD_THREADS_H
#define OPPROF_PRELOAD_THREADS_H

/* 1: threads started from now on join (opprof_sample_thread); 0: not. */
void op_threads_sample(int on);

#endif

/* The function exec_target's two threads call (see target.h). */
#include <stdio.h>

#include "target.h"

long worker(int rounds)
{
    long s = 0;
    for (int i = 0; i < rounds; i++) s += tiny_step(i);
    return s;
}

void child_work(void)
{
    printf("forked child ran\n");
    fflush(stdout);
}

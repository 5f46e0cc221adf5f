/* Functions compiled with -finstrument-functions for bench_instrument (not a
 * benchmark of its own: the name keeps it out of bench/'s bench_*.c glob). */
#include "instrumented_work.h"

volatile int g_inst_sink;

int inst_leaf(int x)
{
    g_inst_sink = x;
    return x + 1;
}

int inst_excluded_leaf(int x)
{
    g_inst_sink = x;
    return x + 1;
}

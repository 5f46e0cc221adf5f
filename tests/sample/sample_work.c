/* Work the sampler's tests sample (see sample_work.h). mix is inlined, so
 * each function's time is its own (self), as in s73.c. */
#include "sample_work.h"

/* One sink per thread: the threads spin at once, and a shared one is a race. */
static _Thread_local volatile unsigned long sw_sink;

static inline __attribute__((always_inline)) unsigned long mix(unsigned long x, int n)
{
    for (int i = 0; i < n; i++) x = x * 6364136223846793005ul + 1442695040888963407ul;
    return x;
}

__attribute__((noinline)) void sw_work_a(void)
{
    sw_sink = mix(sw_sink, 20000);
}

__attribute__((noinline)) void sw_work_b(void)
{
    sw_sink = mix(sw_sink ^ 1, 20000);
}

__attribute__((noinline)) void sw_spin_late(void)
{
    sw_sink = mix(sw_sink ^ 2, 20000);
}

__attribute__((noinline)) void sw_spin_joined(void)
{
    sw_sink = mix(sw_sink ^ 3, 20000);
}

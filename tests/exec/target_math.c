/* Recursion and a tiny hot function for exec_target (see target.h). */
#include "target.h"

int fib(int n)
{
    if (n < 2) return n;
    int a = fib(n - 1);
    int b = fib(n - 2);
    return a + b;
}

int tiny_step(int x)
{
    return x * 7 + 1;
}

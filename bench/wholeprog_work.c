/* wholeprog_work: a whole program as `opprof exec` sees it, built with
 * -finstrument-functions: 30 million calls of a leaf of about 10 ns, and
 * heavier functions around them, with call counts known exactly:
 *
 *   main 1, run 1, block 1000, leaf 30000000, mid 100000, heavy 10
 *
 * Prints a checksum so that nothing is optimised away. Run by bench_wholeprog. */
#include <stdint.h>
#include <stdio.h>

#define NOINLINE __attribute__((noinline))

static volatile uint64_t g_sink;

/* About 10 ns: a short dependent chain of multiplies. */
NOINLINE uint64_t leaf(uint64_t x)
{
    for (int i = 0; i < 4; i++) x = (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ull;
    return x;
}

/* About 1 us. */
NOINLINE uint64_t mid(uint64_t x)
{
    for (int i = 0; i < 400; i++) x = (x ^ (x >> 31)) * 0x94d049bb133111ebull;
    return x;
}

/* About 10 ms. */
NOINLINE uint64_t heavy(uint64_t x)
{
    for (int i = 0; i < 4000000; i++) x = (x ^ (x >> 27)) * 0x9e3779b97f4a7c15ull;
    return x;
}

NOINLINE uint64_t block(uint64_t x, int b)
{
    for (int i = 0; i < 30000; i++) x += leaf(x + (uint64_t)i);
    for (int i = 0; i < 100; i++) x += mid(x);
    if (b % 100 == 0) x += heavy(x);
    return x;
}

NOINLINE uint64_t run(void)
{
    uint64_t x = 1;
    for (int b = 0; b < 1000; b++) x = block(x, b);
    return x;
}

int main(void)
{
    g_sink = run();
    printf("%llu\n", (unsigned long long)g_sink);
    return 0;
}

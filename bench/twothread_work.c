/* twothread_work: a program that keeps two cores busy, as `opprof exec`
 * sees it, built with -finstrument-functions (issue 27's two-thread case).
 * Each of two threads runs STEPS steps; a step sorts N keys with qsort and
 * a comparator of about 10 ns (cmp_keys, the bulk of the calls), then
 * multiplies a matrix by a vector (matvec, a row at a time: dot). Main
 * joins both. About 31 million calls in all; prints a checksum so that
 * nothing is optimised away. Run by bench/bench_trace_cost.sh.
 *
 *   twothread_work [STEPS]   (default 783: 2 x 783 x 19791 = 31.0M calls) */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define N 2000  /* keys per sort: some 19k comparisons */
#define DIM 384 /* the matrix: DIM x DIM floats */

static int g_steps = 783;

/* About 10 ns: the keys are compared through a short hash, as a sort by a
 * derived key would. */
NOINLINE int cmp_keys(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    for (int i = 0; i < 2; i++) {
        x = (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ull;
        y = (y ^ (y >> 29)) * 0xbf58476d1ce4e5b9ull;
    }
    return x < y ? -1 : x > y;
}

NOINLINE float dot(const float *a, const float *b, int n)
{
    float s = 0;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

NOINLINE void matvec(const float *m, const float *v, float *out)
{
    for (int r = 0; r < DIM; r++) out[r] = dot(m + (size_t)r * DIM, v, DIM);
}

NOINLINE uint64_t step(uint64_t *keys, const float *m, float *v, float *out, uint64_t seed)
{
    for (int i = 0; i < N; i++) keys[i] = seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    qsort(keys, N, sizeof *keys, cmp_keys);
    matvec(m, v, out);
    for (int i = 0; i < DIM; i++) v[i] = out[i] * 1e-3f + 1.0f;
    return keys[N / 2] ^ (uint64_t)out[0];
}

NOINLINE void *worker(void *arg)
{
    uint64_t seed = (uint64_t)(uintptr_t)arg, sum = 0;
    uint64_t *keys = malloc(N * sizeof *keys);
    float *m = malloc(sizeof(float) * DIM * DIM), *v = malloc(sizeof(float) * DIM), *out = malloc(sizeof(float) * DIM);
    if (!keys || !m || !v || !out) abort();
    for (int i = 0; i < DIM * DIM; i++) m[i] = (float)(i % 17) * 0.01f;
    for (int i = 0; i < DIM; i++) v[i] = 1.0f;
    for (int s = 0; s < g_steps; s++) sum += step(keys, m, v, out, seed + (uint64_t)s);
    free(keys);
    free(m);
    free(v);
    free(out);
    return (void *)(uintptr_t)sum;
}

int main(int argc, char **argv)
{
    if (argc > 1) g_steps = atoi(argv[1]);
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1)) != 0) return 1;
    uint64_t sum = 0;
    for (int i = 0; i < 2; i++) {
        void *r;
        pthread_join(th[i], &r);
        sum ^= (uint64_t)(uintptr_t)r;
    }
    printf("%llu\n", (unsigned long long)sum);
    return 0;
}

/* The sampler's reference program, built without instrumentation: the main
 * thread's loop calls work_a 7 times and work_b 3 times in every 10
 * iterations (each call the same work), so 70% and 30% of its CPU; a second
 * thread sleeps, waking every 10 ms for a microsecond of
 * sleeper_spin. Prints nothing; its exit status is 0.
 *   s73 [ITERATIONS [busy]]   (default 20000: about 1 s of CPU; busy: the
 *                             second thread spins without sleeping) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static atomic_int done;

static inline __attribute__((always_inline)) unsigned long mix(unsigned long x, int n)
{
    for (int i = 0; i < n; i++) x = x * 6364136223846793005ul + 1442695040888963407ul;
    return x;
}

__attribute__((noinline)) void work_a(void)
{
    sink = mix(sink, 20000);
}

__attribute__((noinline)) void work_b(void)
{
    sink = mix(sink ^ 1, 20000);
}

__attribute__((noinline)) void sleeper_spin(void)
{
    sink = mix(sink ^ 2, 200);
}

static void *sleeper(void *arg)
{
    int busy = arg != NULL;
    struct timespec ms = {0, 10000000};
    while (!atomic_load(&done)) {
        sleeper_spin();
        if (!busy) nanosleep(&ms, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000;
    pthread_t t;
    if (pthread_create(&t, NULL, sleeper, argc > 2 ? argv[2] : NULL) != 0) return 1;
    for (long i = 0; i < n; i++) {
        if (i % 10 < 7) work_a();
        else work_b();
    }
    atomic_store(&done, 1);
    pthread_join(t, NULL);
    return 0;
}

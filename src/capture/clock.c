#include "capture/clock.h"

#include <pthread.h>
#include <stdatomic.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_cycles_ok;
static uint64_t g_ref_ticks; /* the process's first calibration sample */
static int64_t g_ref_mono;

/* One (ticks, monotonic) pair, taking the read with the tightest bracket of
 * a few so that a preemption between the two reads does not skew it. */
static void sample(uint64_t *ticks, int64_t *mono)
{
    uint64_t best_span = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t a = op_cycles();
        int64_t m = op_mono_ns();
        uint64_t b = op_cycles();
        if (b - a < best_span) {
            best_span = b - a;
            *ticks = a + (b - a) / 2;
            *mono = m;
        }
    }
}

static void init_once(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    /* CPUID 0x80000007 EDX bit 8: invariant TSC. */
    g_cycles_ok = __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8));
#elif defined(__aarch64__)
    g_cycles_ok = 1;
#else
    g_cycles_ok = 0;
#endif
    if (g_cycles_ok) sample(&g_ref_ticks, &g_ref_mono);
}

int op_clock_cycles_usable(void)
{
    pthread_once(&g_once, init_once);
    return g_cycles_ok;
}

void op_timebase_start(op_timebase *tb, int ticks_are_ns, uint64_t now_ticks)
{
    op_clock_cycles_usable();
    tb->ticks_are_ns = ticks_are_ns;
    tb->wall0 = op_wall_ns();
    if (ticks_are_ns) {
        tb->tick0 = now_ticks;
        tb->mono0 = op_mono_ns();
        tb->mult = 1ull << 32;
    } else {
        sample(&tb->tick0, &tb->mono0);
    }
}

void op_timebase_finish(op_timebase *tb)
{
    if (tb->ticks_are_ns) return;
    uint64_t t;
    int64_t m;
    sample(&t, &m);
    while (m - g_ref_mono < 2000000) {
        sample(&t, &m);
    }
    uint64_t dt = t - g_ref_ticks;
    int64_t dm = m - g_ref_mono;
    tb->mult = dt ? (uint64_t)(((unsigned __int128)(uint64_t)dm << 32) / dt) : (1ull << 32);
}

double op_clock_ticks_per_ns(void)
{
    if (!op_clock_cycles_usable()) return 1.0;
    uint64_t t;
    int64_t m;
    sample(&t, &m);
    while (m - g_ref_mono < 2000000) sample(&t, &m);
    return (double)(t - g_ref_ticks) / (double)(m - g_ref_mono);
}

/* The per-thread stack table behind with_stack (see stacktab.h).
 *
 * libunwind's unw_backtrace walks the stack with its per-thread cache of
 * frame descriptions: after the first walk through a code address it costs a
 * few nanoseconds per frame and allocates nothing. Memory comes from mmap,
 * never malloc, because a begin may run inside a malloc interposer. For the
 * same reason its index is not the common op_map (common/map.h), which grows
 * with realloc: slots are mmap'd and hold the entries' addresses, and a failed
 * growth keeps probing the full table rather than failing the record. */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "capture/stacktab.h"
#include "common/compiler.h"

#define SEG_WORDS ((size_t)32 * 1024) /* 256 KiB: ~2700 distinct stacks of 10 frames */
#define SLOTS_INIT ((size_t)4096)

/* Frames above the caller's that a capture may see: op_stack_capture itself,
 * the begin slow path and the public entry point; an unoptimized build keeps
 * five of them. Only the search for the caller's frame goes this far: the
 * walk stops where the caller was last time. */
#define OWN_FRAMES 8

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ST_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define ST_TSAN 1
#endif

/* libunwind is not linked: the first session that asks for stacks loads
 * it (op_stack_load), so that a program that only records maps neither it
 * nor the liblzma that Debian's libunwind needs. Its entry points are
 * looked up by the names its header gives them (UNW_LOCAL_ONLY's). */
#ifndef OPPROF_UNWIND_SONAME
#define OPPROF_UNWIND_SONAME "libunwind.so.8" /* Debian's libunwind8; the build names it */
#endif
#define ST_STR(x) #x
#define ST_NAME(x) ST_STR(x)
static struct {
    int (*backtrace)(void **buf, int size);
    int (*getcontext)(unw_context_t *uc);
    int (*init_local)(unw_cursor_t *c, unw_context_t *uc);
    int (*step)(unw_cursor_t *c);
    int (*get_reg)(unw_cursor_t *c, unw_regnum_t r, unw_word_t *v);
    int (*init_local2)(unw_cursor_t *c, unw_context_t *uc, int flags); /* the sampler's, from a signal frame */
    int (*policy)(unw_addr_space_t as, unw_caching_policy_t p);
    unw_addr_space_t *local;
    int ok;
    char err[256];
} U;
static pthread_once_t g_unw_once = PTHREAD_ONCE_INIT;

static void *unw_sym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p && !U.err[0]) snprintf(U.err, sizeof U.err, "%s has no %s", OPPROF_UNWIND_SONAME, name);
    return p;
}

static void unw_load(void)
{
    void *h = dlopen(OPPROF_UNWIND_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(U.err, sizeof U.err, "%s", e ? e : "cannot load " OPPROF_UNWIND_SONAME);
        return;
    }
#ifdef ST_TSAN
    *(void **)&U.getcontext = unw_sym(h, ST_NAME(unw_tdep_getcontext));
    *(void **)&U.init_local = unw_sym(h, ST_NAME(unw_init_local));
    *(void **)&U.step = unw_sym(h, ST_NAME(unw_step));
    *(void **)&U.get_reg = unw_sym(h, ST_NAME(unw_get_reg));
    U.ok = U.getcontext && U.init_local && U.step && U.get_reg;
#else
    *(void **)&U.backtrace = unw_sym(h, ST_NAME(unw_backtrace));
    U.ok = U.backtrace != NULL;
    *(void **)&U.step = dlsym(h, ST_NAME(unw_step));
    *(void **)&U.get_reg = dlsym(h, ST_NAME(unw_get_reg));
#endif
    *(void **)&U.init_local2 = dlsym(h, ST_NAME(unw_init_local2));
    *(void **)&U.policy = dlsym(h, ST_NAME(unw_set_caching_policy));
    U.local = (unw_addr_space_t *)dlsym(h, ST_NAME(unw_local_addr_space));
}

int op_stack_load(void)
{
    pthread_once(&g_unw_once, unw_load);
    return U.ok ? 0 : -1;
}

const char *op_stack_load_error(void)
{
    return U.err;
}

static pthread_once_t g_sig_once = PTHREAD_ONCE_INIT;

/* A walk from a signal handler must not take the global cache's lock
 * (libunwind's advice for signal handlers): each thread keeps its own. Set
 * only when a session samples, so with_stack alone keeps libunwind's
 * defaults. */
static void signal_policy(void)
{
    if (U.policy && U.local) U.policy(*U.local, UNW_CACHE_PER_THREAD);
}

int op_stack_load_for_signals(void)
{
    if (op_stack_load() != 0 || !U.init_local2 || !U.step || !U.get_reg) return -1;
    pthread_once(&g_sig_once, signal_policy);
    return 0;
}

int op_stack_walk_signal(void *ucontext, uint64_t *out, int max)
{
    if (!U.ok || !U.init_local2 || !U.step || !U.get_reg) return -1;
    unw_cursor_t c;
    if (U.init_local2(&c, (unw_context_t *)ucontext, UNW_INIT_SIGNAL_FRAME) != 0) return -1;
    int n = 0;
    while (n < max && U.step(&c) > 0) {
        unw_word_t ip;
        if (U.get_reg(&c, UNW_REG_IP, &ip) != 0 || ip == 0) break;
        out[n++] = (uint64_t)ip;
    }
    return n;
}

#ifdef ST_TSAN
/* Under ThreadSanitizer, libunwind's per-thread trace cache crashes TSan's
 * runtime when the cache is freed at thread exit (a mutex taken in the last
 * round of thread-specific destructors, after TSan has let go of the
 * thread). The step-by-step walk has no cache: slower, fine for tests. */
static int walk_stack(void **buf, int size)
{
    unw_context_t uc;
    unw_cursor_t c;
    if (U.getcontext(&uc) != 0 || U.init_local(&c, &uc) != 0) return 0;
    int n = 0;
    while (n < size && U.step(&c) > 0) {
        unw_word_t ip;
        if (U.get_reg(&c, UNW_REG_IP, &ip) != 0) break;
        buf[n++] = (void *)(uintptr_t)ip;
    }
    return n;
}
#define walk walk_stack
#else
#define walk U.backtrace
#endif

static void *map(size_t bytes, int populate)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0),
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static op_stackseg *seg_new(size_t nwords)
{
    op_stackseg *g = map(sizeof *g + nwords * sizeof(uint64_t), 1);
    if (!g) return NULL;
    g->next = NULL;
    g->nwords = nwords;
    return g;
}

static void seg_free(op_stackseg *g)
{
    while (g) {
        op_stackseg *n = g->next;
        munmap(g, sizeof *g + g->nwords * sizeof(uint64_t));
        g = n;
    }
}

int op_stacktab_reset(op_stacktab *s, unsigned depth)
{
    if (op_stack_load() != 0) return -1; /* loaded by the session's start: the thread records stackless */
    if (!s->head && !(s->head = seg_new(SEG_WORDS))) return -1;
    seg_free(s->head->next);
    s->head->next = NULL;
    s->seg = s->head;
    s->p = s->head->words;
    s->lim = s->head->words + s->head->nwords;
    if (!s->slots) {
        s->slots = map(SLOTS_INIT * sizeof *s->slots, 1);
        if (!s->slots) return -1;
        s->nslots = SLOTS_INIT;
    } else {
        memset(s->slots, 0, s->nslots * sizeof *s->slots);
    }
    s->nentries = 0;
    s->depth = depth < 1 ? 1 : depth > OP_STACK_MAX_DEPTH ? OP_STACK_MAX_DEPTH : depth;
    s->own = 0;
    /* libunwind sets its per-thread frame cache up on a thread's first walk
     * (mmap); take that hit here rather than in the first recorded begin. */
    void *warm[8];
    walk(warm, 8);
    return 0;
}

void op_stacktab_free(op_stacktab *s)
{
    seg_free(s->head);
    if (s->slots) munmap(s->slots, s->nslots * sizeof *s->slots);
    memset(s, 0, sizeof *s);
}

static inline uint64_t hash_frames(void *const *f, uint32_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    for (uint32_t i = 0; i < n; i++) {
        h = (h ^ (uint64_t)(uintptr_t)f[i]) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h | 1; /* never 0 */
}

/* Doubles the index. Returns -1 when out of memory (the table keeps working,
 * only fuller). */
static OP_NOINLINE int grow_slots(op_stacktab *s)
{
    size_t n = s->nslots * 2;
    uint64_t **slots = map(n * sizeof *slots, 0);
    if (!slots) return -1;
    for (size_t i = 0; i < s->nslots; i++) {
        uint64_t *e = s->slots[i];
        if (!e) continue;
        size_t j = e[0] & (n - 1);
        while (slots[j]) j = (j + 1) & (n - 1);
        slots[j] = e;
    }
    munmap(s->slots, s->nslots * sizeof *s->slots);
    s->slots = slots;
    s->nslots = n;
    return 0;
}

/* Moves on to a new segment with room for `words`. */
static OP_NOINLINE int next_seg(op_stacktab *s, size_t words)
{
    op_stackseg *g = seg_new(words > SEG_WORDS ? words : SEG_WORDS);
    if (!g) return -1;
    s->seg->next = g;
    s->seg = g;
    s->p = g->words;
    s->lim = g->words + g->nwords;
    return 0;
}

static inline int find_ra(void *const *buf, int n, const void *ra)
{
    for (int k = 0; k < n && k < OWN_FRAMES; k++)
        if (buf[k] == ra) return k;
    return -1;
}

uint64_t op_stack_capture(op_stacktab *s, const void *ra)
{
    void *buf[OP_STACK_MAX_DEPTH + OWN_FRAMES];
    /* Walk just as far as needed (each frame costs ~10 ns): the caller's
     * frame, the one that returns to ra, sat at most `own` frames down so far. */
    int want = (int)(s->depth + s->own);
    int n = walk(buf, want);
    int k = find_ra(buf, n, ra);
    if (OP_UNLIKELY(k < 0 || k > (int)s->own)) {
        if (n == want) { /* the walk may have stopped short of what we need */
            want = (int)s->depth + (k < 0 ? OWN_FRAMES : k);
            n = walk(buf, want);
            k = find_ra(buf, n, ra);
        }
        if (k < 0) k = 0; /* not reported (unusual inlining): keep everything */
        else if (k > (int)s->own) s->own = (uint32_t)k;
    }
    uint32_t nf = (uint32_t)(n - k);
    if (nf > s->depth) nf = s->depth;
    void *const *f = buf + k;
    uint64_t h = hash_frames(f, nf);
    size_t mask = s->nslots - 1, i = h & mask;
    for (uint64_t *e; (e = s->slots[i]) != NULL; i = (i + 1) & mask) {
        if (e[0] == h && e[1] == nf && memcmp(e + 2, f, nf * sizeof *f) == 0) return (uint64_t)(uintptr_t)e;
    }
    if (OP_UNLIKELY((s->nentries + 1) * 2 > s->nslots)) {
        if (grow_slots(s) == 0) {
            mask = s->nslots - 1;
            for (i = h & mask; s->slots[i]; i = (i + 1) & mask) {}
        } else if (s->nentries + 1 >= s->nslots) {
            return 0;
        }
    }
    if (OP_UNLIKELY(s->p + 2 + nf > s->lim) && next_seg(s, 2 + nf) != 0) return 0;
    uint64_t *e = s->p;
    e[0] = h;
    e[1] = nf;
    memcpy(e + 2, f, nf * sizeof *f);
    s->p += 2 + nf;
    s->slots[i] = e;
    s->nentries++;
    return (uint64_t)(uintptr_t)e;
}

/* NVTX-style ranges as user annotations (see ranges.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "capture/reserve.h"
#include "capture/thread.h"
#include "common/vec.h"
#include "device/ranges.h"

/* ---- push / pop ---- */

#define RANGE_DEPTH 256

typedef struct pushed {
    const void *domain;
    const opprof_site *site; /* NULL: pushed outside a session, or not recorded */
} pushed;

static _Thread_local struct {
    pushed stack[RANGE_DEPTH];
    uint32_t depth;
    uint32_t overflow; /* pushes past RANGE_DEPTH still to be popped */
} tl_push;

#define SITE_CACHE 64
static _Thread_local struct {
    const char *key;
    const opprof_site *site;
} tl_cache[SITE_CACHE];

const opprof_site *op_range_site(const char *name)
{
    if (!name) name = "";
    size_t h = ((uintptr_t)name >> 3) % SITE_CACHE;
    if (tl_cache[h].key == name && strcmp(tl_cache[h].site->name, name) == 0) return tl_cache[h].site;
    const opprof_site *s = opprof_intern(name, OPPROF_CAT_USER_ANNOTATION);
    if (s) {
        tl_cache[h].key = name;
        tl_cache[h].site = s;
    }
    return s;
}

int op_range_push(const void *domain, const char *name, const opprof_site *site)
{
    if (tl_push.depth >= RANGE_DEPTH) {
        tl_push.overflow++;
        return (int)(tl_push.depth + tl_push.overflow - 1);
    }
    if (op_gen_load()) {
        if (!site) site = op_range_site(name);
        if (site) (opprof_begin)(site);
    } else {
        site = NULL;
    }
    tl_push.stack[tl_push.depth].domain = domain;
    tl_push.stack[tl_push.depth].site = site;
    return (int)tl_push.depth++;
}

int op_range_pop(const void *domain)
{
    if (tl_push.overflow) {
        tl_push.overflow--;
        return (int)(tl_push.depth + tl_push.overflow);
    }
    uint32_t k = tl_push.depth;
    while (k > 0 && tl_push.stack[k - 1].domain != domain) k--;
    if (k == 0) return -1;
    const opprof_site *site = tl_push.stack[k - 1].site;
    memmove(&tl_push.stack[k - 1], &tl_push.stack[k], (tl_push.depth - k) * sizeof tl_push.stack[0]);
    tl_push.depth--;
    /* A range pushed in an earlier session is not open in this one: end
     * reports that, and nothing changes. */
    if (site) (void)(opprof_end)(site);
    return (int)(k - 1);
}

/* ---- start / end ---- */

typedef op_range_done started; /* t1 0: not ended */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static started *g_started;
static size_t g_n, g_cap;
static uint32_t g_epoch = 1; /* ids name an epoch so that a stale id ends nothing */
static uint64_t g_unrecorded;  /* ids given outside a session */

static uint64_t now_ticks(void)
{
    return op_g.clock ? (uint64_t)op_g.clock(op_g.clock_ctx) : op_cycles();
}

/* Writes an open range record on the calling thread without entering its
 * open stack; *t0 and the thread's ids describe it. */
static int open_unstacked(uint64_t g, const opprof_site *site, uint64_t *t0, int64_t *pid, int64_t *tid)
{
    op_tstate *t = op_state_for(g);
    if (!t || op_thread_reserve(t, OP_REC_RANGE_WORDS) != 0) return -1;
    op_word *c = atomic_load_explicit(&t->cur, memory_order_relaxed);
    c[0] = (uint64_t)(uintptr_t)site;
    c[2] = OP_OPEN;
    t->budget--;
    c[1] = *t0 = op_now(t);
    op_publish(t, c + OP_REC_RANGE_WORDS);
    *pid = t->pid;
    *tid = t->tid;
    return 0;
}

uint64_t op_range_start(const char *name, const opprof_site *site)
{
    uint64_t g = op_gen_load();
    started s = {0};
    if (g) {
        s.site = site ? site : op_range_site(name);
        if (s.site && open_unstacked(g, s.site, &s.t0, &s.pid, &s.tid) != 0) s.site = NULL;
    }
    pthread_mutex_lock(&g_lock);
    uint64_t id;
    if (!s.site) {
        id = (uint64_t)++g_unrecorded << 32; /* index part 0: names no entry */
    } else {
        if (op_grow(&g_started, &g_cap, g_n + 1, sizeof *g_started)) {
            pthread_mutex_unlock(&g_lock);
            return (uint64_t)++g_unrecorded << 32; /* its record stays open: closed at stop */
        }
        g_started[g_n++] = s;
        id = (uint64_t)g_epoch << 32 | (uint32_t)g_n;
    }
    pthread_mutex_unlock(&g_lock);
    return id;
}

void op_range_end(uint64_t id)
{
    uint64_t t1 = now_ticks();
    uint32_t idx = (uint32_t)id;
    pthread_mutex_lock(&g_lock);
    if (idx && (uint32_t)(id >> 32) == g_epoch && idx <= g_n && !g_started[idx - 1].t1)
        g_started[idx - 1].t1 = t1 ? t1 : 1;
    pthread_mutex_unlock(&g_lock);
}

int op_ranges_take(op_range_done **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    pthread_mutex_lock(&g_lock);
    int rc = 0;
    size_t ended = 0;
    for (size_t i = 0; i < g_n; i++) ended += g_started[i].t1 != 0;
    if (ended) {
        op_range_done *d = malloc(ended * sizeof *d);
        if (!d) {
            rc = -1;
        } else {
            for (size_t i = 0; i < g_n; i++)
                if (g_started[i].t1) d[(*n)++] = g_started[i];
            *out = d;
        }
    }
    g_n = 0;
    g_epoch++;
    pthread_mutex_unlock(&g_lock);
    return rc;
}

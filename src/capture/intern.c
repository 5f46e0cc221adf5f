/* Sites for names known only at run time. They are made once per (name,
 * category), outside the hot path, and live until the process exits so that
 * records may keep their address. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/map.h"
#include "opprof.h"

typedef struct interned {
    opprof_site site; /* first: records point here */
} interned;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static op_map g_index; /* hash of (name, category) -> interned * */

static uint64_t hash_name(const char *s, int cat)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)(unsigned)cat;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return op_map_mix(h); /* FNV's low bits see only the bytes' low bits */
}

typedef struct probe {
    const char *name;
    int category;
} probe;

static int same(const void *ctx, uint64_t v)
{
    const probe *p = ctx;
    const interned *e = (const interned *)(uintptr_t)v;
    return (int)e->site.category == p->category && strcmp(e->site.name, p->name) == 0;
}

const opprof_site *opprof_intern(const char *name, int category)
{
    if (!name) return NULL;
    uint64_t h = hash_name(name, category);
    probe p = {name, category};
    pthread_mutex_lock(&g_lock);
    const uint64_t *found = op_map_find_h(&g_index, h, same, &p);
    if (found) {
        pthread_mutex_unlock(&g_lock);
        return &((interned *)(uintptr_t)*found)->site;
    }
    size_t len = strlen(name);
    interned *e = op_map_reserve(&g_index, g_index.n + 1) == 0 ? malloc(sizeof *e + len + 1) : NULL;
    if (!e) {
        pthread_mutex_unlock(&g_lock);
        return NULL;
    }
    char *copy = (char *)(e + 1);
    memcpy(copy, name, len + 1);
    e->site.name = copy;
    e->site.file = "";
    e->site.line = 0;
    e->site.category = (uint32_t)category;
    e->site.flops = NULL;
    op_map_add_h(&g_index, h, (uint64_t)(uintptr_t)e); /* reserved: cannot fail */
    pthread_mutex_unlock(&g_lock);
    return &e->site;
}

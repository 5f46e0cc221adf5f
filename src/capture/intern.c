/* Sites for names known only at run time. They are made once per (name,
 * category), outside the hot path, and live until the process exits so that
 * records may keep their address. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "opprof.h"

typedef struct interned {
    opprof_site site; /* first: records point here */
    uint64_t hash;
    struct interned *next;
} interned;

#define NBUCKETS 4096

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static interned *g_buckets[NBUCKETS];

static uint64_t hash_name(const char *s, int cat)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)(unsigned)cat;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

const opprof_site *opprof_intern(const char *name, int category)
{
    if (!name) return NULL;
    uint64_t h = hash_name(name, category);
    interned **b = &g_buckets[h % NBUCKETS];
    pthread_mutex_lock(&g_lock);
    for (interned *e = *b; e; e = e->next) {
        if (e->hash == h && (int)e->site.category == category && strcmp(e->site.name, name) == 0) {
            pthread_mutex_unlock(&g_lock);
            return &e->site;
        }
    }
    size_t len = strlen(name);
    interned *e = malloc(sizeof *e + len + 1);
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
    e->hash = h;
    e->next = *b;
    *b = e;
    pthread_mutex_unlock(&g_lock);
    return &e->site;
}

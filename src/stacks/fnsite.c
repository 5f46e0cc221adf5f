/* Sites for functions known by address: what -finstrument-functions hands
 * its hooks. Each function is looked up once (symbol, file, line, whether it
 * is excluded) and its site kept for the life of the process, so the hooks
 * can cache the pointer per thread and the collector names it like any
 * static site. */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/owntime.h"
#include "common/error.h"
#include "common/map.h"
#include "opprof_trace.h"
#include "stacks/symbolize.h"

typedef struct fn_entry {
    opprof_site site; /* first: records point here */
    const void *fn;
    int excluded;
} fn_entry;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static op_map g_fns; /* function address -> its fn_entry */
static char **g_name_pats, **g_file_pats;
static size_t g_nname, g_nfile;
static int g_patterns_set;

static void free_patterns(void)
{
    for (size_t i = 0; i < g_nname; i++) free(g_name_pats[i]);
    for (size_t i = 0; i < g_nfile; i++) free(g_file_pats[i]);
    free(g_name_pats);
    free(g_file_pats);
    g_name_pats = g_file_pats = NULL;
    g_nname = g_nfile = 0;
}

static int add_pattern(char ***list, size_t *n, const char *p, size_t len)
{
    char **l = realloc(*list, (*n + 1) * sizeof *l);
    if (!l) return -1;
    *list = l;
    if (!(l[*n] = strndup(p, len))) return -1;
    (*n)++;
    return 0;
}

/* The lock is held. */
static int set_patterns(const char *patterns)
{
    free_patterns();
    g_patterns_set = 1;
    for (const char *p = patterns ? patterns : ""; *p;) {
        size_t len = strcspn(p, ",");
        const char *q = p;
        size_t n = len;
        while (n && *q == ' ') q++, n--;
        while (n && q[n - 1] == ' ') n--;
        int rc = 0;
        if (n > 5 && !strncmp(q, "file:", 5)) rc = add_pattern(&g_file_pats, &g_nfile, q + 5, n - 5);
        else if (n) rc = add_pattern(&g_name_pats, &g_nname, q, n);
        if (rc) {
            free_patterns();
            return op_fail(OPPROF_E_NOMEM, "opprof_function_exclude: out of memory");
        }
        p += len + (p[len] == ',');
    }
    return OPPROF_OK;
}

int opprof_function_exclude(const char *patterns)
{
    pthread_mutex_lock(&g_lock);
    int rc = set_patterns(patterns);
    pthread_mutex_unlock(&g_lock);
    return rc;
}

static int excluded(const op_function_info *fi)
{
    for (size_t i = 0; i < g_nname; i++)
        if (fi->name[0] && fnmatch(g_name_pats[i], fi->name, 0) == 0) return 1;
    if (!fi->file[0]) return 0;
    const char *base = strrchr(fi->file, '/');
    base = base ? base + 1 : fi->file;
    for (size_t i = 0; i < g_nfile; i++)
        if (fnmatch(g_file_pats[i], fi->file, 0) == 0 || fnmatch(g_file_pats[i], base, 0) == 0) return 1;
    return 0;
}

/* The lock is held. */
static fn_entry *make_entry(const void *fn)
{
    op_function_info fi;
    op_symbolize_function(fn, &fi);
    char name[sizeof fi.name + 32];
    if (!fi.name[0]) {
        /* No symbol (stripped, or generated code): the place stands in for it. */
        const char *mod = strrchr(fi.module, '/');
        mod = mod ? mod + 1 : fi.module;
        snprintf(name, sizeof name, "%.*s+0x%llx", (int)(sizeof fi.name - 1), mod, (unsigned long long)fi.offset);
    } else {
        snprintf(name, sizeof name, "%s", fi.name);
    }
    size_t nl = strlen(name), fl = strlen(fi.file);
    fn_entry *e = malloc(sizeof *e + nl + 1 + fl + 1);
    if (!e) return NULL;
    char *s = (char *)(e + 1);
    memcpy(s, name, nl + 1);
    memcpy(s + nl + 1, fi.file, fl + 1);
    e->site.name = s;
    e->site.file = s + nl + 1;
    e->site.line = fi.line > 0 ? (uint32_t)fi.line : 0;
    e->site.category = OPPROF_CAT_CPU_OP;
    e->site.flops = NULL;
    e->fn = fn;
    e->excluded = excluded(&fi);
    return e;
}

const opprof_site *opprof_function_site(const void *fn)
{
    if (!fn) return NULL;
    /* The lookup allocates (libdw): under a malloc interposer that must not
     * count as the program's memory. A new function's lookup takes up to
     * milliseconds: that time is the profiler's, taken out of this thread's
     * timeline so that the range open around the call is not charged for it. */
    op_own own = op_own_begin();
    int made = 0;
    pthread_mutex_lock(&g_lock);
    fn_entry *e = NULL;
    if (!g_patterns_set && set_patterns(getenv("OPPROF_EXCLUDE")) != OPPROF_OK) goto out;
    const uint64_t *v = op_map_get(&g_fns, (uint64_t)(uintptr_t)fn);
    if (v) {
        e = (fn_entry *)(uintptr_t)*v;
        goto out;
    }
    if (op_map_reserve(&g_fns, g_fns.n + 1) != 0) goto out;
    if ((e = make_entry(fn)) != NULL) op_map_put(&g_fns, (uint64_t)(uintptr_t)fn, (uint64_t)(uintptr_t)e); /* reserved */
    made = 1;
out:
    pthread_mutex_unlock(&g_lock);
    op_own_end(own, made);
    return e && !e->excluded ? &e->site : NULL;
}

/* Run with LD_PRELOAD=libopprof_malloc.so: a program that calls the C
 * allocator directly, never opprof's memory API, and checks that the
 * profiler saw exactly its allocations, also from several threads. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opprof_trace.h"

#define CHECK(c)                                                                   \
    do {                                                                           \
        if (!(c)) {                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

OPPROF_SITE(site_alloc, "user_alloc");
OPPROF_SITE(site_free, "user_free");
OPPROF_SITE(site_worker, "worker");

static opprof_event find(const opprof_trace *t, const char *name)
{
    opprof_event e;
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_trace_event(t, i, &e);
        if (!strcmp(e.name, name)) return e;
    }
    fprintf(stderr, "no event %s\n", name);
    exit(1);
}

enum { ROUNDS = 20000 };

static void *worker(void *arg)
{
    (void)arg;
    opprof_begin(&site_worker);
    for (int i = 0; i < ROUNDS; i++) {
        void *p = malloc((size_t)(i % 64) + 1);
        void *q = realloc(p, 128);
        free(q);
    }
    void *keep = malloc(1 << 20); /* freed by the main thread */
    opprof_end(&site_worker);
    return keep;
}

int main(void)
{
    Dl_info info;
    CHECK(dladdr((void *)malloc, &info) && info.dli_fname && strstr(info.dli_fname, "opprof_malloc"));

    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.profile_memory = 1;
    CHECK(opprof_start(&cfg) == 0);

    opprof_begin(&site_alloc);
    char *p = malloc(1000);
    char *q = calloc(10, 40);
    char *volatile none = NULL; /* keeps the compiler from turning realloc(NULL, n) into malloc */
    char *r = realloc(none, 64);
    void *a = NULL;
    CHECK(posix_memalign(&a, 64, 256) == 0);
    void *b = aligned_alloc(64, 128);
    opprof_end(&site_alloc);
    CHECK(p && q && r && a && b);
    p[0] = q[0] = r[0] = 1;

    opprof_begin(&site_free);
    free(p);
    free(q);
    r = realloc(r, 4096); /* grows: +4096 then -64 */
    free(r);
    free(a);
    free(b);
    opprof_end(&site_free);

    pthread_t th[4];
    void *kept[4];
    for (int i = 0; i < 4; i++) CHECK(pthread_create(&th[i], NULL, worker, NULL) == 0);
    for (int i = 0; i < 4; i++) CHECK(pthread_join(th[i], &kept[i]) == 0);
    for (int i = 0; i < 4; i++) free(kept[i]);

    opprof_trace *t = NULL;
    CHECK(opprof_stop(&t) == 0);
    CHECK(find(t, "user_alloc").self_cpu_memory_usage == 1000 + 400 + 64 + 256 + 128);
    CHECK(find(t, "user_free").self_cpu_memory_usage == -(1000 + 400 + 64 + 256 + 128));
    size_t workers = 0;
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        opprof_trace_event(t, i, &e);
        if (strcmp(e.name, "worker") != 0) continue;
        workers++;
        CHECK(e.self_cpu_memory_usage == (1 << 20));
    }
    CHECK(workers == 4);
    opprof_memory_stats st;
    CHECK(opprof_trace_memory_stats(t, &st) == 0);
    CHECK(st.double_frees == 0);
    CHECK(st.reallocs >= 4 * ROUNDS + 2);
    printf("preload: %llu allocations, %llu frees, peak %lld bytes, %llu unknown frees\n",
           (unsigned long long)st.allocations, (unsigned long long)st.frees, (long long)st.peak_bytes,
           (unsigned long long)st.unknown_frees);
    opprof_trace_free(t);
    return 0;
}

/* Thread lookup and string-id numbering for imported traces (threads.h). */
#include "import/threads.h"

#include <stdlib.h>
#include <string.h>

#include "common/vec.h"

static uint64_t key_hash(const op_thread_key *k)
{
    uint64_t h = (uint64_t)k->pid * 0x9e3779b97f4a7c15ull ^ ((uint64_t)k->tid + 0x632be59bd9b4e019ull);
    h ^= (uint64_t)(k->pid_str | k->tid_str << 1) << 61;
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 29);
}

typedef struct probe {
    const opprof_trace *t;
    const op_thread_map *m;
    const op_thread_key *k;
} probe;

static int same(const void *ctx, uint64_t idx)
{
    const probe *p = ctx;
    const op_thread *th = &p->t->threads[idx];
    return th->pid == p->k->pid && th->tid == p->k->tid && p->m->flags[idx] == (p->k->pid_str | p->k->tid_str << 1);
}

/* The model's op_trace_thread() scans every thread; a file may hold a
 * million of them, so threads are appended here behind the hash table. */
static int64_t append(op_thread_map *m, opprof_trace *t, const op_thread_key *k)
{
    if (t->nthreads >= OP_MAX_THREADS) return -1; /* the event's thread field holds no more */
    if (op_grow(&t->threads, &t->cap_threads, t->nthreads + 1, sizeof *t->threads) != 0 ||
        op_grow(&m->flags, &m->cap_flags, t->nthreads + 1, 1) != 0)
        return -1;
    op_thread *th = &t->threads[t->nthreads];
    memset(th, 0, sizeof *th);
    th->pid = k->pid;
    th->tid = k->tid;
    th->device = -1;
    if (k->pid_str) th->pid_name = (uint32_t)k->pid;
    m->flags[t->nthreads] = (uint8_t)(k->pid_str | k->tid_str << 1);
    return (int64_t)t->nthreads++;
}

int64_t op_thread_map_get(op_thread_map *m, opprof_trace *t, const op_thread_key *k)
{
    uint64_t h = key_hash(k);
    probe p = {t, m, k};
    const uint64_t *v = op_map_find_h(&m->ix, h, same, &p);
    if (v) return (int64_t)*v;
    if (op_map_reserve(&m->ix, m->ix.n + 1) != 0) return -1;
    int64_t idx = append(m, t, k);
    if (idx >= 0 && op_map_add_h(&m->ix, h, (uint64_t)idx) != 0) return -1; /* reserved: cannot fail */
    return idx;
}

/* Numbers the string ids of one kind (bit 1: pid, 2: tid) after the largest
 * numeric id, each distinct string once, in order of first appearance. */
static int number_strings(op_thread_map *m, opprof_trace *t, unsigned bit)
{
    int64_t next = 0, any = 0;
    for (size_t i = 0; i < t->nthreads; i++) {
        int64_t v = bit == 1 ? t->threads[i].pid : t->threads[i].tid;
        if (m->flags[i] & bit) {
            any = 1;
        } else if (v >= next) {
            next = v == INT64_MAX ? v : v + 1;
        }
    }
    if (!any) return 0;
    size_t nstr = t->str.count;
    int64_t *num = malloc((nstr ? nstr : 1) * sizeof *num);
    uint8_t *given = calloc(nstr ? nstr : 1, 1);
    if (!num || !given) {
        free(num);
        free(given);
        return -1;
    }
    for (size_t i = 0; i < t->nthreads; i++) {
        if (!(m->flags[i] & bit)) continue;
        int64_t *v = bit == 1 ? &t->threads[i].pid : &t->threads[i].tid;
        size_t id = (size_t)*v;
        if (!given[id]) {
            given[id] = 1;
            num[id] = next < INT64_MAX ? next++ : next;
        }
        if (bit == 2 && !t->threads[i].name) t->threads[i].name = (uint32_t)id;
        *v = num[id];
    }
    free(num);
    free(given);
    return 0;
}

int op_thread_map_finish(op_thread_map *m, opprof_trace *t)
{
    if (number_strings(m, t, 1) != 0 || number_strings(m, t, 2) != 0) return -1;
    op_map_free(&m->ix); /* keys changed: the table no longer applies */
    return 0;
}

void op_thread_map_free(op_thread_map *m)
{
    op_map_free(&m->ix);
    free(m->flags);
    memset(m, 0, sizeof *m);
}

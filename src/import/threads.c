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
    const op_thread_key *k = &p->m->keys[idx];
    return k->pid == p->k->pid && k->tid == p->k->tid && k->pid_str == p->k->pid_str && k->tid_str == p->k->tid_str;
}

/* The model's op_trace_thread() scans every thread; a file may hold a
 * million of them, so threads are appended here behind the hash table. */
static int64_t append(op_thread_map *m, opprof_trace *t, const op_thread_key *k)
{
    if (t->nthreads >= OP_MAX_THREADS) return -1; /* the event's thread field holds no more */
    if (op_grow(&t->threads, &t->cap_threads, t->nthreads + 1, sizeof *t->threads) != 0 ||
        op_grow(&m->flags, &m->cap_flags, t->nthreads + 1, 1) != 0 ||
        op_grow(&m->keys, &m->cap_keys, t->nthreads + 1, sizeof *m->keys) != 0)
        return -1;
    op_thread *th = &t->threads[t->nthreads];
    memset(th, 0, sizeof *th);
    th->pid = k->pid;
    th->tid = k->tid;
    th->device = -1;
    if (k->pid_str) th->pid_name = (uint32_t)k->pid;
    m->flags[t->nthreads] = (uint8_t)(k->pid_str | k->tid_str << 1);
    m->keys[t->nthreads] = *k;
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

int op_thread_map_number(op_thread_map *m, opprof_trace *t)
{
    size_t from = m->numbered;
    /* First the numeric ids of the new threads, so that strings come after them. */
    for (size_t i = from; i < t->nthreads; i++)
        for (int k = 0; k < 2; k++) {
            int64_t v = k ? m->keys[i].tid : m->keys[i].pid;
            if (!(m->flags[i] & (1u << k)) && v >= m->next[k]) m->next[k] = v == INT64_MAX ? v : v + 1;
        }
    for (size_t i = from; i < t->nthreads; i++)
        for (int k = 0; k < 2; k++) {
            if (!(m->flags[i] & (1u << k))) continue;
            uint64_t id = (uint64_t)(k ? m->keys[i].tid : m->keys[i].pid);
            int added;
            uint64_t *num = op_map_at(&m->given[k], id, &added);
            if (!num) return -1;
            if (added) {
                *num = (uint64_t)m->next[k];
                if (m->next[k] < INT64_MAX) m->next[k]++;
            }
            if (k) {
                t->threads[i].tid = (int64_t)*num;
                if (!t->threads[i].name) t->threads[i].name = (uint32_t)id; /* a string tid names its thread */
            } else {
                t->threads[i].pid = (int64_t)*num;
            }
        }
    m->numbered = t->nthreads;
    return 0;
}

void op_thread_map_free(op_thread_map *m)
{
    op_map_free(&m->ix);
    op_map_free(&m->given[0]);
    op_map_free(&m->given[1]);
    free(m->flags);
    free(m->keys);
    memset(m, 0, sizeof *m);
}

/* The 64-bit key hash map (see u64map.h). */
#include "import/u64map.h"

#include <stdlib.h>

static size_t slot(uint64_t key, size_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull; /* the murmur3 finaliser: ids are often sequential */
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

int op_u64map_get(const op_u64map *m, uint64_t key, uint32_t *v)
{
    if (!m->cap) return 0;
    for (size_t k = slot(key, m->cap); m->used[k]; k = (k + 1) & (m->cap - 1)) {
        if (m->keys[k] == key) {
            *v = m->vals[k];
            return 1;
        }
    }
    return 0;
}

static int grow(op_u64map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    uint64_t *keys = malloc(cap * sizeof *keys);
    uint32_t *vals = malloc(cap * sizeof *vals);
    uint8_t *used = calloc(cap, 1);
    if (!keys || !vals || !used) {
        free(keys);
        free(vals);
        free(used);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i]) continue;
        size_t k = slot(m->keys[i], cap);
        while (used[k]) k = (k + 1) & (cap - 1);
        used[k] = 1;
        keys[k] = m->keys[i];
        vals[k] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    free(m->used);
    m->keys = keys;
    m->vals = vals;
    m->used = used;
    m->cap = cap;
    return 0;
}

int op_u64map_put(op_u64map *m, uint64_t key, uint32_t v)
{
    if ((m->n + 1) * 2 > m->cap && grow(m) != 0) return -1;
    size_t k = slot(key, m->cap);
    for (; m->used[k]; k = (k + 1) & (m->cap - 1)) {
        if (m->keys[k] == key) {
            m->vals[k] = v;
            return 0;
        }
    }
    m->used[k] = 1;
    m->keys[k] = key;
    m->vals[k] = v;
    m->n++;
    return 0;
}

void op_u64map_free(op_u64map *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    m->keys = NULL;
    m->vals = NULL;
    m->used = NULL;
    m->cap = m->n = 0;
}

/* A small open-addressing map for grouping events by a 64-bit key (a name
 * id, or a name id and a shape id); it grows, so its size follows the number
 * of groups, not the number of events. */
#include <stdlib.h>

#include "report/rep.h"

static size_t slot_of(uint64_t key, size_t cap)
{
    key ^= key >> 31;
    key *= 0x9e3779b97f4a7c15ull;
    key ^= key >> 29;
    return (size_t)key & (cap - 1);
}

static int grow(rep_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 256;
    uint64_t *keys = malloc(cap * sizeof *keys);
    uint32_t *vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->vals[i]) continue;
        size_t j = slot_of(m->keys[i], cap);
        while (vals[j]) j = (j + 1) & (cap - 1);
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

uint32_t *rep_map_slot(rep_map *m, uint64_t key)
{
    if ((m->n + 1) * 2 > m->cap && grow(m) != 0) return NULL;
    size_t j = slot_of(key, m->cap);
    while (m->vals[j]) {
        if (m->keys[j] == key) return &m->vals[j];
        j = (j + 1) & (m->cap - 1);
    }
    /* A new key: the caller fills the value; count it now so growth stays ahead. */
    m->keys[j] = key;
    m->n++;
    return &m->vals[j];
}

void rep_map_free(rep_map *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->cap = m->n = 0;
}

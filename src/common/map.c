/* The hash map (see map.h). */
#include "common/map.h"

#include <stdlib.h>
#include <string.h>

#include "common/vec.h"

#define MIN_CAP 64

void op_map_free(op_map *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}

/* Where key's probe starts in a table of cap slots: a key is mixed, the
 * caller's hash is used as it is. */
static size_t home_in(const op_map *m, uint64_t key, size_t cap)
{
    return (size_t)(m->hashed ? key : op_map_mix(key)) & (cap - 1);
}

static size_t home(const op_map *m, uint64_t key)
{
    return home_in(m, key, m->cap);
}

static void place(const op_map *m, op_map_slot *slots, size_t cap, uint64_t key, uint64_t val)
{
    size_t i = home_in(m, key, cap);
    while (slots[i].key) i = (i + 1) & (cap - 1);
    slots[i].key = key;
    slots[i].val = val;
}

static int rehash(op_map *m, size_t cap)
{
    if (cap > SIZE_MAX / sizeof(op_map_slot)) return -1;
    op_map_slot *slots = op_calloc(cap, sizeof *slots); /* fresh zero pages: no memset for big tables */
    if (!slots) return -1;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key) place(m, slots, cap, m->slots[i].key, m->slots[i].val);
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return 0;
}

int op_map_reserve(op_map *m, size_t n)
{
    if (n > SIZE_MAX / 2) return -1;
    if (n * 2 <= m->cap) return 0;
    size_t cap = m->cap ? m->cap : MIN_CAP;
    while (cap < n * 2) cap *= 2;
    return rehash(m, cap);
}

/* The slot of key (nonzero), or of the empty slot where it would go. */
static op_map_slot *probe(op_map *m, uint64_t key)
{
    size_t mask = m->cap - 1;
    for (size_t i = home(m, key);; i = (i + 1) & mask) {
        op_map_slot *s = &m->slots[i];
        if (s->key == key || !s->key) return s;
    }
}

uint64_t *op_map_at_grow(op_map *m, uint64_t key, int *added)
{
    int dummy;
    if (!added) added = &dummy;
    *added = 0;
    if (!key) {
        if (!m->has_zero) {
            m->has_zero = 1;
            m->zero_val = 0;
            m->n++;
            *added = 1;
        }
        return &m->zero_val;
    }
    if ((m->n + 1) * 2 > m->cap) { /* full: grow only for a new key */
        if (m->cap) {
            op_map_slot *s = probe(m, key);
            if (s->key) return &s->val;
        }
        if (op_map_reserve(m, m->n + 1) != 0) return NULL;
    }
    op_map_slot *s = probe(m, key);
    if (s->key) return &s->val;
    s->key = key;
    s->val = 0;
    m->n++;
    *added = 1;
    return &s->val;
}

int op_map_put(op_map *m, uint64_t key, uint64_t val)
{
    uint64_t *v = op_map_at(m, key, NULL);
    if (!v) return -1;
    *v = val;
    return 0;
}

int op_map_add_h(op_map *m, uint64_t h, uint64_t val)
{
    if (op_map_reserve(m, m->n + 1) != 0) return -1;
    m->hashed = 1;
    place(m, m->slots, m->cap, op_map_hkey(h), val);
    m->n++;
    return 0;
}

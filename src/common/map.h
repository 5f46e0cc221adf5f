/* The hash map: open addressing with linear probing, at most half full,
 * 64-bit keys to 64-bit values (numbers, indices, pointers as uintptr_t).
 *
 * Two ways to key it, on one table:
 *  - by a 64-bit key (an id, an address, a pointer): op_map_get / put /
 *    at. Every key is allowed, 0 included.
 *  - by the caller's hash, for keys that are not one number (strings,
 *    tuples): the map holds hash -> value (usually an index into the
 *    caller's array, where the key lives) and several values may share a
 *    hash; op_map_find_h asks the caller's eq which is the one. The hash is
 *    used as it is (its low bits choose the slot), so it must be mixed.
 *    op_map_add_h adds. A table is used one way or the other, not both.
 *
 * Storage: grown with op_realloc (out of memory: -1 / NULL, the map as it
 * was).
 *
 * Not used by the capture tables that run inside malloc hooks, signal
 * handlers or lock-free readers (capture/memtrack.c, drops.c, stacktab.c,
 * agg.c): they place slots by address runs, publish them with atomic
 * stores or grow with mmap, each said where it is. */
#ifndef OPPROF_COMMON_MAP_H
#define OPPROF_COMMON_MAP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct op_map_slot {
    uint64_t key; /* 0: empty (key 0 itself lives in zero_val) */
    uint64_t val;
} op_map_slot;

typedef struct op_map {
    op_map_slot *slots;
    size_t cap, n;     /* cap: 0 or a power of two; n counts key 0 too */
    uint64_t zero_val; /* the value of key 0, when has_zero */
    int has_zero;
    int hashed;        /* keyed by the caller's hash (op_map_add_h) */
} op_map;

/* Room for n entries in all without growing: 0 or -1. */
int op_map_reserve(op_map *m, size_t n);

void op_map_free(op_map *m);

/* The murmur3 finaliser: ids are often sequential and addresses aligned. */
static inline uint64_t op_map_mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

/* ---- keyed by a 64-bit key ---- */

/* The value of key, NULL when absent. The pointer is good until the next
 * change of the map. */
static inline uint64_t *op_map_get(const op_map *m, uint64_t key)
{
    if (!key) return m->has_zero ? (uint64_t *)&m->zero_val : NULL;
    op_map_slot *slots = m->slots;
    size_t mask = m->cap - 1;
    if (!slots) return NULL;
    for (size_t i = (size_t)op_map_mix(key) & mask;; i = (i + 1) & mask) {
        uint64_t k = slots[i].key;
        if (k == key) return &slots[i].val;
        if (!k) return NULL;
    }
}

/* For maps of 32-bit ids: the value of key in *v, 1 found, 0 absent. */
static inline int op_map_get_u32(const op_map *m, uint64_t key, uint32_t *v)
{
    const uint64_t *p = op_map_get(m, key);
    if (!p) return 0;
    *v = (uint32_t)*p;
    return 1;
}

/* Slow path of op_map_at: key 0, an empty table, or one that must grow. */
uint64_t *op_map_at_grow(op_map *m, uint64_t key, int *added);

/* The value of key, added (set to 0) when absent, *added saying which
 * (added may be NULL); NULL when out of room. */
static inline uint64_t *op_map_at(op_map *m, uint64_t key, int *added)
{
    if (!key || (m->n + 1) * 2 > m->cap) return op_map_at_grow(m, key, added);
    size_t mask = m->cap - 1;
    for (size_t i = (size_t)op_map_mix(key) & mask;; i = (i + 1) & mask) {
        op_map_slot *s = &m->slots[i];
        if (s->key == key || !s->key) {
            int fresh = !s->key;
            if (fresh) {
                s->key = key;
                s->val = 0;
                m->n++;
            }
            if (added) *added = fresh;
            return &s->val;
        }
    }
}

/* Sets key to val: 0, or -1 when out of room. */
int op_map_put(op_map *m, uint64_t key, uint64_t val);

/* ---- keyed by the caller's hash ---- */

/* A hash of p[0 .. len) for keys made of bytes (FNV-1a, folded 8 bytes at a
 * time for long keys). Inline: the string table hashes every name it
 * reads. */
static inline uint32_t op_hash_bytes(const void *p, size_t len)
{
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ull;
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 1099511628211ull;
        h ^= h >> 29;
        s += 8;
        len -= 8;
    }
    while (len--) h = (h ^ *s++) * 1099511628211ull;
    h ^= h >> 32;
    return (uint32_t)h;
}

/* The caller's hash as stored: 0 marks an empty slot. */
static inline uint64_t op_map_hkey(uint64_t h)
{
    return h | (h == 0);
}

/* The value v with hash h for which eq(ctx, v) holds; NULL when none.
 * Inline, so that the caller's eq (a static function) is inlined too;
 * forcing it (always_inline) measured slower in key averages, from
 * register spills. */
static inline uint64_t *op_map_find_h(const op_map *m, uint64_t h,
                                      int (*eq)(const void *ctx, uint64_t val), const void *ctx)
{
    op_map_slot *slots = m->slots; /* locals: eq's stores cannot alias them */
    size_t mask = m->cap - 1;
    if (!slots) return NULL;
    h = op_map_hkey(h);
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        uint64_t k = slots[i].key;
        if (!k) return NULL;
        if (k == h && eq(ctx, slots[i].val)) return &slots[i].val;
    }
}

/* Adds val under hash h (the caller has checked it is not there yet): 0,
 * or -1 when out of room. */
int op_map_add_h(op_map *m, uint64_t h, uint64_t val);

#endif

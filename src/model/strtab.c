#include "common/vec.h"
#include "model/strtab.h"

#include <stdlib.h>
#include <string.h>

#define ARENA_BLOCK (64u * 1024u)

static char *arena_alloc(op_strtab *t, size_t n)
{
    if (n > t->arena_cap - t->arena_used || !t->arena) {
        size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
        char *b = malloc(cap);
        if (!b) return NULL;
        char **blocks = realloc(t->blocks, (t->nblocks + 1) * sizeof *blocks);
        if (!blocks) {
            free(b);
            return NULL;
        }
        t->blocks = blocks;
        t->blocks[t->nblocks++] = b;
        t->arena = b;
        t->arena_cap = cap;
        t->arena_used = 0;
    }
    char *r = t->arena + t->arena_used;
    t->arena_used += n;
    return r;
}

typedef struct probe {
    const op_strtab *t;
    const char *s;
    size_t len;
} probe;

static inline int same(const void *ctx, uint64_t id)
{
    const probe *p = ctx;
    return p->t->lens[id] == p->len && memcmp(p->t->strs[id], p->s, p->len) == 0;
}

int op_strtab_init(op_strtab *t)
{
    memset(t, 0, sizeof *t);
    if (op_strtab_intern(t, "", 0) == 0) return 0;
    op_strtab_free(t); /* what the first intern took before it failed */
    return -1;
}

void op_strtab_free(op_strtab *t)
{
    for (size_t i = 0; i < t->nblocks; i++) free(t->blocks[i]);
    free(t->blocks);
    free(t->strs);
    free(t->lens);
    op_map_free(&t->ix);
    memset(t, 0, sizeof *t);
}

uint32_t op_strtab_find(const op_strtab *t, const char *s, size_t len)
{
    probe p = {t, s, len};
    const uint64_t *id = op_map_find_h(&t->ix, op_hash_bytes(s, len), same, &p);
    return id ? (uint32_t)*id : UINT32_MAX;
}

uint32_t op_strtab_intern(op_strtab *t, const char *s, size_t len)
{
    if (len > UINT32_MAX - 1) return UINT32_MAX;
    uint32_t h = op_hash_bytes(s, len);
    probe p = {t, s, len};
    const uint64_t *found = op_map_find_h(&t->ix, h, same, &p);
    if (found) return (uint32_t)*found;
    if (op_map_reserve(&t->ix, (size_t)t->count + 1) != 0) return UINT32_MAX;
    if (op_grow(&t->strs, &t->cap_strs, (size_t)t->count + 1, sizeof *t->strs) ||
        op_grow(&t->lens, &t->cap_lens, (size_t)t->count + 1, sizeof *t->lens))
        return UINT32_MAX;
    char *copy = arena_alloc(t, len + 1);
    if (!copy) return UINT32_MAX;
    if (len) memcpy(copy, s, len);
    copy[len] = '\0';
    uint32_t id = t->count++;
    t->strs[id] = copy;
    t->lens[id] = (uint32_t)len;
    op_map_add_h(&t->ix, h, id); /* reserved: cannot fail */
    return id;
}

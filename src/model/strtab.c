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

static int grow_slots(op_strtab *t)
{
    size_t n = t->nslots ? t->nslots * 2 : 1024;
    uint32_t *slots = calloc(n, sizeof *slots);
    if (!slots) return -1;
    for (uint32_t id = 0; id < t->count; id++) {
        size_t i = t->hashes[id] & (n - 1);
        while (slots[i]) i = (i + 1) & (n - 1);
        slots[i] = id + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = n;
    return 0;
}

int op_strtab_init(op_strtab *t)
{
    memset(t, 0, sizeof *t);
    return op_strtab_intern(t, "", 0) == 0 ? 0 : -1;
}

void op_strtab_free(op_strtab *t)
{
    for (size_t i = 0; i < t->nblocks; i++) free(t->blocks[i]);
    free(t->blocks);
    free(t->strs);
    free(t->lens);
    free(t->hashes);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

uint32_t op_strtab_find(const op_strtab *t, const char *s, size_t len)
{
    if (!t->nslots) return UINT32_MAX;
    uint32_t h = op_hash_bytes(s, len);
    for (size_t i = h & (t->nslots - 1);; i = (i + 1) & (t->nslots - 1)) {
        uint32_t v = t->slots[i];
        if (!v) return UINT32_MAX;
        uint32_t id = v - 1;
        if (t->hashes[id] == h && t->lens[id] == len && memcmp(t->strs[id], s, len) == 0) return id;
    }
}

uint32_t op_strtab_intern(op_strtab *t, const char *s, size_t len)
{
    if (len > UINT32_MAX - 1) return UINT32_MAX;
    if ((size_t)(t->count + 1) * 2 > t->nslots && grow_slots(t) != 0) return UINT32_MAX;
    uint32_t h = op_hash_bytes(s, len);
    size_t i = h & (t->nslots - 1);
    for (;; i = (i + 1) & (t->nslots - 1)) {
        uint32_t v = t->slots[i];
        if (!v) break;
        uint32_t id = v - 1;
        if (t->hashes[id] == h && t->lens[id] == len && memcmp(t->strs[id], s, len) == 0) return id;
    }
    if (t->count == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 256;
        char **strs = realloc(t->strs, cap * sizeof *strs);
        if (!strs) return UINT32_MAX;
        t->strs = strs;
        uint32_t *lens = realloc(t->lens, cap * sizeof *lens);
        if (!lens) return UINT32_MAX;
        t->lens = lens;
        uint32_t *hashes = realloc(t->hashes, cap * sizeof *hashes);
        if (!hashes) return UINT32_MAX;
        t->hashes = hashes;
        t->cap = cap;
    }
    char *copy = arena_alloc(t, len + 1);
    if (!copy) return UINT32_MAX;
    if (len) memcpy(copy, s, len);
    copy[len] = '\0';
    uint32_t id = t->count++;
    t->strs[id] = copy;
    t->lens[id] = (uint32_t)len;
    t->hashes[id] = h;
    t->slots[i] = id + 1;
    return id;
}

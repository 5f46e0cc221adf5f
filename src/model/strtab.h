/* String interning for the event model: every name, shape string and
 * argument text is stored once and named by a 32-bit id. Id 0 is "". */
#ifndef OPPROF_MODEL_STRTAB_H
#define OPPROF_MODEL_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "common/map.h"

typedef struct op_strtab {
    char **strs;      /* id -> NUL-terminated string */
    uint32_t *lens;   /* id -> length */
    uint32_t count;
    size_t cap_strs, cap_lens;
    op_map ix;        /* string hash -> id */
    char *arena;      /* current block */
    size_t arena_used, arena_cap;
    char **blocks;    /* every block, for freeing */
    size_t nblocks;
} op_strtab;

int op_strtab_init(op_strtab *t);
void op_strtab_free(op_strtab *t);

/* Returns the id of s[0..len), adding it when new; UINT32_MAX when out of memory. */
uint32_t op_strtab_intern(op_strtab *t, const char *s, size_t len);

/* Id of an existing string, UINT32_MAX when absent. */
uint32_t op_strtab_find(const op_strtab *t, const char *s, size_t len);

static inline const char *op_strtab_get(const op_strtab *t, uint32_t id)
{
    return id < t->count ? t->strs[id] : "";
}

static inline uint32_t op_strtab_len(const op_strtab *t, uint32_t id)
{
    return id < t->count ? t->lens[id] : 0;
}

#endif

/* A hash map from 64-bit keys to 32-bit values (open addressing), for the
 * .pftrace reader's tracks, sequences and interned ids. */
#ifndef OPPROF_IMPORT_U64MAP_H
#define OPPROF_IMPORT_U64MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct op_u64map {
    uint64_t *keys;
    uint32_t *vals;
    uint8_t *used;
    size_t cap, n;
} op_u64map;

/* The value of key in *v: 1 found, 0 not. */
int op_u64map_get(const op_u64map *m, uint64_t key, uint32_t *v);

/* Sets key to v; 0, or -1 when out of memory. */
int op_u64map_put(op_u64map *m, uint64_t key, uint32_t v);

void op_u64map_free(op_u64map *m);

#endif

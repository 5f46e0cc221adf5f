/* The live-allocation table behind opprof_record_alloc / _free: address ->
 * size for every block allocated during a session with profile_memory, so
 * that a free (which knows only its address) can be recorded with its size.
 *
 * Sharded by address line, each shard an open-addressing table under its own
 * spinlock; tables live in mmap'd memory so that a malloc interposer can use
 * this without recursing into malloc. Each shard remembers the last few
 * addresses it freed, which is how a double free is told from an unknown
 * one (a double free long after the first counts as unknown). */
#ifndef OPPROF_CAPTURE_MEMTRACK_H
#define OPPROF_CAPTURE_MEMTRACK_H

#include <stdint.h>
#include "common/compiler.h"

enum { OP_MT_UNKNOWN = -1, OP_MT_DOUBLE = -2 };

/* Empties the table and the counters (session start). */
void op_memtrack_reset(void);

/* Records a live block. Returns 0, or -1 when the table cannot grow (the
 * block then stays untracked: its free will count as unknown). */
int op_memtrack_insert(uint64_t addr, uint64_t bytes);

/* Forgets a block: its size, or OP_MT_UNKNOWN / OP_MT_DOUBLE (counted). */
int64_t op_memtrack_remove(uint64_t addr);

void op_memtrack_count_realloc(void);

typedef struct op_memtrack_counts {
    uint64_t unknown_frees, double_frees, reallocs, live_blocks;
} op_memtrack_counts;

OP_SEAM void op_memtrack_counts_get(op_memtrack_counts *out);

#endif

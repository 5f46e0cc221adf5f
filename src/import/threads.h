/* The threads of an imported trace, found by (pid, tid) in constant time.
 *
 * Chrome traces may name a process or thread with a string ("CPU
 * functions", "Spans"). The model keeps numbers (speedscope rejects string
 * ids), so a string gets a number no numeric id in the file uses, chosen
 * once the whole file is read; the spelling stays in op_thread.pid_name, and
 * a string tid becomes the thread's name when it has no other. */
#ifndef OPPROF_IMPORT_THREADS_H
#define OPPROF_IMPORT_THREADS_H

#include <stdint.h>

#include "common/map.h"
#include "model/model.h"

typedef struct op_thread_key {
    int64_t pid, tid; /* numbers, or strtab ids when *_str */
    uint8_t pid_str, tid_str;
} op_thread_key;

typedef struct op_thread_map {
    op_map ix;       /* key hash -> thread index */
    uint8_t *flags;  /* per thread: 1 pid was a string, 2 tid was a string */
    size_t cap_flags;
    op_thread_key *keys; /* per thread: the key as the file gave it (a string's strtab id) */
    size_t cap_keys;
    size_t numbered; /* threads [0, numbered) have their numbers */
    int64_t next[2]; /* past the largest numeric pid (0) and tid (1) seen */
    op_map given[2]; /* a string's strtab id -> its number, pids (0) and tids (1) */
} op_thread_map;

/* The thread's index, added when new; -1 when out of memory. */
int64_t op_thread_map_get(op_thread_map *m, opprof_trace *t, const op_thread_key *k);

/* Gives string ids their numbers: after the largest numeric id of the
 * threads so far, each distinct string once, in order of first appearance.
 * A reader calls it after the last event; one in batches before each
 * batch (a numeric id seen later may then take a number given before).
 * Lookups go on working. */
int op_thread_map_number(op_thread_map *m, opprof_trace *t);

void op_thread_map_free(op_thread_map *m);

#endif

/* Captured stacks into the model: the collector turns each distinct stack
 * entry of a thread's stack table (capture/stacktab.h) into a trace stack of
 * frame strings, symbolizing each code address once. */
#ifndef OPPROF_MODEL_STACKS_H
#define OPPROF_MODEL_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "common/map.h"
#include "model/model.h"

typedef struct op_stack_map {
    op_map entries;    /* stack entry address -> model stack (index + 1) */
    op_map ips;        /* code address -> k: its frames are pool[ipf[k].off] .. + ipf[k].cnt */
    struct op_ipframes {
        uint32_t off, cnt;
    } * ipf;
    size_t nips, cap_ips;
    uint32_t *pool;    /* frame string ids */
    size_t npool, cap_pool;
    op_strtab seqs;    /* frame id sequences seen -> seq id */
    uint32_t *seq_stack; /* seq id -> model stack (index + 1) */
    size_t cap_seq;
    int ready;
} op_stack_map;

/* The model stack (index + 1, for op_event.stack) of the stack entry at
 * entry; 0 for none; UINT32_MAX when out of memory. Equal stacks of
 * different threads share one model stack. */
uint32_t op_stack_map_get(op_stack_map *m, opprof_trace *tr, uint64_t entry);

void op_stack_map_free(op_stack_map *m);

#endif

/* The .pftrace's first sequence (pftrace_meta.c): the tracks of processes,
 * threads and counters, and the session's metadata (see pftrace.h). */
#ifndef OPPROF_EXPORT_PFTRACE_META_H
#define OPPROF_EXPORT_PFTRACE_META_H

#include "export/pftrace_pack.h"

/* Track uuids. */
#define PF_UUID_META 0x2000000000000001ull
#define PF_UUID_PROCESS(k) (0x4000000000000000ull + (uint64_t)(k))
#define PF_UUID_COUNTER(k) (0x3000000000000000ull + (uint64_t)(k))
#define PF_UUID_THREAD(i, lane) ((((uint64_t)(i) + 1) << 16) | (uint64_t)(lane))
#define PF_MAX_LANES 65535

/* A "Total Allocated" counter: one per process and device. */
typedef struct pf_counter {
    int64_t pid;
    int8_t dev_type, dev_id;
} pf_counter;

/* The tracks of threads [pw->described, t->nthreads) and of their
 * processes not yet described; the counter tracks of the memory events'
 * processes and devices not yet described; the "opprof" track and its
 * instant with info's metadata (dropped events, incomplete,
 * distributedInfo). 0 or -1. */
int op_pf_meta_threads(pf_writer *pw);
int op_pf_meta_counters(pf_writer *pw);
int op_pf_meta_info(pf_writer *pw, const opprof_trace *info);

/* The counter track of a memory event's process and device. */
size_t op_pf_counter_of(const pf_writer *pw, const op_mem_event *m);

#endif

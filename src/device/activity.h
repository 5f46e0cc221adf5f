/* Device activity in a form of our own, between CUPTI's records and the
 * event model: cupti_decode.c fills it from CUPTI's structs (the client),
 * model/devmap.c turns it into events (the analysis library). Both are pure
 * functions, so tests feed them synthetic records on machines without a GPU. */
#ifndef OPPROF_DEVICE_ACTIVITY_H
#define OPPROF_DEVICE_ACTIVITY_H

#include <stddef.h>
#include <stdint.h>

#include "capture/clock.h"
#include "opprof.h"

typedef enum op_dev_kind {
    OP_DEV_KERNEL = 1,
    OP_DEV_MEMCPY,
    OP_DEV_MEMSET,
    OP_DEV_RUNTIME, /* a CUDA runtime API call */
    OP_DEV_DRIVER   /* a CUDA driver API call */
} op_dev_kind;

/* Memory kinds as CUPTI numbers them (CUpti_ActivityMemoryKind). */
typedef struct op_dev_act {
    uint8_t kind;                       /* op_dev_kind */
    uint8_t copy_kind, src_kind, dst_kind; /* memcpy: CUPTI's copy and memory kinds */
    uint16_t memory_kind;               /* memset */
    uint32_t device, context, stream;   /* device activity */
    uint32_t correlation;               /* links an API call and the activity it launched */
    uint32_t pid, tid;                  /* API calls: the calling process and (system) thread */
    uint32_t cbid;                      /* API calls: CUPTI's callback id */
    uint64_t start, end;                /* the device clock domain: CUPTI's ns */
    const char *name;                   /* kernel or API name; must outlive the mapping */
    int32_t grid[3], block[3];
    uint32_t registers;                 /* per thread */
    int32_t static_smem, dynamic_smem;  /* bytes per block */
    uint64_t bytes;                     /* memcpy, memset */
} op_dev_act;

/* An external correlation: the activity with this correlation id was
 * launched while the range whose start is `op_t0` (raw ticks of the
 * recording clock) was the innermost open range of its thread. */
typedef struct op_dev_ext {
    uint32_t correlation;
    uint64_t op_t0;
} op_dev_ext;

typedef struct op_dev_batch {
    op_dev_act *acts;
    size_t n, cap;
    op_dev_ext *ext;
    size_t next, cap_ext;
    uint64_t dropped; /* records CUPTI could not keep, and incomplete ones */
} op_dev_batch;

int op_dev_batch_add(op_dev_batch *b, const op_dev_act *a);
int op_dev_batch_add_ext(op_dev_batch *b, uint32_t correlation, uint64_t op_t0);
void op_dev_batch_clear(op_dev_batch *b); /* keeps the memory */
void op_dev_batch_free(op_dev_batch *b);

/* A device as Kineto describes it in a trace's "deviceProperties". */
typedef struct op_dev_props {
    int id;
    char name[256];
    int64_t total_global_mem;
    int compute_major, compute_minor;
    int max_threads_per_block, max_threads_per_mp;
    int regs_per_block, regs_per_mp, warp_size;
    int shared_mem_per_block, shared_mem_per_mp, num_sms, shared_mem_per_block_optin;
} op_dev_props;

/* p as one JSON object with Kineto's keys, in its order; the length, or
 * -1 when n is too small. */
int op_dev_props_json(const op_dev_props *p, char *buf, size_t n);

#endif

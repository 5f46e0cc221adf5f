/* Device activity as the client records it (see activity.h): the batch
 * that CUPTI's buffers are decoded into, and the devices' properties. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "device/activity.h"

int op_dev_batch_add(op_dev_batch *b, const op_dev_act *a)
{
    if (op_grow(&b->acts, &b->cap, b->n + 1, sizeof *b->acts)) return -1;
    b->acts[b->n++] = *a;
    return 0;
}

int op_dev_batch_add_ext(op_dev_batch *b, uint32_t correlation, uint64_t op_t0)
{
    if (op_grow(&b->ext, &b->cap_ext, b->next + 1, sizeof *b->ext)) return -1;
    b->ext[b->next++] = (op_dev_ext){correlation, op_t0};
    return 0;
}

void op_dev_batch_clear(op_dev_batch *b)
{
    b->n = b->next = 0;
    b->dropped = 0;
}

void op_dev_batch_free(op_dev_batch *b)
{
    free(b->acts);
    free(b->ext);
    memset(b, 0, sizeof *b);
}

int op_dev_props_json(const op_dev_props *p, char *buf, size_t n)
{
    char name[2 * sizeof p->name];
    size_t o = 0;
    for (const char *c = p->name; *c && o + 2 < sizeof name; c++) {
        if (*c == '"' || *c == '\\') name[o++] = '\\';
        name[o++] = (unsigned char)*c < 0x20 ? ' ' : *c;
    }
    name[o] = '\0';
    int len = snprintf(buf, n,
                       "{\"id\": %d, \"name\": \"%s\", \"totalGlobalMem\": %" PRId64
                       ", \"computeMajor\": %d, \"computeMinor\": %d, \"maxThreadsPerBlock\": %d"
                       ", \"maxThreadsPerMultiprocessor\": %d, \"regsPerBlock\": %d, \"regsPerMultiprocessor\": %d"
                       ", \"warpSize\": %d, \"sharedMemPerBlock\": %d, \"sharedMemPerMultiprocessor\": %d"
                       ", \"numSms\": %d, \"sharedMemPerBlockOptin\": %d}",
                       p->id, name, p->total_global_mem, p->compute_major, p->compute_minor, p->max_threads_per_block,
                       p->max_threads_per_mp, p->regs_per_block, p->regs_per_mp, p->warp_size,
                       p->shared_mem_per_block, p->shared_mem_per_mp, p->num_sms, p->shared_mem_per_block_optin);
    return len < 0 || (size_t)len >= n ? -1 : len;
}

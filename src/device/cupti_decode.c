/* CUPTI activity records into op_dev_act (see cupti_decode.h). The record
 * layouts are those of the CUPTI headers the library was built with;
 * cupti.c refuses a libcupti of another major version. */
#ifdef OPPROF_HAVE_CUPTI
#include <ctype.h>
#include <string.h>

#include "device/cupti_decode.h"

const char *op_cupti_strip_version(const char *name, char *buf, size_t n)
{
    size_t len = strlen(name);
    size_t k = len;
    while (k > 0 && isdigit((unsigned char)name[k - 1])) k--;
    if (k < len && k >= 2 && name[k - 1] == 'v' && name[k - 2] == '_') len = k - 2;
    if (len >= n) len = n - 1;
    memcpy(buf, name, len);
    buf[len] = '\0';
    return buf;
}

static int device_act(op_dev_batch *b, op_dev_act *a)
{
    if (a->start == 0 && a->end == 0) { /* no timestamps: counted, not kept */
        b->dropped++;
        return 0;
    }
    return op_dev_batch_add(b, a);
}

int op_cupti_decode(const op_cupti_decoder *d, const CUpti_Activity *rec, op_dev_batch *b)
{
    op_dev_act a;
    memset(&a, 0, sizeof a);
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
        a.kind = OP_DEV_KERNEL;
        a.start = k->start;
        a.end = k->end;
        a.device = k->deviceId;
        a.context = k->contextId;
        a.stream = k->streamId;
        a.correlation = k->correlationId;
        a.name = d && d->kernel_name ? d->kernel_name(k->name, d->ctx) : k->name;
        if (!a.name) return -1;
        a.grid[0] = k->gridX;
        a.grid[1] = k->gridY;
        a.grid[2] = k->gridZ;
        a.block[0] = k->blockX;
        a.block[1] = k->blockY;
        a.block[2] = k->blockZ;
        a.registers = k->registersPerThread;
        a.static_smem = k->staticSharedMemory;
        a.dynamic_smem = k->dynamicSharedMemory;
        return device_act(b, &a);
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
        a.kind = OP_DEV_MEMCPY;
        a.copy_kind = m->copyKind;
        a.src_kind = m->srcKind;
        a.dst_kind = m->dstKind;
        a.bytes = m->bytes;
        a.start = m->start;
        a.end = m->end;
        a.device = m->deviceId;
        a.context = m->contextId;
        a.stream = m->streamId;
        a.correlation = m->correlationId;
        return device_act(b, &a);
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
        a.kind = OP_DEV_MEMSET;
        a.memory_kind = m->memoryKind;
        a.bytes = m->bytes;
        a.start = m->start;
        a.end = m->end;
        a.device = m->deviceId;
        a.context = m->contextId;
        a.stream = m->streamId;
        a.correlation = m->correlationId;
        return device_act(b, &a);
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
        const CUpti_ActivityAPI *api = (const CUpti_ActivityAPI *)rec;
        int rt = rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
        a.kind = rt ? OP_DEV_RUNTIME : OP_DEV_DRIVER;
        a.cbid = api->cbid;
        a.start = api->start;
        a.end = api->end;
        a.pid = api->processId;
        a.tid = api->threadId;
        a.correlation = api->correlationId;
        a.name = d && d->api_name
                     ? d->api_name(rt ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, api->cbid, d->ctx)
                     : NULL;
        if (!a.name) return 0;
        return op_dev_batch_add(b, &a);
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const CUpti_ActivityExternalCorrelation *x = (const CUpti_ActivityExternalCorrelation *)rec;
        if (x->externalKind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) return 0;
        return op_dev_batch_add_ext(b, x->correlationId, x->externalId);
    }
    default: return 0;
    }
}
#else
typedef int op_cupti_decode_unavailable;
#endif

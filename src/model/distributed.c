/* distributedInfo: the process-wide setting that libopprof_mpi (or any
 * launcher) makes, copied into each trace a session makes (read back from
 * traces by read.c). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "model/distributed.h"
#include "model/model.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static opprof_distributed_info g_info = {NULL, -1, -1, {0, 0, 0, 0}, {0, 0, 0, 0}};
static char g_backend[32];

void opprof_distributed_info_init(opprof_distributed_info *d)
{
    if (!d) return;
    memset(d, 0, sizeof *d);
    d->backend = "";
    d->rank = -1;
    d->world_size = -1;
}

int opprof_set_distributed_info(const opprof_distributed_info *d)
{
    pthread_mutex_lock(&g_lock);
    if (d) {
        g_info = *d;
        snprintf(g_backend, sizeof g_backend, "%s", d->backend ? d->backend : "");
    } else {
        opprof_distributed_info_init(&g_info);
        g_backend[0] = '\0';
    }
    g_info.backend = g_backend;
    pthread_mutex_unlock(&g_lock);
    return OPPROF_OK;
}

int opprof_get_distributed_info(opprof_distributed_info *out)
{
    if (!out) return op_fail(OPPROF_E_INVAL, "opprof_get_distributed_info: NULL out");
    pthread_mutex_lock(&g_lock);
    *out = g_info;
    out->backend = g_backend;
    pthread_mutex_unlock(&g_lock);
    return OPPROF_OK;
}

int op_distributed_apply(opprof_trace *t)
{
    opprof_distributed_info d;
    opprof_get_distributed_info(&d);
    if (d.rank < 0) return OPPROF_OK;
    uint32_t b = op_trace_intern(t, d.backend, strlen(d.backend));
    if (b == UINT32_MAX) return op_fail(OPPROF_E_NOMEM, "out of memory");
    t->dist_backend = b;
    t->dist_rank = d.rank;
    t->dist_world = d.world_size;
    t->clock_start = d.clock_start;
    t->clock_end = d.clock_end;
    return OPPROF_OK;
}

int64_t opprof_clock_offset_at(const opprof_distributed_info *d, int64_t wall_ns)
{
    if (!d) return 0;
    const opprof_clock_sync *a = &d->clock_start, *b = &d->clock_end;
    if (a->valid && b->valid && b->at_ns != a->at_ns) {
        /* Linear drift between the two; in long double, since the product of
         * a nanosecond span and an offset overflows 64 bits. */
        long double slope = ((long double)b->offset_ns - a->offset_ns) / ((long double)b->at_ns - a->at_ns);
        long double off = a->offset_ns + slope * ((long double)wall_ns - a->at_ns);
        /* Clamped before the cast: a value outside int64 has no conversion. */
        if (!(off < (long double)INT64_MAX)) return INT64_MAX;
        if (!(off > (long double)INT64_MIN)) return INT64_MIN;
        return (int64_t)off;
    }
    if (a->valid) return a->offset_ns;
    if (b->valid) return b->offset_ns;
    return 0;
}

/* Sort keys of key averages and the stable descending sort PyTorch's table
 * uses (sorted(..., reverse=True) keeps equal rows in their order). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/keyavg.h"
#include "common/error.h"
#include "common/sort.h"

#define GREATER_FIELD(fn, field)                                \
    static int fn(const op_avg *a, const op_avg *b)             \
    {                                                           \
        return a->r.field > b->r.field;                         \
    }

GREATER_FIELD(gt_cpu_total, cpu_time_total_ns)
GREATER_FIELD(gt_self_cpu, self_cpu_time_total_ns)
GREATER_FIELD(gt_dev_total, device_time_total_ns)
GREATER_FIELD(gt_self_dev, self_device_time_total_ns)
GREATER_FIELD(gt_mem, cpu_memory_usage)
GREATER_FIELD(gt_self_mem, self_cpu_memory_usage)
GREATER_FIELD(gt_flops, flops)
GREATER_FIELD(gt_count, count)

/* Averages compared exactly (a/ca > b/cb), so rows with equal averages keep
 * their order whatever the rounding of a division would do. */
static int avg_greater(int64_t a, uint64_t ca, int64_t b, uint64_t cb)
{
    if (!ca) a = 0, ca = 1; /* PyTorch's average of nothing is 0 */
    if (!cb) b = 0, cb = 1;
    return (__int128)a * (__int128)cb > (__int128)b * (__int128)ca;
}

static int gt_cpu_avg(const op_avg *a, const op_avg *b)
{
    return avg_greater(a->r.cpu_time_total_ns, a->r.count, b->r.cpu_time_total_ns, b->r.count);
}

static int gt_dev_avg(const op_avg *a, const op_avg *b)
{
    return avg_greater(a->r.device_time_total_ns, a->r.count, b->r.device_time_total_ns, b->r.count);
}

static int gt_oncpu(const op_avg *a, const op_avg *b)
{
    return a->oncpu_ns > b->oncpu_ns;
}

static int gt_self_oncpu(const op_avg *a, const op_avg *b)
{
    return a->self_oncpu_ns > b->self_oncpu_ns;
}

/* Wall time in the ranges that was not on a CPU (waiting, or runnable). */
static int gt_wait(const op_avg *a, const op_avg *b)
{
    return a->r.cpu_time_total_ns - a->oncpu_ns > b->r.cpu_time_total_ns - b->oncpu_ns;
}

static const struct {
    const char *key;
    op_avg_greater_fn fn;
} keys[] = {
    {"cpu_time", gt_cpu_avg},
    {"cpu_time_total", gt_cpu_total},
    {"self_cpu_time_total", gt_self_cpu},
    {"cpu_memory_usage", gt_mem},
    {"self_cpu_memory_usage", gt_self_mem},
    {"flops", gt_flops},
    {"count", gt_count},
    {"cuda_time", gt_dev_avg},
    {"cuda_time_total", gt_dev_total},
    {"self_cuda_time_total", gt_self_dev},
    {"device_time", gt_dev_avg},
    {"device_time_total", gt_dev_total},
    {"self_device_time_total", gt_self_dev},
    {"oncpu_time_total", gt_oncpu},
    {"self_oncpu_time_total", gt_self_oncpu},
    {"wait_time_total", gt_wait},
};

op_avg_greater_fn op_avg_sort_key(const char *sort_by)
{
    for (size_t i = 0; sort_by && i < sizeof keys / sizeof keys[0]; i++)
        if (!strcmp(keys[i].key, sort_by)) return keys[i].fn;
    char valid[512];
    size_t n = 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        n += (size_t)snprintf(valid + n, sizeof valid - n, "%s%s", i ? ", " : "", keys[i].key);
    op_fail(OPPROF_E_INVAL, "unknown sort key '%s'; valid keys: %s", sort_by ? sort_by : "(null)", valid);
    return NULL;
}

typedef struct {
    const op_avg *rows;
    op_avg_greater_fn greater;
} sort_ctx;

static int row_before(const void *ctx, uint32_t a, uint32_t b)
{
    const sort_ctx *c = ctx;
    return c->greater(&c->rows[a], &c->rows[b]);
}

/* Stable: equal rows keep their order (op_sort_index). greater NULL keeps
 * the order. */
int op_avg_sorted_order(const op_avg *rows, size_t n, op_avg_greater_fn greater, uint32_t *perm)
{
    if (n > UINT32_MAX) return op_fail(OPPROF_E_RANGE, "more than %u rows to sort", UINT32_MAX);
    for (size_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
    if (n < 2 || !greater) return 0;
    sort_ctx c = {rows, greater};
    if (op_sort_index(perm, n, row_before, &c) != 0) return op_fail(OPPROF_E_NOMEM, "out of memory sorting %zu rows", n);
    return 0;
}

int opprof_key_averages_sort(opprof_key_averages *ka, const char *sort_by)
{
    if (!ka) return op_fail(OPPROF_E_INVAL, "opprof_key_averages_sort: NULL key averages");
    op_avg_greater_fn greater = op_avg_sort_key(sort_by);
    if (!greater) return OPPROF_E_INVAL;
    uint32_t *perm = malloc((ka->n ? ka->n : 1) * sizeof *perm);
    op_avg *rows = malloc((ka->n ? ka->n : 1) * sizeof *rows);
    int rc = perm && rows ? op_avg_sorted_order(ka->rows, ka->n, greater, perm)
                          : op_fail(OPPROF_E_NOMEM, "out of memory sorting %zu rows", ka->n);
    if (rc == 0) {
        for (size_t i = 0; i < ka->n; i++) rows[i] = ka->rows[perm[i]];
        memcpy(ka->rows, rows, ka->n * sizeof *rows);
    }
    free(perm);
    free(rows);
    return rc;
}

/* The session's device hooks (see device.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "device/cupti.h"
#include "device/device.h"
#include "device/ranges.h"
#include "opprof.h" /* opprof_cuda_device_count */

static int g_cuda_on; /* this session records CUDA activity; under the session lock */
static int g_said;    /* the "no CUDA device" line was printed */

void op_device_start(const opprof_config *cfg)
{
    g_cuda_on = 0;
    if (!(cfg->activities & OPPROF_ACTIVITY_CUDA)) return;
    const char *why = NULL;
    int n = op_cupti_load(&why);
    if (n > 0 && op_cupti_start() == 0) {
        g_cuda_on = 1;
        return;
    }
    if (n > 0) why = "no CUDA device: CUPTI could not start activity recording";
    /* One line per process: a program that starts many sessions is told once. */
    if (!g_said) {
        g_said = 1;
        fprintf(stderr, "opprof: %s; recording CPU activity only\n", why ? why : "no CUDA device: unknown reason");
    }
}

int op_device_take(op_dev_take *out)
{
    memset(out, 0, sizeof *out);
    int rc = op_ranges_take(&out->ranges, &out->nranges);
    if (g_cuda_on) {
        out->cuda = 1;
        if (op_cupti_take(&out->batch, &out->cupti_minus_mono, &out->props, &out->props_len) != 0) rc = -1;
    }
    return rc == 0 ? OPPROF_OK : op_fail(OPPROF_E_NOMEM, "out of memory taking the device activity");
}

void op_device_take_free(op_dev_take *t)
{
    free(t->ranges);
    op_dev_batch_free(&t->batch);
    free(t->props);
    memset(t, 0, sizeof *t);
}

void op_device_stop(void)
{
    if (g_cuda_on) op_cupti_stop();
    g_cuda_on = 0;
}

int opprof_cuda_device_count(void)
{
    const char *why = NULL;
    int n = op_cupti_load(&why);
    if (n > 0) return n;
    return op_fail(n < 0 ? n : OPPROF_E_NODEV, "%s", why ? why : "no CUDA device");
}

/* The session's hooks into device activity (CUPTI) and NVTX ranges.
 *
 * session.c calls op_device_start when a session starts, op_device_take for
 * each recording generation it closes, and op_device_stop when the session
 * ends. All three run under the session lock. The client only records:
 * what a generation recorded is handed out as an op_dev_take, which the
 * analysis library maps onto the trace's events (model/devmap.h). */
#ifndef OPPROF_DEVICE_DEVICE_H
#define OPPROF_DEVICE_DEVICE_H

#include <stddef.h>

#include "device/activity.h"
#include "device/ranges.h"
#include "opprof.h"

/* What one generation recorded beside the threads' buffers. */
typedef struct op_dev_take {
    op_range_done *ranges; /* ended NVTX start/end ranges */
    size_t nranges;
    int cuda;              /* CUDA activity was recorded: batch, offset_ns and props are set */
    op_dev_batch batch;    /* CUPTI's activity, in the device clock */
    int64_t cupti_minus_mono; /* CUPTI's clock minus CLOCK_MONOTONIC, in ns */
    char *props;           /* the devices' "deviceProperties" objects, comma-separated; NULL none */
    size_t props_len;
} op_dev_take;

/* Starts what cfg asks for beyond CPU activity. Never fails the session:
 * without a usable CUDA device it prints one line ("no CUDA device: ...")
 * and the session records CPU activity only. */
void op_device_start(const opprof_config *cfg);

/* Moves the generation's device activity and ended NVTX start/end ranges
 * into *out (zeroed first), and forgets every range still open. 0, or a
 * negative status when out of memory (*out then holds what was taken). */
int op_device_take(op_dev_take *out);
void op_device_take_free(op_dev_take *t);

/* Stops CUDA activity recording; the next session starts it again. */
void op_device_stop(void);

#endif

/* Device activity into the event model: what the client recorded beside the
 * threads' buffers (device/device.h: CUPTI's batch, ended NVTX start/end
 * ranges) mapped onto a live trace's events, before op_trace_finish. */
#ifndef OPPROF_MODEL_DEVMAP_H
#define OPPROF_MODEL_DEVMAP_H

#include "capture/clock.h"
#include "device/device.h"
#include "model/model.h"

/* How device time maps onto the trace: trace ns = device ns + offset_ns;
 * tb converts the raw ticks of external correlations. */
typedef struct op_dev_clock {
    int64_t offset_ns;
    const op_timebase *tb;
} op_dev_clock;

/* Adds b's activity to tr (before op_trace_finish): kernels, copies and
 * memsets on a thread per (device, stream), pid = device, tid = stream;
 * API calls on the calling thread, inside the operator that launched them.
 * Each activity gets its correlation, and the external id of the operator
 * that was open at its launch, so that op_trace_finish charges its time to
 * that operator. Dropped records are added to tr's dropped count. */
int op_dev_map(opprof_trace *tr, const op_dev_batch *b, const op_dev_clock *clk);

/* Everything a generation's take holds, added to tr: each ended start/end
 * range gives its event its duration, then the CUDA activity and the
 * devices' properties. tb is the generation's timebase. A status. */
int op_dev_apply(opprof_trace *tr, const op_dev_take *d, const op_timebase *tb);

/* "Memcpy HtoD (Pageable -> Device)", as Kineto names copies. */
const char *op_dev_memcpy_kind_name(unsigned copy_kind);
const char *op_dev_memory_kind_name(unsigned memory_kind);

#endif

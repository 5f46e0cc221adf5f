/* The session's hooks into device activity (CUPTI) and NVTX ranges.
 *
 * session.c calls op_device_start when a session starts, op_device_collect
 * for each recording generation it closes (after op_collect, before
 * op_trace_finish: device events join the same trace), and op_device_stop
 * when the session ends. All three run under the session lock. */
#ifndef OPPROF_DEVICE_DEVICE_H
#define OPPROF_DEVICE_DEVICE_H

#include "capture/clock.h"
#include "opprof.h"

/* Starts what cfg asks for beyond CPU activity. Never fails the session:
 * without a usable CUDA device it prints one line ("no CUDA device: ...")
 * and the session records CPU activity only. */
void op_device_start(const opprof_config *cfg);

/* Adds the generation's device activity and finished NVTX start/end ranges
 * to tr (tr may be NULL: the generation is thrown away, its activity too).
 * tb is the generation's timebase. */
int op_device_collect(opprof_trace *tr, const op_timebase *tb);

/* Stops CUDA activity recording; the next session starts it again. */
void op_device_stop(void);

#endif

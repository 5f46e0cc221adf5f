/* The live CUPTI collector (cupti.c): CUDA and CUPTI are loaded with
 * dlopen on first use, so the library runs unchanged where they are absent.
 * Without the CUPTI headers at build time these report OPPROF_E_UNSUPPORTED. */
#ifndef OPPROF_DEVICE_CUPTI_H
#define OPPROF_DEVICE_CUPTI_H

#include <stddef.h>
#include <stdint.h>

#include "device/activity.h"
#include "opprof.h"

/* Loads CUDA and CUPTI once; the device count, or a negative status with a
 * detail that starts "no CUDA device: " (or says the build lacks CUDA). */
int op_cupti_load(const char **why);

/* Enables activity recording and the launch callbacks. */
int op_cupti_start(void);
/* Waits for the current context's work, flushes CUPTI's buffers and moves
 * everything recorded since the last call into *out, with CUPTI's clock
 * minus CLOCK_MONOTONIC and the JSON "deviceProperties" of the devices seen
 * (*props malloc'd, NULL when none). 0, or -1 when out of memory. */
int op_cupti_take(op_dev_batch *out, int64_t *cupti_minus_mono_ns, char **props, size_t *props_len);
void op_cupti_stop(void);

#endif

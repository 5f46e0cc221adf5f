/* The live CUPTI collector (cupti.c): CUDA and CUPTI are loaded with
 * dlopen on first use, so the library runs unchanged where they are absent.
 * Without the CUPTI headers at build time these report OPPROF_E_UNSUPPORTED. */
#ifndef OPPROF_DEVICE_CUPTI_H
#define OPPROF_DEVICE_CUPTI_H

#include "capture/clock.h"
#include "opprof.h"

/* Loads CUDA and CUPTI once; the device count, or a negative status with a
 * detail that starts "no CUDA device: " (or says the build lacks CUDA). */
int op_cupti_load(const char **why);

/* Enables activity recording and the launch callbacks. */
int op_cupti_start(void);
/* Waits for the current context's work, flushes CUPTI's buffers and adds
 * everything recorded since the last call to tr (NULL: thrown away). */
int op_cupti_collect(opprof_trace *tr, const op_timebase *tb);
void op_cupti_stop(void);

#endif

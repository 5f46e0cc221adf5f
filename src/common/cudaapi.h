/* CUDA API calls by name (CUPTI's, without the version suffix): which are
 * worth a record. One list for what CUPTI is asked to record (device/cupti.c)
 * and what the model keeps of what was recorded (model/devmap.c), so nothing
 * is recorded only to be thrown away. Stateless: compiled into both
 * libraries, as the rest of common/. */
#ifndef OPPROF_COMMON_CUDAAPI_H
#define OPPROF_COMMON_CUDAAPI_H

/* A runtime call that is a query or bookkeeping: never recorded, never shown. */
int op_cuda_runtime_is_noise(const char *name);
/* A driver call that does work (a launch, copy or memset): kept. */
int op_cuda_driver_is_kept(const char *name);
/* A launch-like call of the runtime (driver 0) or driver API: what the
 * launch callbacks watch. */
int op_cuda_api_is_launch(int driver, const char *name);

#endif

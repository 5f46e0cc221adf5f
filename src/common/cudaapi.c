/* Which CUDA API calls are worth a record (see cudaapi.h). */
#include <string.h>

#include "common/cudaapi.h"

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Queries, error checks and event bookkeeping that libraries make by the
 * thousand (cuDNN asks for the device and its attributes on every call);
 * Kineto leaves the same out. */
int op_cuda_runtime_is_noise(const char *name)
{
    static const char *const prefixes[] = {
        "cudaGetDevice",      "cudaSetDevice",          "cudaGetLastError",     "cudaPeekAtLastError",
        "cudaEventCreate",    "cudaEventRecord",        "cudaEventDestroy",     "cudaEventQuery",
        "cudaEventElapsedTime", "cudaStreamGetCaptureInfo", "cudaStreamIsCapturing", "cudaDeviceGetAttribute",
        "cudaFuncGetAttributes", "cudaPointerGetAttributes", "cudaDriverGetVersion", "cudaRuntimeGetVersion",
        "cudaGetDeviceProperties", "cudaGetDriverEntryPoint", "cudaStreamGetPriority", "cudaStreamGetFlags",
    };
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (starts_with(name, prefixes[i])) return 1;
    return 0;
}

/* Driver calls are kept when they do work: launches, copies, memsets (cuDNN
 * and Triton-like code launch through the driver). The runtime's own driver
 * calls under each runtime call are not. */
int op_cuda_driver_is_kept(const char *name)
{
    return starts_with(name, "cuLaunch") || starts_with(name, "cuMemcpy") || starts_with(name, "cuMemset") ||
           starts_with(name, "cuGraphLaunch");
}

int op_cuda_api_is_launch(int driver, const char *name)
{
    if (driver) return op_cuda_driver_is_kept(name);
    return strstr(name, "Launch") || starts_with(name, "cudaMemcpy") || starts_with(name, "cudaMemset");
}

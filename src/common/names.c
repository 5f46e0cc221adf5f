/* Names of categories and element types, as PyTorch's traces spell them:
 * the recording vocabulary of opprof.h, shared by both libraries. */
#include "opprof.h"

const char *opprof_category_name(int category)
{
    switch (category) {
    case OPPROF_CAT_CPU_OP: return "cpu_op";
    case OPPROF_CAT_USER_ANNOTATION: return "user_annotation";
    case OPPROF_CAT_CUDA_RUNTIME: return "cuda_runtime";
    case OPPROF_CAT_CUDA_DRIVER: return "cuda_driver";
    case OPPROF_CAT_KERNEL: return "kernel";
    case OPPROF_CAT_GPU_MEMCPY: return "gpu_memcpy";
    case OPPROF_CAT_GPU_MEMSET: return "gpu_memset";
    case OPPROF_CAT_MEMORY: return "cpu_instant_event";
    default: return "other";
    }
}

const char *opprof_dtype_name(int dtype)
{
    static const char *const names[OPPROF_DTYPE_COUNT_] = {
        "", "float", "double", "c10::Half", "c10::BFloat16", "signed char", "unsigned char",
        "short int", "int", "long int", "bool", "Scalar",
    };
    return dtype >= 0 && dtype < OPPROF_DTYPE_COUNT_ ? names[dtype] : "";
}

/* Shared by the GPU runtime's files: the device state, tensors, errors and
 * the helpers that describe tensors to opprof. */
#ifndef OPPROF_NN_CUDA_INTERNAL_H
#define OPPROF_NN_CUDA_INTERNAL_H

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "opprof.h"
#include "opprof_nn_cuda.h"

struct opprof_nn_cuda_tensor {
    float *data;
    int ndim;
    int64_t dims[4];
    int64_t numel;
    int refs;
    opprof_nn_cuda_tensor *owner; /* a view's owner (data belongs to it), else NULL */
};

typedef struct op_nc_state {
    int ready;
    int device;
    cudaStream_t stream;
    cudnnHandle_t cudnn;
    cublasHandle_t cublas;
    float *workspace; /* cuDNN's, grown on demand */
    size_t workspace_bytes;
    char name[320];
} op_nc_state;

extern op_nc_state op_nc;

/* Sets the thread's detail and returns status. */
int op_nc_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 0, or a failure naming `what` and CUDA's reason. */
int op_nc_cuda(cudaError_t e, const char *what);
int op_nc_cudnn(cudnnStatus_t s, const char *what);
int op_nc_cublas(cublasStatus_t s, const char *what);

/* A new tensor on the stream's pool (no device-wide synchronization). */
int op_nc_tensor_new(int ndim, const int64_t *dims, opprof_nn_cuda_tensor **out);
/* At least `bytes` of cuDNN workspace. */
int op_nc_workspace(size_t bytes);

/* t's dtype and dims as opprof records inputs. */
void op_nc_input(opprof_input *in, const opprof_nn_cuda_tensor *t);

/* A grid for n elements with a grid-stride loop. */
static inline unsigned op_nc_blocks(int64_t n)
{
    int64_t b = (n + 255) / 256;
    return (unsigned)(b < 1 ? 1 : (b > 65535 ? 65535 : b));
}

#endif

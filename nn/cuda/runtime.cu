/* The device, its stream and library handles, tensors and errors. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

op_nc_state op_nc;

static __thread char tl_error[512];

int op_nc_fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tl_error, sizeof tl_error, fmt, ap);
    va_end(ap);
    return status;
}

int op_nc_cuda(cudaError_t e, const char *what)
{
    if (e == cudaSuccess) return 0;
    int st = e == cudaErrorMemoryAllocation ? OPPROF_E_NOMEM
             : (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) ? OPPROF_E_NODEV
                                                                            : OPPROF_E_INVAL;
    return op_nc_fail(st, "%s: %s", what, cudaGetErrorString(e));
}

int op_nc_cudnn(cudnnStatus_t s, const char *what)
{
    if (s == CUDNN_STATUS_SUCCESS) return 0;
    return op_nc_fail(OPPROF_E_INVAL, "%s: %s", what, cudnnGetErrorString(s));
}

int op_nc_cublas(cublasStatus_t s, const char *what)
{
    if (s == CUBLAS_STATUS_SUCCESS) return 0;
    return op_nc_fail(OPPROF_E_INVAL, "%s: cuBLAS status %d", what, (int)s);
}

extern "C" const char *opprof_nn_cuda_error(void)
{
    return tl_error;
}

extern "C" int opprof_nn_cuda_init(int device)
{
    if (op_nc.ready) return device == op_nc.device ? 0 : op_nc_fail(OPPROF_E_INVAL, "already using device %d", op_nc.device);
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0)
        return op_nc_fail(OPPROF_E_NODEV, "no CUDA device: %s", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    if (device < 0 || device >= n) return op_nc_fail(OPPROF_E_NODEV, "no CUDA device %d (%d present)", device, n);
    int rc;
    if ((rc = op_nc_cuda(cudaSetDevice(device), "cudaSetDevice"))) return rc;
    cudaDeviceProp p;
    if ((rc = op_nc_cuda(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties"))) return rc;
    snprintf(op_nc.name, sizeof op_nc.name, "%s (sm_%d%d, %d SMs)", p.name, p.major, p.minor, p.multiProcessorCount);
    if ((rc = op_nc_cuda(cudaStreamCreateWithFlags(&op_nc.stream, cudaStreamNonBlocking), "cudaStreamCreate"))) return rc;
    if ((rc = op_nc_cudnn(cudnnCreate(&op_nc.cudnn), "cudnnCreate"))) return rc;
    if ((rc = op_nc_cudnn(cudnnSetStream(op_nc.cudnn, op_nc.stream), "cudnnSetStream"))) return rc;
    if ((rc = op_nc_cublas(cublasCreate(&op_nc.cublas), "cublasCreate"))) return rc;
    if ((rc = op_nc_cublas(cublasSetStream(op_nc.cublas, op_nc.stream), "cublasSetStream"))) return rc;
    /* Full float32 products: TF32 would drift past 1e-3 from the CPU runtime. */
    if ((rc = op_nc_cublas(cublasSetMathMode(op_nc.cublas, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode"))) return rc;
    op_nc.device = device;
    op_nc.ready = 1;
    return 0;
}

extern "C" const char *opprof_nn_cuda_device_name(void)
{
    return op_nc.ready ? op_nc.name : "";
}

extern "C" int opprof_nn_cuda_sync(void)
{
    if (!op_nc.ready) return op_nc_fail(OPPROF_E_INVAL, "opprof_nn_cuda_init was not called");
    return op_nc_cuda(cudaStreamSynchronize(op_nc.stream), "cudaStreamSynchronize");
}

extern "C" void opprof_nn_cuda_shutdown(void)
{
    if (!op_nc.ready) return;
    cudaStreamSynchronize(op_nc.stream);
    if (op_nc.workspace) cudaFree(op_nc.workspace);
    cublasDestroy(op_nc.cublas);
    cudnnDestroy(op_nc.cudnn);
    cudaStreamDestroy(op_nc.stream);
    memset(&op_nc, 0, sizeof op_nc);
}

int op_nc_workspace(size_t bytes)
{
    if (bytes <= op_nc.workspace_bytes) return 0;
    if (op_nc.workspace) cudaFreeAsync(op_nc.workspace, op_nc.stream);
    op_nc.workspace = NULL;
    op_nc.workspace_bytes = 0;
    int rc = op_nc_cuda(cudaMallocAsync((void **)&op_nc.workspace, bytes, op_nc.stream), "cudaMallocAsync (workspace)");
    if (!rc) op_nc.workspace_bytes = bytes;
    return rc;
}

int op_nc_tensor_new(int ndim, const int64_t *dims, opprof_nn_cuda_tensor **out)
{
    *out = NULL;
    if (!op_nc.ready) return op_nc_fail(OPPROF_E_INVAL, "opprof_nn_cuda_init was not called");
    if (ndim < 1 || ndim > 4) return op_nc_fail(OPPROF_E_INVAL, "tensors have 1 to 4 dims, not %d", ndim);
    opprof_nn_cuda_tensor *t = (opprof_nn_cuda_tensor *)calloc(1, sizeof *t);
    if (!t) return op_nc_fail(OPPROF_E_NOMEM, "out of memory");
    t->ndim = ndim;
    t->numel = 1;
    for (int i = 0; i < ndim; i++) {
        t->dims[i] = dims[i];
        t->numel *= dims[i];
    }
    t->refs = 1;
    /* The stream's pool: cudaMalloc would wait for the whole device. */
    int rc = op_nc_cuda(cudaMallocAsync((void **)&t->data, (size_t)(t->numel ? t->numel : 1) * sizeof(float), op_nc.stream),
                        "cudaMallocAsync");
    if (rc) {
        free(t);
        return rc;
    }
    *out = t;
    return 0;
}

extern "C" void opprof_nn_cuda_tensor_free(opprof_nn_cuda_tensor *t)
{
    if (!t || --t->refs > 0) return;
    if (t->owner)
        opprof_nn_cuda_tensor_free(t->owner);
    else
        cudaFreeAsync(t->data, op_nc.stream);
    free(t);
}

extern "C" int opprof_nn_cuda_tensor_dims(const opprof_nn_cuda_tensor *t, int64_t *dims)
{
    for (int i = 0; i < t->ndim; i++) dims[i] = t->dims[i];
    return t->ndim;
}

void op_nc_input(opprof_input *in, const opprof_nn_cuda_tensor *t)
{
    memset(in, 0, sizeof *in);
    in->dtype = OPPROF_DTYPE_FLOAT;
    in->ndim = (uint8_t)t->ndim;
    for (int i = 0; i < t->ndim; i++) in->dims[i] = t->dims[i];
}

OPPROF_SITE(site_to, "aten::to");
OPPROF_SITE(site_to_copy, "aten::_to_copy");
OPPROF_SITE(site_empty_strided, "aten::empty_strided");
OPPROF_SITE(site_copy_, "aten::copy_");

extern "C" int opprof_nn_cuda_upload(int ndim, const int64_t *dims, const float *host, opprof_nn_cuda_tensor **out)
{
    opprof_input in;
    memset(&in, 0, sizeof in);
    in.dtype = OPPROF_DTYPE_FLOAT;
    in.ndim = (uint8_t)(ndim > 0 && ndim <= 4 ? ndim : 0);
    for (int i = 0; i < in.ndim; i++) in.dims[i] = dims[i];
    opprof_begin_inputs(&site_to, &in, 1);
    opprof_begin_inputs(&site_to_copy, &in, 1);
    opprof_begin(&site_empty_strided);
    int rc = op_nc_tensor_new(ndim, dims, out);
    opprof_end(&site_empty_strided);
    if (!rc) {
        opprof_input io[2] = {in, in};
        opprof_begin_inputs(&site_copy_, io, 2);
        rc = op_nc_cuda(cudaMemcpyAsync((*out)->data, host, (size_t)(*out)->numel * sizeof(float),
                                        cudaMemcpyHostToDevice, op_nc.stream),
                        "cudaMemcpyAsync (to device)");
        opprof_end(&site_copy_);
        if (rc) {
            opprof_nn_cuda_tensor_free(*out);
            *out = NULL;
        }
    }
    opprof_end(&site_to_copy);
    opprof_end(&site_to);
    return rc;
}

extern "C" int opprof_nn_cuda_download(const opprof_nn_cuda_tensor *t, float *host, size_t n)
{
    size_t k = (size_t)t->numel < n ? (size_t)t->numel : n;
    opprof_input in[2];
    op_nc_input(&in[0], t);
    in[1] = in[0];
    opprof_begin_inputs(&site_to, in, 1);
    opprof_begin_inputs(&site_copy_, in, 2);
    int rc = op_nc_cuda(cudaMemcpyAsync(host, t->data, k * sizeof(float), cudaMemcpyDeviceToHost, op_nc.stream),
                        "cudaMemcpyAsync (to host)");
    if (!rc) rc = op_nc_cuda(cudaStreamSynchronize(op_nc.stream), "cudaStreamSynchronize");
    opprof_end(&site_copy_);
    opprof_end(&site_to);
    return rc;
}

static const opprof_nn_cuda_api g_api = {
    OPPROF_NN_CUDA_ABI,
    opprof_nn_cuda_init,
    opprof_nn_cuda_error,
    opprof_nn_cuda_device_name,
    opprof_nn_cuda_upload,
    opprof_nn_cuda_download,
    opprof_nn_cuda_tensor_dims,
    opprof_nn_cuda_tensor_free,
    opprof_nn_cuda_resnet18,
    opprof_nn_cuda_forward,
    opprof_nn_cuda_model_free,
    opprof_nn_cuda_sync,
    opprof_nn_cuda_shutdown,
};

extern "C" const opprof_nn_cuda_api *opprof_nn_cuda_get_api(void)
{
    return &g_api;
}

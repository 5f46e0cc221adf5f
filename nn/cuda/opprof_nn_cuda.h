/*
 * opprof_nn_cuda.h - the GPU side of the built-in model runtime.
 *
 * ResNet-18 inference on one CUDA device: convolutions on cuDNN, the
 * classifier's matrix product on cuBLAS, batch norm, ReLU, pooling and the
 * residual additions as CUDA C kernels. Every operator is a range named as
 * PyTorch names it (aten::conv2d > aten::cudnn_convolution, aten::linear >
 * aten::addmm, ...), so with OPPROF_ACTIVITY_CUDA each kernel is charged to
 * the operator that launched it. Like nn/, it uses include/opprof.h only.
 *
 * It is a shared library, libopprof_nn_cuda.so, that links the CUDA
 * libraries; programs that must run where CUDA is absent load it with
 * dlopen and take its functions from opprof_nn_cuda_get_api(). Its opprof
 * calls bind to the program's opprof (link the program with -rdynamic, or
 * with libopprof.so), so they land in the program's session.
 *
 * Functions return 0 or a negative opprof_status; opprof_nn_cuda_error()
 * gives the calling thread's detail. Work is queued on one stream: results
 * are ready after opprof_nn_cuda_sync() or a download.
 */
#ifndef OPPROF_NN_CUDA_H
#define OPPROF_NN_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OPPROF_NN_CUDA_ABI 1

typedef struct opprof_nn_cuda_tensor opprof_nn_cuda_tensor; /* float32, on the device, NCHW */
typedef struct opprof_nn_cuda_model opprof_nn_cuda_model;

/* Where a model's parameters come from: the values of the parameter or
 * buffer with that torchvision state_dict name ("layer1.0.bn1.running_var"),
 * numel floats in *numel; NULL when there is none. */
typedef const float *(*opprof_nn_cuda_param_fn)(void *ctx, const char *name, int64_t *numel);

typedef struct opprof_nn_cuda_api {
    int abi; /* OPPROF_NN_CUDA_ABI */
    /* Selects the device, makes the stream, cuDNN and cuBLAS handles.
     * OPPROF_E_NODEV with a detail when there is no usable device. */
    int (*init)(int device);
    const char *(*error)(void);
    /* A description of the device: "NVIDIA H200 (sm_90, 132 SMs)". */
    const char *(*device_name)(void);
    /* aten::to: a host array of the given dims, copied to the device. */
    int (*upload)(int ndim, const int64_t *dims, const float *host, opprof_nn_cuda_tensor **out);
    /* Copies t to host (n floats at most); waits for the stream. */
    int (*download)(const opprof_nn_cuda_tensor *t, float *host, size_t n);
    int (*tensor_dims)(const opprof_nn_cuda_tensor *t, int64_t *dims); /* returns ndim */
    void (*tensor_free)(opprof_nn_cuda_tensor *t);
    /* torchvision.models.resnet18(num_classes), eval mode, parameters from get. */
    int (*resnet18)(int num_classes, opprof_nn_cuda_param_fn get, void *ctx, opprof_nn_cuda_model **out);
    /* Forward pass (queued on the stream); *y is [N, num_classes]. */
    int (*forward)(opprof_nn_cuda_model *m, const opprof_nn_cuda_tensor *x, opprof_nn_cuda_tensor **y);
    void (*model_free)(opprof_nn_cuda_model *m);
    int (*sync)(void); /* waits for the stream */
    void (*shutdown)(void);
} opprof_nn_cuda_api;

/* The table of the functions below, for dlopen users. */
const opprof_nn_cuda_api *opprof_nn_cuda_get_api(void);

int opprof_nn_cuda_init(int device);
const char *opprof_nn_cuda_error(void);
const char *opprof_nn_cuda_device_name(void);
int opprof_nn_cuda_upload(int ndim, const int64_t *dims, const float *host, opprof_nn_cuda_tensor **out);
int opprof_nn_cuda_download(const opprof_nn_cuda_tensor *t, float *host, size_t n);
int opprof_nn_cuda_tensor_dims(const opprof_nn_cuda_tensor *t, int64_t *dims);
void opprof_nn_cuda_tensor_free(opprof_nn_cuda_tensor *t);
int opprof_nn_cuda_resnet18(int num_classes, opprof_nn_cuda_param_fn get, void *ctx, opprof_nn_cuda_model **out);
int opprof_nn_cuda_forward(opprof_nn_cuda_model *m, const opprof_nn_cuda_tensor *x, opprof_nn_cuda_tensor **y);
void opprof_nn_cuda_model_free(opprof_nn_cuda_model *m);
int opprof_nn_cuda_sync(void);
void opprof_nn_cuda_shutdown(void);

/* The operators, for tests that check each against a CPU reference. */
typedef struct opprof_nn_cuda_conv {
    int stride, padding;
} opprof_nn_cuda_conv;
int opprof_nn_cuda_conv2d(const opprof_nn_cuda_tensor *x, const opprof_nn_cuda_tensor *w,
                          const opprof_nn_cuda_conv *p, opprof_nn_cuda_tensor **y);
/* Eval-mode batch norm over dim 1 with running statistics. */
int opprof_nn_cuda_batch_norm(const opprof_nn_cuda_tensor *x, const opprof_nn_cuda_tensor *w,
                              const opprof_nn_cuda_tensor *b, const opprof_nn_cuda_tensor *mean,
                              const opprof_nn_cuda_tensor *var, float eps, opprof_nn_cuda_tensor **y);
int opprof_nn_cuda_relu_(opprof_nn_cuda_tensor *x);
int opprof_nn_cuda_add_(opprof_nn_cuda_tensor *a, const opprof_nn_cuda_tensor *b);
int opprof_nn_cuda_max_pool2d(const opprof_nn_cuda_tensor *x, int kernel, int stride, int padding,
                              opprof_nn_cuda_tensor **y);
/* To 1x1: the mean of each channel's plane. */
int opprof_nn_cuda_adaptive_avg_pool2d(const opprof_nn_cuda_tensor *x, opprof_nn_cuda_tensor **y);
/* aten::flatten(x, 1): a view of x (it keeps x's memory alive). */
int opprof_nn_cuda_flatten(const opprof_nn_cuda_tensor *x, opprof_nn_cuda_tensor **y);
/* y = x w^T + b; x [M,K], w [N,K], b [N]. */
int opprof_nn_cuda_linear(const opprof_nn_cuda_tensor *x, const opprof_nn_cuda_tensor *w,
                          const opprof_nn_cuda_tensor *b, opprof_nn_cuda_tensor **y);

#ifdef __cplusplus
}
#endif

#endif /* OPPROF_NN_CUDA_H */

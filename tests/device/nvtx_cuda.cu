/* An NVTX-annotated CUDA program that knows nothing of opprof: no opprof
 * header, no opprof library, no -finstrument-functions. scripts/gpu-check.sh
 * runs it under `opprof exec --activities cpu,cuda`, which must show its
 * NVTX ranges as operators and its kernels and copies charged to them.
 *
 *   nvtx_cuda [STEPS]       exit 0 when the device computed the right sums,
 *                           77 without a device */
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>

__global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

__global__ void add_one(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}

#define CK(call)                                                                            \
    do {                                                                                    \
        cudaError_t e_ = (call);                                                            \
        if (e_ != cudaSuccess) {                                                            \
            fprintf(stderr, "nvtx_cuda: %s: %s\n", #call, cudaGetErrorString(e_));          \
            return e_ == cudaErrorNoDevice || e_ == cudaErrorInsufficientDriver ? 77 : 1;   \
        }                                                                                   \
    } while (0)

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 10;
    const int n = 1 << 20;
    float *h = (float *)malloc(n * sizeof *h), *d = NULL;
    if (!h) return 1;
    for (int i = 0; i < n; i++) h[i] = 1.0f;

    nvtxRangePushA("setup");
    CK(cudaMalloc(&d, n * sizeof *d));
    CK(cudaMemcpy(d, h, n * sizeof *h, cudaMemcpyHostToDevice));
    nvtxRangePop();

    for (int s = 0; s < steps; s++) {
        nvtxRangePushA("step");
        nvtxRangePushA("scale");
        scale<<<(n + 255) / 256, 256>>>(d, 2.0f, n);
        nvtxRangePop();
        nvtxRangePushA("add");
        add_one<<<(n + 255) / 256, 256>>>(d, n);
        nvtxRangePop();
        nvtxRangePop();
    }
    CK(cudaGetLastError());

    nvtxRangePushA("download");
    CK(cudaMemcpy(h, d, n * sizeof *h, cudaMemcpyDeviceToHost));
    nvtxRangePop();
    CK(cudaFree(d));

    /* x -> 2x + 1, steps times, from 1 */
    double want = 1.0;
    for (int s = 0; s < steps; s++) want = 2.0 * want + 1.0;
    int bad = 0;
    for (int i = 0; i < n; i++) bad += h[i] != (float)want;
    free(h);
    printf("nvtx_cuda: %d steps, %s\n", steps, bad ? "WRONG RESULTS" : "results right");
    return bad ? 1 : 0;
}

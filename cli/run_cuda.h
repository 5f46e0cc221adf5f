/* `opprof run MODEL --device cuda`: the GPU runtime (nn/cuda), loaded with
 * dlopen so that the opprof command runs unchanged where CUDA is absent. */
#ifndef OPPROF_CLI_RUN_CUDA_H
#define OPPROF_CLI_RUN_CUDA_H

#include "opprof_nn.h"

typedef struct run_cuda run_cuda;

/* Loads the GPU runtime, builds ResNet-18 on device 0 with the CPU model's
 * weights and copies x there. Prints why on failure (no GPU runtime, no
 * device) and returns a negative status. */
int run_cuda_setup(opprof_nn_model *cpu, const opprof_nn_tensor *x, int num_classes, run_cuda **out);
/* One forward pass, waited for (so a step's kernels are in its step). */
int run_cuda_step(run_cuda *r);
/* "NVIDIA H200 (sm_90, 132 SMs)" */
const char *run_cuda_device(const run_cuda *r);
void run_cuda_free(run_cuda *r);

#endif

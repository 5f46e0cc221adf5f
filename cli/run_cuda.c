/* `opprof run MODEL --device cuda` (see run_cuda.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opprof.h"
#include "opprof_nn_cuda.h"
#include "run_cuda.h"

struct run_cuda {
    const opprof_nn_cuda_api *api;
    opprof_nn_cuda_model *model;
    opprof_nn_cuda_tensor *x;
};

#define LIB "libopprof_nn_cuda.so"

/* Beside the program's lib/ (the build tree and an installed prefix look
 * alike: bin/opprof, lib/libopprof_nn_cuda.so), then the loader's path. */
static const opprof_nn_cuda_api *load(void)
{
    char exe[4096], path[4200];
    void *h = NULL;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        snprintf(path, sizeof path, "%s/../lib/" LIB, dirname(exe));
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    if (!h) h = dlopen(LIB, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "opprof run: --device cuda: the GPU runtime could not be loaded (%s); "
                        "it is built where the CUDA toolkit is found\n", dlerror());
        return NULL;
    }
    const opprof_nn_cuda_api *(*get)(void) = (const opprof_nn_cuda_api *(*)(void))dlsym(h, "opprof_nn_cuda_get_api");
    const opprof_nn_cuda_api *api = get ? get() : NULL;
    if (!api || api->abi != OPPROF_NN_CUDA_ABI) {
        fprintf(stderr, "opprof run: --device cuda: %s is of another version\n", LIB);
        return NULL;
    }
    return api;
}

static const float *param(void *ctx, const char *name, int64_t *numel)
{
    opprof_nn_param *p = opprof_nn_model_find((opprof_nn_model *)ctx, name);
    if (!p) return NULL;
    *numel = p->value->numel;
    return p->value->data;
}

int run_cuda_setup(opprof_nn_model *cpu, const opprof_nn_tensor *x, int num_classes, run_cuda **out)
{
    *out = NULL;
    const opprof_nn_cuda_api *api = load();
    if (!api) return OPPROF_E_UNSUPPORTED;
    int rc = api->init(0);
    if (rc) {
        fprintf(stderr, "opprof run: --device cuda: %s\n", api->error());
        return rc;
    }
    run_cuda *r = calloc(1, sizeof *r);
    if (!r) return OPPROF_E_NOMEM;
    r->api = api;
    rc = api->resnet18(num_classes, param, cpu, &r->model);
    if (!rc) rc = api->upload(x->ndim, x->dims, x->data, &r->x);
    if (!rc) rc = api->sync();
    if (rc) {
        fprintf(stderr, "opprof run: --device cuda: %s\n", api->error());
        run_cuda_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

int run_cuda_step(run_cuda *r)
{
    opprof_nn_cuda_tensor *y = NULL;
    int rc = r->api->forward(r->model, r->x, &y);
    r->api->tensor_free(y);
    if (!rc) rc = r->api->sync();
    if (rc) fprintf(stderr, "opprof run: --device cuda: %s\n", r->api->error());
    return rc;
}

const char *run_cuda_device(const run_cuda *r)
{
    return r->api->device_name();
}

void run_cuda_free(run_cuda *r)
{
    if (!r) return;
    r->api->tensor_free(r->x);
    r->api->model_free(r->model);
    r->api->shutdown();
    free(r);
}

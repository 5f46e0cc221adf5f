/* Fixture values as runtime tensors, and the comparison the fixtures ask
 * for: max|a - b| / max|b| <= 1e-4. */
#ifndef OPPROF_TESTS_NN_FIXTURE_TENSOR_H
#define OPPROF_TESTS_NN_FIXTURE_TENSOR_H

#include <math.h>
#include <stdio.h>

#include "json.h"
#include "opprof_nn.h"

#define FIXTURE_TOLERANCE 1e-4

/* A tensor from {"shape": [...], "data": [...]}; NULL when malformed. */
static inline opprof_nn_tensor *fixture_tensor(const json *v)
{
    const json *shape = json_get(v, "shape"), *data = json_get(v, "data");
    if (!shape || !data || shape->type != JSON_ARR || data->type != JSON_ARR || shape->n > OPPROF_NN_MAX_DIMS)
        return NULL;
    int64_t dims[OPPROF_NN_MAX_DIMS];
    for (size_t i = 0; i < shape->n; i++) dims[i] = (int64_t)shape->items[i].num;
    float *buf = malloc((data->n ? data->n : 1) * sizeof(float));
    if (!buf) return NULL;
    for (size_t i = 0; i < data->n; i++) buf[i] = (float)data->items[i].num;
    opprof_nn_tensor *t = NULL;
    if (opprof_nn_tensor_from((int)shape->n, dims, buf, data->n, &t) != OPPROF_OK) t = NULL;
    free(buf);
    return t;
}

/* max|a-b| / max|b| of got against the expected {"shape", "data"}; a shape
 * mismatch or missing value is +inf. Element counts are compared, not dims,
 * so a scalar stored as [1] matches a one-element tensor. */
static inline double fixture_rel_error(const opprof_nn_tensor *got, const json *want)
{
    const json *data = json_get(want, "data");
    if (!got || !data || data->type != JSON_ARR || (size_t)got->numel != data->n) return INFINITY;
    double diff = 0, ref = 0;
    for (size_t i = 0; i < data->n; i++) {
        double b = data->items[i].num, d = fabs((double)got->data[i] - b);
        if (d > diff || d != d) diff = d;
        if (fabs(b) > ref) ref = fabs(b);
    }
    return ref > 0 ? diff / ref : diff;
}

#endif

/* The oneDNN side of the runtime: one engine and stream, primitives compiled
 * once per shape and kept, and the glue that moves a tensor between our
 * plain layout and the blocked layout a primitive prefers. */
#ifndef OPPROF_NN_BACKEND_H
#define OPPROF_NN_BACKEND_H

#include <oneapi/dnnl/dnnl.h>

#include "internal.h"

enum { OP_NN_MAX_PRIM_ARGS = 6 };

/* One argument of a primitive: what the caller holds (plain) and what the
 * primitive wants; reorder converts user -> want for inputs, want -> user
 * for outputs, and is NULL when they agree. */
typedef struct op_nn_prim_arg {
    int arg;          /* DNNL_ARG_* */
    int out;          /* written by the primitive */
    int keep;         /* a weight: its converted copy is kept on the tensor */
    dnnl_memory_desc_t user, want;
    dnnl_primitive_t reorder;
    size_t want_bytes;
} op_nn_prim_arg;

typedef struct op_nn_prim {
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    int nargs;
    op_nn_prim_arg args[OP_NN_MAX_PRIM_ARGS];
} op_nn_prim;

dnnl_engine_t op_nn_engine(void);

/* A plain (row-major) f32 descriptor of the given dims. */
void op_nn_md_plain(dnnl_memory_desc_t *md, int ndim, const int64_t *dims);

/* Fills p from pd (taken over): the primitive, and for each argument the
 * reorder between its plain form `user` and the form the primitive chose.
 * keep marks weights. Returns 0 or a negative status; p is cleared on error. */
int op_nn_prim_init(op_nn_prim *p, dnnl_primitive_desc_t pd, int nargs, const int *arg_ids,
                    const dnnl_memory_desc_t *users, const int *outs, const int *keep);
void op_nn_prim_destroy(op_nn_prim *p);

/* Runs p on the caller's plain buffers (data[i] for args[i]; NULL skips the
 * argument). keep_owner[i], when not NULL, is the tensor whose converted
 * copy is kept and reused while its version is unchanged. */
int op_nn_prim_run(const op_nn_prim *p, void *const *data, tensor *const *keep_owner);

/* Frees the converted copies kept on a tensor. */
void op_nn_packed_free(tensor *t);

/* Drops every compiled convolution (opprof_nn_shutdown). */
void op_nn_conv_cache_clear(void);

#endif

/* The record vocabulary: records' sites, input shapes and args (the record
 * format, capture/format.h) as the model's strings, each distinct one made
 * once per trace. The collector (collect.c) and the streamed trace's reader
 * (stream.c) name what they read through it. The ids are the trace's: use
 * one op_recnames per trace. */
#ifndef OPPROF_MODEL_RECNAMES_H
#define OPPROF_MODEL_RECNAMES_H

#include <stddef.h>
#include <stdint.h>

#include "capture/format.h"
#include "common/buf.h"
#include "common/map.h"
#include "model/model.h"

typedef struct op_recnames {
    op_map sites; /* site address -> name id */
    op_strtab raw; /* an inputs' payload, its count word first -> id */
    struct op_rawnames {
        uint32_t shapes; /* shape string id; UINT32_MAX not made yet */
        uint32_t types;  /* type string id */
    } * of;              /* by raw id */
    size_t cap;
    op_buf args; /* scratch for op_recnames_args */
} op_recnames;

/* 0, or -1 when out of memory. */
int op_recnames_init(op_recnames *n);
void op_recnames_fini(op_recnames *n);

/* The name id of site s (its first sight interns the name); UINT32_MAX
 * when out of memory. Each event costs a probe, not a hash of its name. */
uint32_t op_recnames_site_new(op_recnames *n, opprof_trace *tr, const opprof_site *s);
static inline uint32_t op_recnames_site(op_recnames *n, opprof_trace *tr, const opprof_site *s)
{
    uint32_t id;
    return op_map_get_u32(&n->sites, (uint64_t)(uintptr_t)s, &id) ? id : op_recnames_site_new(n, tr, s);
}

/* The shape and type strings of nin inputs whose descriptors and dims are
 * the payload_words words at desc; *raw (when not NULL) gets the payload's
 * id, for the records that refer back to it. 0, or -1 when out of memory. */
int op_recnames_inputs(op_recnames *n, opprof_trace *tr, const op_word *desc, unsigned nin, uint32_t payload_words,
                       uint32_t *shapes, uint32_t *types, uint32_t *raw);

/* The strings and the inputs of a payload by its raw id. */
static inline void op_recnames_raw_strings(const op_recnames *n, uint32_t raw, uint32_t *shapes, uint32_t *types)
{
    *shapes = n->of[raw].shapes;
    *types = n->of[raw].types;
}
unsigned op_recnames_raw_inputs(const op_recnames *n, uint32_t raw, opprof_input *in);

/* An args block at p (avail words at most): its length in words (0 when
 * malformed, UINT32_MAX when out of memory) and its JSON members' string
 * id, `"k": v, ...`, in *out. */
uint32_t op_recnames_args(op_recnames *n, opprof_trace *tr, const op_word *p, size_t avail, uint32_t *out);

/* The n inputs whose descriptors are at desc (their dims after them), in
 * opprof_input form; returns n. */
unsigned op_recnames_decode_inputs(const op_word *desc, unsigned n, opprof_input *in);

#endif

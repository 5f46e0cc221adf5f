/* The record vocabulary (recnames.h): sites, input shapes and args of
 * records as the model's strings. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonesc.h"
#include "common/vec.h"
#include "model/recnames.h"

uint32_t op_recnames_site_new(op_recnames *n, opprof_trace *tr, const opprof_site *s)
{
    const char *name = s->name ? s->name : "(null)";
    uint32_t id = op_trace_intern(tr, name, strlen(name));
    if (id == UINT32_MAX || op_map_put(&n->sites, (uint64_t)(uintptr_t)s, id) != 0) return UINT32_MAX;
    return id;
}

unsigned op_recnames_decode_inputs(const op_word *desc, unsigned n, opprof_input *in)
{
    const op_word *dims = desc + OP_DESC_WORDS(n);
    for (unsigned i = 0; i < n; i++) {
        op_desc_get(desc, i, &in[i].dtype, &in[i].ndim);
        for (unsigned k = 0; k < in[i].ndim; k++) in[i].dims[k] = (int64_t)OP_LOAD(dims++);
    }
    return n;
}

static int format_inputs(opprof_trace *tr, const opprof_input *in, unsigned n, uint32_t *shapes, uint32_t *types)
{
    op_buf s = {0}, ty = {0};
    char num[32];
    int rc = op_buf_puts(&s, "[");
    rc |= op_buf_puts(&ty, "[");
    for (unsigned i = 0; i < n; i++) {
        if (i) {
            rc |= op_buf_puts(&s, ", ");
            rc |= op_buf_puts(&ty, ", ");
        }
        rc |= op_buf_puts(&s, "[");
        for (unsigned k = 0; k < in[i].ndim; k++) {
            int len = snprintf(num, sizeof num, "%s%" PRId64, k ? ", " : "", in[i].dims[k]);
            rc |= op_buf_put(&s, num, (size_t)len);
        }
        rc |= op_buf_puts(&s, "]");
        rc |= op_buf_puts(&ty, "\"");
        rc |= op_buf_puts(&ty, opprof_dtype_name(in[i].dtype));
        rc |= op_buf_puts(&ty, "\"");
    }
    rc |= op_buf_puts(&s, "]");
    rc |= op_buf_puts(&ty, "]");
    if (rc == 0) {
        *shapes = op_trace_intern(tr, s.p, s.n);
        *types = op_trace_intern(tr, ty.p, ty.n);
        if (*shapes == UINT32_MAX || *types == UINT32_MAX) rc = -1;
    }
    op_buf_free(&s);
    op_buf_free(&ty);
    return rc;
}

int op_recnames_inputs(op_recnames *c, opprof_trace *tr, const op_word *desc, unsigned n, uint32_t payload_words,
                       uint32_t *shapes, uint32_t *types, uint32_t *raw)
{
    uint64_t buf[OP_MAX_RECORD_WORDS + 1];
    buf[0] = n;
    for (uint32_t i = 0; i < payload_words && i < OP_MAX_RECORD_WORDS; i++) buf[i + 1] = OP_LOAD(&desc[i]);
    uint32_t id = op_strtab_intern(&c->raw, (const char *)buf, (payload_words + 1) * sizeof(uint64_t));
    if (id == UINT32_MAX) return -1;
    if (id >= c->cap) {
        size_t old = c->cap;
        if (op_grow(&c->of, &c->cap, (size_t)id + 1, sizeof *c->of)) return -1;
        for (size_t i = old; i < c->cap; i++) c->of[i].shapes = UINT32_MAX;
    }
    struct op_rawnames *r = &c->of[id];
    if (r->shapes == UINT32_MAX) {
        opprof_input in[OPPROF_MAX_INPUTS];
        op_recnames_decode_inputs(desc, n, in);
        if (format_inputs(tr, in, n, &r->shapes, &r->types) != 0) {
            r->shapes = UINT32_MAX;
            return -1;
        }
    }
    *shapes = r->shapes;
    *types = r->types;
    if (raw) *raw = id;
    return 0;
}

unsigned op_recnames_raw_inputs(const op_recnames *c, uint32_t raw, opprof_input *in)
{
    uint64_t buf[OP_MAX_RECORD_WORDS + 1] = {0};
    size_t len = op_strtab_len(&c->raw, raw);
    if (len > sizeof buf) len = sizeof buf;
    memcpy(buf, op_strtab_get(&c->raw, raw), len);
    return len >= sizeof(uint64_t) && buf[0] <= OPPROF_MAX_INPUTS
               ? op_recnames_decode_inputs(buf + 1, (unsigned)buf[0], in)
               : 0;
}

/* Appends s as a JSON string. */
static int text_json_str(op_buf *b, const char *s)
{
    if (!s) s = "";
    size_t n = strlen(s);
    if (op_buf_reserve(b, op_json_escaped_max(n)) != 0) return -1;
    b->n = (size_t)(op_json_escape(b->p + b->n, s, n) - b->p);
    b->p[b->n] = '\0';
    return 0;
}

uint32_t op_recnames_args(op_recnames *names, opprof_trace *tr, const op_word *p, size_t avail, uint32_t *out)
{
    if (avail < 1) return 0;
    uint64_t head = OP_LOAD(&p[0]);
    unsigned n = OP_ARGS_COUNT(head);
    if (n > OPPROF_MAX_ARGS || avail < OP_ARGS_WORDS(n)) return 0;
    op_buf *b = &names->args;
    b->n = 0;
    int rc = 0;
    char num[40];
    for (unsigned i = 0; i < n; i++) {
        const char *key = (const char *)(uintptr_t)OP_LOAD(&p[1 + 2 * i]);
        uint64_t v = OP_LOAD(&p[2 + 2 * i]);
        if (i) rc |= op_buf_puts(b, ", ");
        rc |= text_json_str(b, key);
        rc |= op_buf_puts(b, ": ");
        switch (OP_ARGS_TYPE(head, i)) {
        case OPPROF_ARG_DOUBLE: {
            double d;
            memcpy(&d, &v, sizeof d);
            if (d != d || d - d != 0) {
                rc |= op_buf_puts(b, "null");
                break;
            }
            /* The shortest of 15 or 17 digits that reads back the same. */
            snprintf(num, sizeof num, "%.15g", d);
            if (strtod(num, NULL) != d) snprintf(num, sizeof num, "%.17g", d);
            rc |= op_buf_puts(b, num);
            break;
        }
        case OPPROF_ARG_STR: rc |= text_json_str(b, (const char *)(uintptr_t)v); break;
        default:
            snprintf(num, sizeof num, "%" PRId64, (int64_t)v);
            rc |= op_buf_puts(b, num);
            break;
        }
    }
    if (rc) return UINT32_MAX;
    *out = op_trace_intern(tr, op_buf_str(b), b->n);
    return *out == UINT32_MAX ? UINT32_MAX : OP_ARGS_WORDS(n);
}

int op_recnames_init(op_recnames *n)
{
    memset(n, 0, sizeof *n);
    return op_strtab_init(&n->raw) == 0 ? 0 : -1;
}

void op_recnames_fini(op_recnames *n)
{
    op_map_free(&n->sites);
    op_strtab_free(&n->raw);
    free(n->of);
    op_buf_free(&n->args);
}

/* One trace event object read into plain fields, before deciding what it is.
 *
 * Members arrive in any order, so "ph" and "cat" may come after the fields
 * they decide about. A field with the wrong type or an out-of-range value is
 * therefore not an error at once: it is noted, and becomes one only if the
 * event turns out to be one the reader keeps and the field matters to it
 * (docs/DESIGN.md, "Reading a trace": the fields of other events are never
 * read). */
#ifndef OPPROF_IMPORT_EVENT_H
#define OPPROF_IMPORT_EVENT_H

#include <stdint.h>

#include "common/buf.h"
#include "import/json.h"

typedef enum op_field {
    OP_F_NAME,
    OP_F_TS,
    OP_F_DUR,
    OP_F_PID,
    OP_F_TID,
    OP_F_ARGS,
    OP_F_CORR,      /* args.correlation */
    OP_F_EXT,       /* args["External id"] */
    OP_F_SHAPES,    /* args["Input Dims"] */
    OP_F_TYPES,     /* args["Input type"] */
    OP_F_FLOPS,     /* args.flops */
    OP_F_BYTES,     /* args.Bytes */
    OP_F_ADDR,      /* args.Addr */
    OP_F_TOTAL,     /* args["Total Allocated"] */
    OP_F_DEV_TYPE,  /* args["Device Type"] */
    OP_F_DEV_ID,    /* args["Device Id"] */
    OP_F_DEVICE,    /* args.device */
    OP_F_ARG_NAME,  /* args.name (metadata events) */
    OP_F_STACK,     /* args["Call stack"] */
    OP_F_COUNT_
} op_field;

/* cat: the category, or one of these. */
enum { OP_RCAT_NONE = -1 /* absent or null: legacy CPU op */, OP_RCAT_SKIP = -2 /* anything else */ };

typedef struct op_span {
    size_t off, len; /* into op_raw_event.text */
} op_span;

typedef struct op_raw_id {
    int is_str;
    int64_t num;
    op_span str;
} op_raw_id;

typedef struct op_raw_event {
    uint32_t has; /* 1 << op_field: present and valid */
    uint32_t bad; /* 1 << op_field: present but unusable */
    const char *bad_what[OP_F_COUNT_];
    uint64_t bad_off[OP_F_COUNT_];
    char ph;      /* 0 unless a one-letter string */
    int cat;
    op_span name, shapes, types, arg_name, stack;
    op_raw_id pid, tid;
    int64_t ts_ns, dur_ns, corr, ext, bytes, total, dev_type, dev_id, device;
    uint64_t flops, addr;
    uint64_t off; /* where the event object starts */
    op_buf text;  /* the strings the spans point into */
    op_buf extra; /* the args not read into fields, as JSON members `"k": v, ...` */
} op_raw_event;

/* Reads the members of the object whose '{' was just returned, through its
 * '}'. Returns 0, or -1 with the parser's error set. */
int op_read_event(op_json *j, op_raw_event *ev);

/* The field as the trace spells it ("ts", "args.External id"). */
const char *op_field_name(op_field f);

static inline const char *op_raw_str(const op_raw_event *ev, op_span s)
{
    return ev->text.p + s.off;
}

static inline int op_raw_has(const op_raw_event *ev, op_field f)
{
    return (ev->has >> f) & 1u;
}

#endif

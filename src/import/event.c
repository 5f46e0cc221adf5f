/* Reading one trace event object into an op_raw_event (see event.h). */
#include "import/event.h"

#include "common/error.h"
#include "common/satmath.h"
#include "import/number.h"
#include "import/value_text.h"

const char *op_field_name(op_field f)
{
    static const char *const names[OP_F_COUNT_] = {
        "name", "ts", "dur", "pid", "tid", "args", "args.correlation", "args.External id",
        "args.Input Dims", "args.Input type", "args.flops", "args.Bytes", "args.Addr",
        "args.Total Allocated", "args.Device Type", "args.Device Id", "args.device", "args.name", "args.Call stack",
    };
    return (unsigned)f < OP_F_COUNT_ ? names[f] : "?";
}

static void mark_bad(op_raw_event *ev, op_field f, uint64_t off, const char *what)
{
    ev->has &= ~(1u << f);
    if (ev->bad & (1u << f)) return;
    ev->bad |= 1u << f;
    ev->bad_what[f] = what;
    ev->bad_off[f] = off;
}

static void mark_ok(op_raw_event *ev, op_field f)
{
    ev->has |= 1u << f;
    ev->bad &= ~(1u << f); /* a later duplicate member wins, as in Python's json */
}

static int keep_text(op_json *j, op_raw_event *ev, op_span *sp)
{
    sp->off = ev->text.n;
    sp->len = j->n;
    if (op_buf_put(&ev->text, j->s, j->n) != 0 || op_buf_putc(&ev->text, '\0') != 0) {
        op_json_fail(j, OPPROF_E_NOMEM, j->off, "out of memory");
        return -1;
    }
    return 0;
}

/* The value of a member that must be a string. */
static int str_field(op_json *j, op_raw_event *ev, op_jtok t, op_field f, op_span *sp, const char *what)
{
    if (t == OP_JT_NULL) return 0;
    if (t != OP_JT_STRING) {
        mark_bad(ev, f, j->off, what);
        return op_json_skip(j, t) == OP_JT_ERROR ? -1 : 0;
    }
    if ((f == OP_F_NAME || f == OP_F_ARG_NAME) && j->n > OP_IMPORT_MAX_NAME) {
        mark_bad(ev, f, j->off, "is longer than 1 MiB");
        return 0;
    }
    if (keep_text(j, ev, sp) != 0) return -1;
    mark_ok(ev, f);
    return 0;
}

enum { NUM_TIME, NUM_INT, NUM_U64 };

static int num_field(op_json *j, op_raw_event *ev, op_jtok t, op_field f, int kind, void *out, const char *what)
{
    if (t == OP_JT_NULL) return 0; /* null is absent, as args.get() sees it */
    if (t != OP_JT_NUMBER) {
        mark_bad(ev, f, j->off, what);
        return op_json_skip(j, t) == OP_JT_ERROR ? -1 : 0;
    }
    int rc;
    switch (kind) {
    case NUM_TIME: /* microseconds -> ns, within the range where sums of times fit */
        rc = op_num_scaled(j->s, j->n, 3, out);
        if (rc == 0 && (*(int64_t *)out > OP_TIME_LIMIT_NS || *(int64_t *)out < -OP_TIME_LIMIT_NS)) {
            mark_bad(ev, f, j->off, "is out of range (more than 2^61 ns, about 73 years, from 0)");
            return 0;
        }
        break;
    case NUM_INT: rc = op_num_int(j->s, j->n, out); break;
    default: rc = op_num_u64(j->s, j->n, out); break;
    }
    if (rc != 0) mark_bad(ev, f, j->off, kind == NUM_INT ? "is not an integer in range" : "is out of range");
    else mark_ok(ev, f);
    return 0;
}

/* A pid or tid: an integer, or a string such as "CPU functions". */
static int id_field(op_json *j, op_raw_event *ev, op_jtok t, op_field f, op_raw_id *id)
{
    if (t == OP_JT_STRING) {
        id->is_str = 1;
        if (keep_text(j, ev, &id->str) != 0) return -1;
        mark_ok(ev, f);
        return 0;
    }
    id->is_str = 0;
    return num_field(j, ev, t, f, NUM_INT, &id->num, "is neither an integer nor a string");
}

static int array_text(op_json *j, op_raw_event *ev, op_jtok t, op_field f, op_span *sp, const char *what)
{
    if (t == OP_JT_NULL) return 0;
    if (t != OP_JT_ARR_BEGIN) {
        mark_bad(ev, f, j->off, what);
        return op_json_skip(j, t) == OP_JT_ERROR ? -1 : 0;
    }
    sp->off = ev->text.n;
    if (op_json_value_text(j, t, &ev->text) == OP_JT_ERROR) return -1;
    sp->len = ev->text.n - sp->off;
    if (op_buf_putc(&ev->text, '\0') != 0) {
        op_json_fail(j, OPPROF_E_NOMEM, j->off, "out of memory");
        return -1;
    }
    mark_ok(ev, f);
    return 0;
}

/* The args kept as text in the model's args: those of collectives, as
 * Kineto writes them for PyTorch's (and opprof's MPI layer for its own).
 * Keeping every unknown arg would cost a third of the reader's speed on a
 * Kineto trace, for kernel details no table shows. */
static int kept_arg(const op_json *j)
{
    static const struct {
        const char *s;
        size_t n;
    } keys[] = {
#define K(lit) {lit, sizeof(lit) - 1}
        K("Collective name"), K("In msg nelems"), K("Out msg nelems"), K("In msg bytes"), K("Out msg bytes"),
        K("Group size"), K("dtype"), K("In split size"), K("Out split size"), K("Global rank start"),
        K("Global rank stride"), K("Process Group Name"), K("Process Group Description"),
        K("Process Group Ranks"), K("Rank"), K("Src Rank"), K("Dst Rank"), K("Seq"), K("Tag"),
        K("Request id"), K("Completed"), K("Is asynchronized op"), K("Root"),
#undef K
    };
    /* Most keys of a Kineto trace are none of these: one test of their
     * length turns nearly all of them away. */
    static const uint32_t lengths = 1u << 3 | 1u << 4 | 1u << 5 | 1u << 8 | 1u << 9 | 1u << 10 | 1u << 12 |
                                    1u << 13 | 1u << 14 | 1u << 15 | 1u << 17 | 1u << 18 | 1u << 19 | 1u << 25;
    if (j->n > 31 || !((lengths >> j->n) & 1u)) return 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (op_json_key_is(j, keys[i].s, keys[i].n)) return 1;
    return 0;
}

static int read_args(op_json *j, op_raw_event *ev, op_jtok t)
{
    /* A later "args" replaces an earlier one whole, as in Python's json. */
    const uint32_t inside = ((1u << OP_F_COUNT_) - 1) & ~((1u << (OP_F_ARGS + 1)) - 1);
    ev->has &= ~inside;
    ev->bad &= ~inside;
    if (t != OP_JT_OBJ_BEGIN) {
        if (t != OP_JT_NULL) mark_bad(ev, OP_F_ARGS, j->off, "is not an object");
        return op_json_skip(j, t) == OP_JT_ERROR ? -1 : 0;
    }
    mark_ok(ev, OP_F_ARGS);
    for (;;) {
        t = op_json_next(j);
        if (t == OP_JT_OBJ_END) return 0;
        if (t != OP_JT_KEY) return -1;
        /* The key's text is gone once the value is read: pick the field first. */
        int f = -1;
        switch (j->n) {
        case 4:
            if (OP_JSON_KEY_IS(j, "Addr")) f = OP_F_ADDR;
            else if (OP_JSON_KEY_IS(j, "name")) f = OP_F_ARG_NAME;
            break;
        case 5:
            if (OP_JSON_KEY_IS(j, "flops")) f = OP_F_FLOPS;
            else if (OP_JSON_KEY_IS(j, "Bytes")) f = OP_F_BYTES;
            break;
        case 6:
            if (OP_JSON_KEY_IS(j, "device")) f = OP_F_DEVICE;
            break;
        case 9:
            if (OP_JSON_KEY_IS(j, "Device Id")) f = OP_F_DEV_ID;
            break;
        case 10:
            if (OP_JSON_KEY_IS(j, "Input Dims")) f = OP_F_SHAPES;
            else if (OP_JSON_KEY_IS(j, "Input type")) f = OP_F_TYPES;
            else if (OP_JSON_KEY_IS(j, "Call stack")) f = OP_F_STACK;
            break;
        case 11:
            if (OP_JSON_KEY_IS(j, "correlation")) f = OP_F_CORR;
            else if (OP_JSON_KEY_IS(j, "External id")) f = OP_F_EXT;
            else if (OP_JSON_KEY_IS(j, "Device Type")) f = OP_F_DEV_TYPE;
            break;
        case 15:
            if (OP_JSON_KEY_IS(j, "Total Allocated")) f = OP_F_TOTAL;
            break;
        default: break;
        }
        int keep = f < 0 && kept_arg(j);
        if (keep && ((ev->extra.n && op_buf_put(&ev->extra, ", ", 2) != 0) ||
                     op_json_quoted(&ev->extra, j->s, j->n) != 0 || op_buf_put(&ev->extra, ": ", 2) != 0)) {
            op_json_fail(j, OPPROF_E_NOMEM, j->off, "out of memory");
            return -1;
        }
        t = op_json_next(j);
        if (t == OP_JT_ERROR) return -1;
        if (keep) {
            if (op_json_value_text(j, t, &ev->extra) == OP_JT_ERROR) return -1;
            continue;
        }
        int rc = 0;
        switch (f) {
        case OP_F_ADDR: rc = num_field(j, ev, t, OP_F_ADDR, NUM_U64, &ev->addr, "is not a number"); break;
        case OP_F_ARG_NAME: rc = str_field(j, ev, t, OP_F_ARG_NAME, &ev->arg_name, "is not a string"); break;
        case OP_F_STACK: rc = str_field(j, ev, t, OP_F_STACK, &ev->stack, "is not a string"); break;
        case OP_F_FLOPS: rc = num_field(j, ev, t, OP_F_FLOPS, NUM_U64, &ev->flops, "is not a number"); break;
        case OP_F_BYTES: rc = num_field(j, ev, t, OP_F_BYTES, NUM_INT, &ev->bytes, "is not a number"); break;
        case OP_F_DEVICE: rc = num_field(j, ev, t, OP_F_DEVICE, NUM_INT, &ev->device, "is not a number"); break;
        case OP_F_DEV_ID: rc = num_field(j, ev, t, OP_F_DEV_ID, NUM_INT, &ev->dev_id, "is not a number"); break;
        case OP_F_SHAPES: rc = array_text(j, ev, t, OP_F_SHAPES, &ev->shapes, "is not an array"); break;
        case OP_F_TYPES: rc = array_text(j, ev, t, OP_F_TYPES, &ev->types, "is not an array"); break;
        case OP_F_CORR: rc = num_field(j, ev, t, OP_F_CORR, NUM_INT, &ev->corr, "is not a number"); break;
        case OP_F_EXT: rc = num_field(j, ev, t, OP_F_EXT, NUM_INT, &ev->ext, "is not a number"); break;
        case OP_F_DEV_TYPE: rc = num_field(j, ev, t, OP_F_DEV_TYPE, NUM_INT, &ev->dev_type, "is not a number"); break;
        case OP_F_TOTAL: rc = num_field(j, ev, t, OP_F_TOTAL, NUM_INT, &ev->total, "is not a number"); break;
        default: rc = op_json_skip(j, t) == OP_JT_ERROR ? -1 : 0; break;
        }
        if (rc != 0) return -1;
    }
}

static int read_cat(op_json *j, op_raw_event *ev, op_jtok t)
{
    static const struct {
        const char *name;
        size_t n;
        int cat;
    } cats[] = {
        {"cpu_op", 6, OPPROF_CAT_CPU_OP},           {"user_annotation", 15, OPPROF_CAT_USER_ANNOTATION},
        {"cuda_runtime", 12, OPPROF_CAT_CUDA_RUNTIME}, {"cuda_driver", 11, OPPROF_CAT_CUDA_DRIVER},
        {"kernel", 6, OPPROF_CAT_KERNEL},           {"gpu_memcpy", 10, OPPROF_CAT_GPU_MEMCPY},
        {"gpu_memset", 10, OPPROF_CAT_GPU_MEMSET},
    };
    ev->cat = OP_RCAT_SKIP;
    if (t == OP_JT_NULL) ev->cat = OP_RCAT_NONE;
    if (t != OP_JT_STRING) return op_json_skip(j, t) == OP_JT_ERROR ? -1 : 0;
    for (size_t k = 0; k < sizeof cats / sizeof cats[0]; k++)
        if (op_json_key_is(j, cats[k].name, cats[k].n)) ev->cat = cats[k].cat;
    return 0;
}

int op_read_event(op_json *j, op_raw_event *ev)
{
    ev->has = ev->bad = 0;
    ev->ph = 0;
    ev->cat = OP_RCAT_NONE;
    ev->text.n = 0;
    ev->extra.n = 0;
    ev->off = j->off;
    for (;;) {
        op_jtok t = op_json_next(j);
        if (t == OP_JT_OBJ_END) return 0;
        if (t != OP_JT_KEY) return -1;
        int which = -1; /* 0 ph, 1 cat, 2 args, else an op_field + 3 */
        switch (j->n) {
        case 2:
            if (OP_JSON_KEY_IS(j, "ph")) which = 0;
            else if (OP_JSON_KEY_IS(j, "ts")) which = 3 + OP_F_TS;
            break;
        case 3:
            if (OP_JSON_KEY_IS(j, "cat")) which = 1;
            else if (OP_JSON_KEY_IS(j, "dur")) which = 3 + OP_F_DUR;
            else if (OP_JSON_KEY_IS(j, "pid")) which = 3 + OP_F_PID;
            else if (OP_JSON_KEY_IS(j, "tid")) which = 3 + OP_F_TID;
            break;
        case 4:
            if (OP_JSON_KEY_IS(j, "name")) which = 3 + OP_F_NAME;
            else if (OP_JSON_KEY_IS(j, "args")) which = 2;
            break;
        default: break;
        }
        t = op_json_next(j);
        if (t == OP_JT_ERROR) return -1;
        int rc = 0;
        switch (which) {
        case 0:
            ev->ph = t == OP_JT_STRING && j->n == 1 ? j->s[0] : 0;
            rc = op_json_skip(j, t) == OP_JT_ERROR ? -1 : 0;
            break;
        case 1: rc = read_cat(j, ev, t); break;
        case 2: rc = read_args(j, ev, t); break;
        case 3 + OP_F_TS: rc = num_field(j, ev, t, OP_F_TS, NUM_TIME, &ev->ts_ns, "is not a number"); break;
        case 3 + OP_F_DUR: rc = num_field(j, ev, t, OP_F_DUR, NUM_TIME, &ev->dur_ns, "is not a number"); break;
        case 3 + OP_F_PID: rc = id_field(j, ev, t, OP_F_PID, &ev->pid); break;
        case 3 + OP_F_TID: rc = id_field(j, ev, t, OP_F_TID, &ev->tid); break;
        case 3 + OP_F_NAME: rc = str_field(j, ev, t, OP_F_NAME, &ev->name, "is not a string"); break;
        default: rc = op_json_skip(j, t) == OP_JT_ERROR ? -1 : 0; break;
        }
        if (rc != 0) return -1;
    }
}

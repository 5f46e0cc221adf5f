/* The text of PyTorch 1.13's key_averages().table(): the same columns,
 * widths, units, rules and footer, byte for byte, so that its users read
 * ours without learning anything (torch/autograd/profiler_util.py,
 * _build_table, is the definition). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/keyavg.h"
#include "analysis/pyfmt.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/textesc.h"
#include "common/writeall.h"
#include "model/model.h"

#define MAX_COLS 20
#define NAME_MAX_W 55
#define SHAPES_MAX_W 80
#define SRC_MAX_W 75
#define COL_W 12
#define SPACING 2
#define MAX_STACK_ENTRY 5

typedef struct cell {
    const char *s;
    size_t len;
} cell;

typedef struct layout {
    size_t width[MAX_COLS];
    int left[MAX_COLS];
    const char *head[MAX_COLS];
    size_t ncol, line_len;
    int has_dev, has_mem, has_shapes, has_stack, has_flops, has_oncpu;
    size_t shapes_w, src_w;
    double flops_scale;
    char flops_head[32];
    double self_cpu_us, self_dev_us; /* the totals percentages are taken of */
} layout;

static void add_col(layout *l, const char *head, size_t width, int left)
{
    l->head[l->ncol] = head;
    l->width[l->ncol] = width;
    l->left[l->ncol] = left;
    l->line_len += width + SPACING;
    l->ncol++;
}

static cell str_cell(const char *s)
{
    return (cell){s, strlen(s)};
}

/* One line: each cell padded to its column ('{: >w}' or '{: <w}', never
 * cut) and followed by two spaces, as Python's row_format does. */
static void emit(op_buf *b, const layout *l, const cell *c)
{
    for (size_t i = 0; i < l->ncol; i++) {
        size_t w = op_utf8_len(c[i].s, c[i].len);
        size_t pad = w < l->width[i] ? l->width[i] - w : 0;
        if (!l->left[i]) op_buf_fill(b, ' ', pad);
        op_buf_put(b, c[i].s, c[i].len);
        if (l->left[i]) op_buf_fill(b, ' ', pad);
        op_buf_fill(b, ' ', SPACING);
    }
    op_buf_put(b, "\n", 1);
}

static void emit_rule(op_buf *b, const layout *l)
{
    for (size_t i = 0; i < l->ncol; i++) {
        op_buf_fill(b, '-', l->width[i]);
        op_buf_fill(b, ' ', SPACING);
    }
    op_buf_put(b, "\n", 1);
}

/* The length of the longest stack frame of a row (code points). */
static size_t longest_frame(const char *stack)
{
    size_t best = 0;
    while (*stack) {
        size_t n = strcspn(stack, "\n");
        size_t w = op_utf8_len(stack, n);
        if (w > best) best = w;
        stack += n + (stack[n] == '\n');
    }
    return best;
}

/* Enough for the NAME_MAX_W characters a column shows, 4 bytes each. */
#define NAME_BUF (NAME_MAX_W * 4 + 8)

/* The name as a person should see it: control characters and bidi
 * overrides escaped (common/textesc.h), cut to what a column can show. */
static const char *display_name(const char *name, char *buf, size_t *len)
{
    size_t n = strlen(name);
    if (!op_text_needs_escape(name, n)) {
        *len = n;
        return name;
    }
    op_text_escape(name, n, buf, NAME_BUF);
    *len = strlen(buf);
    return buf;
}

static void plan(layout *l, const opprof_key_averages *ka, unsigned columns)
{
    memset(l, 0, sizeof *l);
    l->has_oncpu = (columns & OPPROF_COLUMNS_ONCPU) != 0;
    size_t name_w = 0, shapes_w = 0, src_w = 0;
    uint64_t min_flops = 0;
    for (size_t i = 0; i < ka->n; i++) {
        const opprof_avg_row *r = &ka->rows[i].r;
        char shown[NAME_BUF];
        size_t len;
        const char *name = display_name(r->name, shown, &len);
        size_t w = op_utf8_len(name, len);
        if (w > name_w) name_w = w;
        w = op_utf8_len(r->input_shapes, strlen(r->input_shapes));
        if (w > shapes_w) shapes_w = w;
        if (*r->input_shapes && strcmp(r->input_shapes, "[]") != 0) l->has_shapes = 1;
        if (*r->stack) {
            l->has_stack = 1;
            w = longest_frame(r->stack);
            if (w > src_w) src_w = w;
        }
        if (r->self_device_time_total_ns > 0) l->has_dev = 1;
        if (ka->rows[i].device) l->self_dev_us += op_ns_to_us(r->self_device_time_total_ns);
        if (r->flops && (!min_flops || r->flops < min_flops)) min_flops = r->flops;
    }
    l->has_mem = (ka->trace_options & OP_TRACE_MEMORY) != 0;
    l->has_flops = (ka->trace_options & OP_TRACE_FLOPS) && min_flops;
    l->self_cpu_us = op_ns_to_us(ka->sum_self_cpu_ns);
    name_w = name_w + 4 < NAME_MAX_W ? name_w + 4 : NAME_MAX_W;
    l->shapes_w = shapes_w + 4 < SHAPES_MAX_W ? shapes_w + 4 : SHAPES_MAX_W;
    l->src_w = src_w + 4 < SRC_MAX_W ? src_w + 4 : SRC_MAX_W;

    add_col(l, "Name", name_w, 0);
    static const char *const cpu[] = {"Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"};
    static const char *const dev[] = {"Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"};
    for (size_t i = 0; i < 5; i++) add_col(l, cpu[i], COL_W, 0);
    static const char *const oncpu[] = {"Self On-CPU", "On-CPU total", "Wait total"};
    for (size_t i = 0; l->has_oncpu && i < 3; i++) add_col(l, oncpu[i], COL_W, 0);
    for (size_t i = 0; l->has_dev && i < 4; i++) add_col(l, dev[i], COL_W, 0);
    if (l->has_mem) {
        add_col(l, "CPU Mem", COL_W, 0);
        add_col(l, "Self CPU Mem", COL_W, 0);
    }
    add_col(l, "# of Calls", COL_W, 0);
    if (l->has_shapes) add_col(l, "Input Shapes", l->shapes_w, 0);
    if (l->has_stack) add_col(l, "Source Location", l->src_w, 1);
    if (l->has_flops) {
        const char *h;
        l->flops_scale = op_flops_scale(min_flops, &h);
        snprintf(l->flops_head, sizeof l->flops_head, "Total %s", h);
        add_col(l, l->flops_head, COL_W, 0);
    }
    l->line_len -= SPACING;
}

typedef struct scratch {
    char name[NAME_BUF];
    char shown[NAME_BUF];
    char num[MAX_COLS][64];
    char frame[SRC_MAX_W * 4 + 8];
} scratch;

static cell time_cell(char *buf, double us)
{
    op_fmt_time(buf, 64, us);
    return str_cell(buf);
}

/* trim_path: a frame wider than its column keeps its tail, the first three
 * characters of which become "...". */
static cell frame_cell(scratch *sc, const char *s, size_t n, size_t width)
{
    size_t cps = op_utf8_len(s, n);
    if (cps <= width) return (cell){s, n};
    size_t off = op_utf8_offset(s, n, cps - width);
    s += off;
    n -= off;
    if (width <= 3) return (cell){s, n};
    off = op_utf8_offset(s, n, 3);
    memcpy(sc->frame, "...", 3);
    memcpy(sc->frame + 3, s + off, n - off);
    return (cell){sc->frame, n - off + 3};
}

static void emit_row(op_buf *b, const layout *l, const op_avg *a, scratch *sc)
{
    const opprof_avg_row *r = &a->r;
    cell c[MAX_COLS];
    size_t k = 0, nn = 0;
    size_t nlen;
    const char *name = display_name(r->name, sc->shown, &nlen);
    if (op_utf8_len(name, nlen) >= NAME_MAX_W - 3) {
        size_t cut = op_utf8_offset(name, nlen, NAME_MAX_W - 3);
        memcpy(sc->name, name, cut);
        memcpy(sc->name + cut, "...", 4);
        c[k++] = str_cell(sc->name);
    } else {
        c[k++] = (cell){name, nlen};
    }
    double self_us = op_ns_to_us(r->self_cpu_time_total_ns), tot_us = op_ns_to_us(r->cpu_time_total_ns);
    double cnt = (double)r->count;
    op_fmt_share(sc->num[nn], 64, self_us, l->self_cpu_us);
    c[k++] = str_cell(sc->num[nn++]);
    c[k++] = time_cell(sc->num[nn++], self_us);
    op_fmt_share(sc->num[nn], 64, tot_us, l->self_cpu_us);
    c[k++] = str_cell(sc->num[nn++]);
    c[k++] = time_cell(sc->num[nn++], tot_us);
    c[k++] = time_cell(sc->num[nn++], r->count ? tot_us / cnt : 0.0);
    if (l->has_oncpu) {
        double on_us = op_ns_to_us(a->oncpu_ns);
        c[k++] = time_cell(sc->num[nn++], op_ns_to_us(a->self_oncpu_ns));
        c[k++] = time_cell(sc->num[nn++], on_us);
        c[k++] = time_cell(sc->num[nn++], tot_us > on_us ? tot_us - on_us : 0.0);
    }
    if (l->has_dev) {
        double sd = op_ns_to_us(r->self_device_time_total_ns), td = op_ns_to_us(r->device_time_total_ns);
        c[k++] = time_cell(sc->num[nn++], sd);
        op_fmt_share(sc->num[nn], 64, sd, l->self_dev_us);
        c[k++] = str_cell(sc->num[nn++]);
        c[k++] = time_cell(sc->num[nn++], td);
        c[k++] = time_cell(sc->num[nn++], r->count ? td / cnt : 0.0);
    }
    if (l->has_mem) {
        op_fmt_memory(sc->num[nn], 64, r->cpu_memory_usage);
        c[k++] = str_cell(sc->num[nn++]);
        op_fmt_memory(sc->num[nn], 64, r->self_cpu_memory_usage);
        c[k++] = str_cell(sc->num[nn++]);
    }
    snprintf(sc->num[nn], 64, "%" PRIu64, r->count);
    c[k++] = str_cell(sc->num[nn++]);
    if (l->has_shapes) {
        size_t sl = strlen(r->input_shapes);
        c[k++] = (cell){r->input_shapes, op_utf8_offset(r->input_shapes, sl, l->shapes_w)};
    }
    /* PyTorch puts the FLOPs value before the source location although its
     * headers have them the other way round; the text follows the values */
    if (l->has_flops) {
        if (r->flops == 0)
            snprintf(sc->num[nn], 64, "--");
        else
            snprintf(sc->num[nn], 64, "%8.3f", (double)r->flops * l->flops_scale);
        c[k++] = str_cell(sc->num[nn++]);
    }
    if (l->has_stack) c[k++] = frame_cell(sc, r->stack, strcspn(r->stack, "\n"), l->src_w);
    emit(b, l, c);
    if (!l->has_stack) return;
    /* further frames under the row in the last column, then an empty line */
    for (size_t i = 0; i < l->ncol; i++) c[i] = (cell){"", 0};
    const char *f = r->stack + strcspn(r->stack, "\n");
    for (int i = 1; i < MAX_STACK_ENTRY && *f; i++) {
        f++;
        size_t n = strcspn(f, "\n");
        c[l->ncol - 1] = frame_cell(sc, f, n, l->src_w);
        emit(b, l, c);
        f += n;
    }
    c[l->ncol - 1] = (cell){"", 0};
    emit(b, l, c);
}

static int build(const opprof_key_averages *ka, const char *sort_by, int row_limit, unsigned columns, op_buf *b)
{
    if (!ka) return op_fail(OPPROF_E_INVAL, "opprof_table: NULL key averages");
    op_avg_greater_fn greater = NULL;
    if (sort_by && !(greater = op_avg_sort_key(sort_by))) return OPPROF_E_INVAL;
    if (ka->n) {
        uint32_t *order = malloc(ka->n * sizeof *order);
        scratch *sc = malloc(sizeof *sc);
        int rc = order && sc ? op_avg_sorted_order(ka->rows, ka->n, greater, order)
                             : op_fail(OPPROF_E_NOMEM, "out of memory printing %zu rows", ka->n);
        if (rc == 0) {
            layout l;
            plan(&l, ka, columns);
            char t1[64], t2[64];
            if (ka->opt.top_level_only) {
                op_buf_fill(b, '=', l.line_len);
                op_buf_puts(b, "\nThis report only display top-level ops statistics\n");
            }
            emit_rule(b, &l);
            cell h[MAX_COLS];
            for (size_t i = 0; i < l.ncol; i++) h[i] = str_cell(l.head[i]);
            emit(b, &l, h);
            emit_rule(b, &l);
            for (size_t i = 0; i < ka->n && (row_limit < 0 || i < (size_t)row_limit); i++)
                emit_row(b, &l, &ka->rows[order[i]], sc);
            emit_rule(b, &l);
            op_fmt_time(t1, sizeof t1, l.self_cpu_us);
            op_buf_printf(b, "Self CPU time total: %s\n", t1);
            if (l.has_dev) {
                op_fmt_time(t2, sizeof t2, l.self_dev_us);
                op_buf_printf(b, "Self CUDA time total: %s\n", t2);
            }
        }
        free(order);
        free(sc);
        if (rc) return rc;
    }
    if (ka->trace_options & OP_TRACE_SATURATED)
        op_buf_puts(b, "Saturated: some sums passed the 64-bit range and are shown at its limit\n");
    if (ka->comp_inside_ns > 0 || ka->comp_outside_ns > 0)
        op_buf_printf(b,
                      "Overhead compensation: %.1f ns per recorded call taken out (%.1f ns of each range's own "
                      "time, %.1f ns of its caller's)\n",
                      ka->comp_inside_ns + ka->comp_outside_ns, ka->comp_inside_ns, ka->comp_outside_ns);
    if (ka->dropped) {
        op_buf_printf(b, "Dropped events: %" PRIu64, ka->dropped);
        if (ka->attempted) op_buf_printf(b, " of %" PRIu64, ka->attempted);
        op_buf_puts(b, " (not recorded: the figures above leave them out)\n");
    }
    if (b->failed) return op_fail(OPPROF_E_NOMEM, "out of memory printing a table of %zu rows", ka->n);
    return OPPROF_OK;
}

int opprof_table_string(const opprof_key_averages *ka, const char *sort_by, int row_limit, char **out)
{
    if (!out) return op_fail(OPPROF_E_INVAL, "opprof_table_string: NULL out");
    *out = NULL;
    op_buf b = {0};
    int rc = build(ka, sort_by, row_limit, 0, &b);
    if (rc != OPPROF_OK) {
        op_buf_free(&b);
        return rc;
    }
    if (!(*out = op_buf_take(&b))) return op_fail(OPPROF_E_NOMEM, "out of memory printing a table");
    return OPPROF_OK;
}

int opprof_table_write(const opprof_key_averages *ka, const char *sort_by, int row_limit, FILE *f)
{
    return opprof_table_write_columns(ka, sort_by, row_limit, 0, f);
}

int opprof_table_write_columns(const opprof_key_averages *ka, const char *sort_by, int row_limit, unsigned columns,
                               FILE *f)
{
    if (!f) return op_fail(OPPROF_E_INVAL, "opprof_table_write: NULL file");
    if (columns & ~(unsigned)OPPROF_COLUMNS_ONCPU)
        return op_fail(OPPROF_E_INVAL, "opprof_table_write_columns: unknown column bits 0x%x", columns);
    op_buf b = {0};
    int rc = build(ka, sort_by, row_limit, columns, &b);
    if (rc == OPPROF_OK && b.n && op_write_all_stream(f, b.p, b.n) != 0)
        rc = op_fail(OPPROF_E_IO, "could not write the table (%zu bytes): %s", b.n, strerror(errno));
    op_buf_free(&b);
    return rc;
}

/* The operators view's rows: events grouped by name (ProfilerStep#N as
 * ProfilerStep*), and by name and input shapes, with the sums the key
 * averages hold. Both groupings go into the page so the toggle is instant.
 * Host events give CPU time, memory and FLOPs; device events are rows of
 * their own with device time; memory moved outside any operator is the
 * "[memory]" row, as PyTorch shows it. */
#include <stdlib.h>
#include <string.h>

#include "report/rep.h"

typedef struct ops_row {
    const char *name, *shapes;
    uint64_t count, flops;
    int64_t self_cpu, cpu, self_dev, dev, mem, self_mem;
} ops_row;

typedef struct ops_rows {
    ops_row *r;
    size_t n, cap;
} ops_rows;

static ops_row *add_row(ops_rows *rows, const char *name, const char *shapes)
{
    if (rows->n == rows->cap) {
        size_t c = rows->cap ? rows->cap * 2 : 64;
        ops_row *p = realloc(rows->r, c * sizeof *p);
        if (!p) return NULL;
        rows->r = p;
        rows->cap = c;
    }
    ops_row *row = &rows->r[rows->n++];
    memset(row, 0, sizeof *row);
    row->name = name;
    row->shapes = shapes;
    return row;
}

#define STEP_KEY 0xffffffffu /* every ProfilerStep#N shares one group */

static int collect(const opprof_trace *t, int by_shape, ops_rows *rows)
{
    rep_map map = {0};
    for (size_t i = 0; i < t->nev; i++) {
        const op_event *e = &t->ev[i];
        int dev = op_cat_is_device(e->cat);
        if (!dev && !op_cat_is_host(e->cat)) continue;
        const char *name = op_strtab_get(&t->str, e->name);
        uint32_t nkey = e->name;
        if (!strncmp(name, "ProfilerStep#", 13)) {
            nkey = STEP_KEY;
            name = "ProfilerStep*";
        }
        uint64_t key = (uint64_t)nkey << 32 | (by_shape ? e->shapes : 0);
        uint32_t *slot = rep_map_slot(&map, key);
        if (!slot) goto oom;
        if (!*slot) {
            if (!add_row(rows, name, by_shape ? op_strtab_get(&t->str, e->shapes) : "")) goto oom;
            *slot = (uint32_t)rows->n;
        }
        ops_row *r = &rows->r[*slot - 1];
        r->count++;
        if (dev) {
            r->self_dev += e->dur_ns;
            r->dev += e->dur_ns;
            continue;
        }
        r->self_cpu += e->self_ns;
        r->cpu += e->dur_ns;
        r->self_dev += e->dev_self_ns;
        r->dev += e->dev_total_ns;
        r->mem += e->mem_total;
        r->self_mem += e->mem_self;
        r->flops += e->flops;
    }
    ops_row *outside = NULL;
    for (size_t i = 0; i < t->nmem; i++) {
        if (t->mem[i].op >= 0) continue;
        if (!outside && !(outside = add_row(rows, "[memory]", ""))) goto oom;
        outside->count++;
        outside->mem += t->mem[i].bytes;
        outside->self_mem += t->mem[i].bytes;
    }
    rep_map_free(&map);
    return 0;
oom:
    rep_map_free(&map);
    return -1;
}

#define COLUMN(key, expr)                                                     \
    do {                                                                      \
        rep_puts(o, ",\"" key "\":[");                                        \
        for (size_t i = 0; i < rows->n; i++) {                                \
            const ops_row *r = &rows->r[i];                                   \
            rep_printf(o, "%s%lld", i ? "," : "", (long long)(expr));         \
        }                                                                     \
        rep_puts(o, "]");                                                     \
    } while (0)

static void rows_json(rep_out *o, const ops_rows *rows, int by_shape)
{
    rep_printf(o, "{\"n\":%zu,\"name\":[", rows->n);
    for (size_t i = 0; i < rows->n; i++) {
        if (i) rep_puts(o, ",");
        rep_json_cstr(o, rows->r[i].name);
    }
    rep_puts(o, "]");
    if (by_shape) {
        rep_puts(o, ",\"shapes\":[");
        for (size_t i = 0; i < rows->n; i++) {
            if (i) rep_puts(o, ",");
            rep_json_cstr(o, rows->r[i].shapes);
        }
        rep_puts(o, "]");
    }
    COLUMN("count", r->count);
    COLUMN("selfCpu", r->self_cpu);
    COLUMN("cpu", r->cpu);
    COLUMN("selfDev", r->self_dev);
    COLUMN("dev", r->dev);
    COLUMN("mem", r->mem);
    COLUMN("selfMem", r->self_mem);
    COLUMN("flops", r->flops);
    rep_puts(o, "}");
}

int rep_ops_json(rep_out *o, const rep_trace *rt)
{
    for (int by_shape = 0; by_shape < 2; by_shape++) {
        ops_rows rows = {0};
        if (collect(rt->t, by_shape, &rows) != 0) {
            free(rows.r);
            return -1;
        }
        rep_puts(o, by_shape ? ",\"opsByShape\":" : ",\"ops\":");
        rows_json(o, &rows, by_shape);
        free(rows.r);
    }
    return 0;
}

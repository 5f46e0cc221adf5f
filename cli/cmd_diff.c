/* opprof diff BASE TEST: what got slower between two runs. Both traces are
 * read and grouped into key averages as `opprof summary` does; rows are
 * matched by name (and input shapes with --group-by-input-shape) and listed
 * by the absolute change of one metric, largest first, with totals. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "opprof_trace.h"
#include "opts.h"
#include "vocab.h"

#define FIELD(f) offsetof(cli_avg_opts, f)

static const cli_option OPTIONS[] = {
    {"--sort", "KEY", CLI_OPT_STRING, FIELD(sort), 0, 0,
     "cpu_time_total|self_cpu_time_total|count|device_time_total|self_device_time_total",
     "the change the rows are ordered by, largest absolute change first:" CLI_CONT
     "cpu_time_total (default), self_cpu_time_total, count, device_time_total," CLI_CONT
     "self_device_time_total; the change % column is this key's"},
    CLI_ROW_ROW_LIMIT(FIELD(row_limit), ""),
    CLI_ROW_GROUP_BY_INPUT_SHAPE(FIELD(by_shape), "match rows by name and input shapes", ""),
    CLI_ROW_GROUP_BY_STACK(FIELD(by_stack), "; rows match by" CLI_CONT "name and those frames, of the traces' \"Call stack\" (--with-stack)", ""),
    CLI_ROW_TOP_LEVEL(FIELD(top_level)),
    {"--format", "FMT", CLI_OPT_STRING, FIELD(format), 0, 0, "table|csv|json", "table (default), csv or json"},
    CLI_ROW_MAX_EVENTS_READ(FIELD(max_events)),
};

static const cli_spec SPEC = {
    "diff",
    "BASE TEST [options]",
    "Compares two traces (any format 'opprof summary' reads): per operator, the change in calls,\n"
    "self and total CPU time and device time from BASE to TEST, largest change first, with totals.\n"
    "Self time is the operator's own, total time includes the operators it called (PyTorch's\n"
    "Self CPU and CPU total); change = TEST - BASE. A trace that dropped events (the event cap)\n"
    "or was cut short by a signal is named under the table: its calls and times are too low.\n"
    "Exit status: 0 done, 1 the output could not be written or memory ran out, 2 bad arguments or a\n"
    "trace that cannot be read (one line on stderr).",
    OPTIONS,
    sizeof OPTIONS / sizeof *OPTIONS,
    2,
    2,
    0,
};

enum { M_COUNT, M_SELF_CPU, M_CPU, M_SELF_DEV, M_DEV, M_N };

static const char *const METRIC_KEYS[M_N] = {"count", "self_cpu_time_total", "cpu_time_total",
                                             "self_device_time_total", "device_time_total"};
static const char *const SIDE[2] = {"base", "test"};
static const char *const METRIC_HEAD[M_N] = {"Calls", "Self CPU", "CPU total", "Self CUDA", "CUDA total"};

static int g_saturated; /* a sum or change passed the 64-bit range: the footer says so */

/* Sums and changes of trace numbers that are each valid can pass the 64-bit
 * range; they stay at its limit, as the key averages' own sums do. */
static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (!__builtin_add_overflow(a, b, &r)) return r;
    g_saturated = 1;
    return b > 0 ? INT64_MAX : INT64_MIN;
}

static int64_t sat_sub(int64_t a, int64_t b)
{
    int64_t r;
    if (!__builtin_sub_overflow(a, b, &r)) return r;
    g_saturated = 1;
    return b < 0 ? INT64_MAX : INT64_MIN;
}

typedef struct side {
    const char *path;
    opprof_trace *t;
    opprof_key_averages *ka;
    opprof_avg_row *rows;
    size_t n;
    int64_t dev_total; /* device time of the whole trace */
    int64_t self_total; /* self CPU time of the whole trace: what opprof summary's footer gives */
} side;

typedef struct drow {
    const char *name, *shapes, *stack;
    int64_t v[2][M_N]; /* base, test */
    int in[2];
} drow;

static int64_t metric(const opprof_avg_row *r, int m)
{
    switch (m) {
    case M_COUNT: return (int64_t)r->count;
    case M_SELF_CPU: return r->self_cpu_time_total_ns;
    case M_CPU: return r->cpu_time_total_ns;
    case M_SELF_DEV: return r->self_device_time_total_ns;
    default: return r->device_time_total_ns;
    }
}

static int by_key(const void *pa, const void *pb)
{
    const opprof_avg_row *a = pa, *b = pb;
    int c = strcmp(a->name, b->name);
    if (!c) c = strcmp(a->input_shapes, b->input_shapes);
    return c ? c : strcmp(a->stack, b->stack);
}

static int load_side(const char *path, long max_events, const opprof_avg_options *ao, side *s)
{
    s->path = path;
    int rc = cli_load_table("diff", path, max_events, ao, &s->t);
    if (rc != CLI_OK) return rc;
    if (ao->group_by_stack_n && !cli_trace_has_stacks(s->t)) cli_note_no_stacks("diff", path);
    if (opprof_key_averages(s->t, ao, &s->ka) != 0) {
        fprintf(stderr, "opprof diff: %s\n", opprof_last_error());
        return CLI_FAIL;
    }
    s->n = opprof_key_averages_count(s->ka);
    s->rows = calloc(s->n ? s->n : 1, sizeof *s->rows);
    if (!s->rows) {
        fprintf(stderr, "opprof diff: out of memory comparing %zu rows of %s\n", s->n, path);
        return CLI_FAIL;
    }
    for (size_t i = 0; i < s->n; i++) opprof_key_averages_row(s->ka, i, &s->rows[i]);
    qsort(s->rows, s->n, sizeof *s->rows, by_key);
    size_t nev = opprof_trace_event_count(s->t);
    for (size_t i = 0; i < nev; i++) {
        opprof_event e;
        if (opprof_trace_event(s->t, i, &e) != 0) continue;
        if (e.flags & OPPROF_EVENT_DEVICE) s->dev_total = sat_add(s->dev_total, e.dur_ns);
        else s->self_total = sat_add(s->self_total, e.self_ns);
    }
    /* A .pftrace folded into sums (host ranges only: device activity is read into the model). */
    for (size_t i = 0; !nev && i < s->n; i++) s->self_total = sat_add(s->self_total, s->rows[i].self_cpu_time_total_ns);
    return CLI_OK;
}

/* Merges the two sorted row lists into one row per key. */
static drow *join(const side *a, const side *b, size_t *n)
{
    drow *d = calloc(a->n + b->n + 1, sizeof *d);
    if (!d) return NULL;
    size_t i = 0, j = 0, k = 0;
    while (i < a->n || j < b->n) {
        int c = i == a->n ? 1 : j == b->n ? -1 : by_key(&a->rows[i], &b->rows[j]);
        const opprof_avg_row *src = c <= 0 ? &a->rows[i] : &b->rows[j];
        d[k].name = src->name;
        d[k].shapes = src->input_shapes;
        d[k].stack = src->stack;
        for (int m = 0; m < M_N; m++) {
            if (c <= 0) d[k].v[0][m] = metric(&a->rows[i], m);
            if (c >= 0) d[k].v[1][m] = metric(&b->rows[j], m);
            /* a key average that saturated sits at the limit */
            for (int x = 0; x < 2; x++)
                if (d[k].v[x][m] == INT64_MAX || d[k].v[x][m] == INT64_MIN) g_saturated = 1;
        }
        d[k].in[0] = c <= 0;
        d[k].in[1] = c >= 0;
        i += c <= 0;
        j += c >= 0;
        k++;
    }
    *n = k;
    return d;
}

static int g_sort_metric;
static int64_t abs_change(const drow *r, int m)
{
    int64_t c = sat_sub(r->v[1][m], r->v[0][m]);
    return c < 0 ? sat_sub(0, c) : c;
}

static int by_change(const void *pa, const void *pb)
{
    const drow *a = pa, *b = pb;
    int64_t x = abs_change(a, g_sort_metric), y = abs_change(b, g_sort_metric);
    if (x != y) return x < y ? 1 : -1;
    int c = strcmp(a->name, b->name);
    if (!c) c = strcmp(a->shapes, b->shapes);
    return c ? c : strcmp(a->stack, b->stack);
}

/* PyTorch's _format_time, with a sign for changes. */
static void fmt_time(char *out, size_t n, int64_t ns, int sign)
{
    double us = (double)ns / 1000.0, a = us < 0 ? -us : us;
    const char *s = sign && ns > 0 ? "+" : "";
    if (a >= 1e6) snprintf(out, n, "%s%.3fs", s, us / 1e6);
    else if (a >= 1e3) snprintf(out, n, "%s%.3fms", s, us / 1e3);
    else snprintf(out, n, "%s%.3fus", s, us);
}

static void fmt_value(char *out, size_t n, int m, int64_t v, int sign)
{
    if (m == M_COUNT) snprintf(out, n, sign && v > 0 ? "+%lld" : "%lld", (long long)v);
    else fmt_time(out, n, v, sign);
}

static void fmt_pct(char *out, size_t n, int64_t base, int64_t test)
{
    if (base == 0) snprintf(out, n, test ? "new" : "0.00%%");
    else snprintf(out, n, "%+.2f%%", 100.0 * (double)(test - base) / (double)base);
}

/* A cell of `w` columns: text cut with "..." when longer, right-aligned. */
static void cell(FILE *f, const char *s, int w, int left)
{
    int len = (int)strlen(s);
    if (len > w) fprintf(f, "%.*s...  ", w - 3, s);
    else fprintf(f, left ? "%-*s  " : "%*s  ", w, s);
}

/* A heading centred over the `w` columns of a metric's three cells,
 * between dashes, so that each base/test/change triple reads as one. */
static void group_head(FILE *f, const char *label, int w)
{
    int len = (int)strlen(label) + 2, left = (w - len) / 2, right = w - len - left;
    fprintf(f, "%.*s %s %.*s  ", left, "--------------------------------------------", label, right,
            "--------------------------------------------");
}

/* The traces' names, and what a reader must know before trusting the
 * numbers: events dropped at the cap, a run cut short by a signal. */
static void write_sides(FILE *f, const side *s)
{
    for (int i = 0; i < 2; i++) fprintf(f, "%s: %s\n", i ? "Test" : "Base", s[i].path);
}

static void write_warnings(FILE *f, const side *s)
{
    for (int i = 0; i < 2; i++) {
        uint64_t dropped = opprof_trace_dropped(s[i].t);
        int cut = opprof_trace_incomplete(s[i].t);
        if (!dropped && !cut) continue;
        fprintf(f, "Warning: %s (%s)", SIDE[i], s[i].path);
        if (dropped) fprintf(f, " dropped %llu events at its event cap", (unsigned long long)dropped);
        if (cut) fprintf(f, "%s was cut short by a signal", dropped ? " and" : "");
        fprintf(f, ": its calls and times are too low\n");
    }
}

/* The innermost frame of a row's stack (its first line), escaped, for
 * the table's Source Location column. */
static void top_frame(const char *stack, char *out, size_t cap)
{
    char first[512];
    snprintf(first, sizeof first, "%.*s", (int)strcspn(stack, "\n"), stack);
    opprof_escape_name(first, out, cap);
}

static void write_table(FILE *f, const drow *d, size_t n, const cli_avg_opts *o, int sort, int dev, const side *sides)
{
    int name_w = 4, shape_w = 12, stack_w = 15, by_shape = o->by_shape, by_stack = o->by_stack > 0;
    long limit = o->row_limit;
    char buf[256];
    size_t shown = limit < 0 || (size_t)limit > n ? n : (size_t)limit;
    for (size_t i = 0; i < shown; i++) {
        int l = (int)opprof_escape_name(d[i].name, NULL, 0), s = (int)strlen(d[i].shapes);
        if (l > name_w) name_w = l;
        if (s > shape_w) shape_w = s;
        top_frame(d[i].stack, buf, sizeof buf);
        if ((int)strlen(buf) > stack_w) stack_w = (int)strlen(buf);
    }
    if (name_w > 55) name_w = 55;
    if (shape_w > 80) shape_w = 80;
    if (stack_w > 60) stack_w = 60;
    int metrics[] = {M_COUNT, M_SELF_CPU, M_CPU, M_SELF_DEV, M_DEV}, nm = dev ? 5 : 3;
    char rule[4096];
    size_t r = 0;
    int widths = name_w + 2 + (by_shape ? shape_w + 2 : 0) + (by_stack ? stack_w + 2 : 0) + nm * 3 * 15 + 15;
    for (int i = 0; i < widths && r + 1 < sizeof rule; i++) rule[r++] = '-';
    rule[r] = '\0';
    write_sides(f, sides);
    fprintf(f, "%s\n", rule);
    cell(f, "", name_w, 0);
    if (by_shape) cell(f, "", shape_w, 0);
    if (by_stack) cell(f, "", stack_w, 0);
    for (int k = 0; k < nm; k++) group_head(f, METRIC_HEAD[metrics[k]], 3 * 15 - 2);
    cell(f, METRIC_HEAD[sort], 13, 0);
    fputc('\n', f);
    cell(f, "Name", name_w, 1);
    if (by_shape) cell(f, "Input Shapes", shape_w, 1);
    if (by_stack) cell(f, "Source Location", stack_w, 1);
    for (int k = 0; k < nm; k++) {
        cell(f, "base", 13, 0);
        cell(f, "test", 13, 0);
        cell(f, "change", 13, 0);
    }
    cell(f, "change %", 13, 0);
    fprintf(f, "\n%s\n", rule);
    for (size_t i = 0; i < shown; i++) {
        opprof_escape_name(d[i].name, buf, sizeof buf); /* shown escaped, cut to the column */
        cell(f, buf, name_w, 1);
        if (by_shape) cell(f, d[i].shapes, shape_w, 1);
        if (by_stack) {
            top_frame(d[i].stack, buf, sizeof buf);
            cell(f, buf, stack_w, 1);
        }
        for (int k = 0; k < nm; k++) {
            int m = metrics[k];
            fmt_value(buf, sizeof buf, m, d[i].v[0][m], 0), cell(f, d[i].in[0] ? buf : "-", 13, 0);
            fmt_value(buf, sizeof buf, m, d[i].v[1][m], 0), cell(f, d[i].in[1] ? buf : "-", 13, 0);
            fmt_value(buf, sizeof buf, m, sat_sub(d[i].v[1][m], d[i].v[0][m]), 1), cell(f, buf, 13, 0);
        }
        fmt_pct(buf, sizeof buf, d[i].v[0][sort], d[i].v[1][sort]);
        cell(f, buf, 13, 0);
        fputc('\n', f);
    }
    fprintf(f, "%s\n", rule);
    /* The totals are the whole traces' (as opprof summary's footer), not
     * the rows': with --top-level the rows leave the nested time out. */
    int64_t cpu[2] = {sides[0].self_total, sides[1].self_total}, calls[2] = {0, 0};
    size_t only[2] = {0, 0};
    for (size_t i = 0; i < n; i++)
        for (int s = 0; s < 2; s++) {
            calls[s] = sat_add(calls[s], d[i].v[s][M_COUNT]);
            only[s] += d[i].in[s] && !d[i].in[1 - s];
        }
    char x[64], y[64], z[64], p[32];
    fmt_time(x, sizeof x, cpu[0], 0), fmt_time(y, sizeof y, cpu[1], 0), fmt_time(z, sizeof z, sat_sub(cpu[1], cpu[0]), 1);
    fmt_pct(p, sizeof p, cpu[0], cpu[1]);
    fprintf(f, "Self CPU time total: base %s, test %s, diff %s (%s)\n", x, y, z, p);
    if (dev) {
        fmt_time(x, sizeof x, sides[0].dev_total, 0), fmt_time(y, sizeof y, sides[1].dev_total, 0);
        fmt_time(z, sizeof z, sat_sub(sides[1].dev_total, sides[0].dev_total), 1);
        fmt_pct(p, sizeof p, sides[0].dev_total, sides[1].dev_total);
        fprintf(f, "Self CUDA time total: base %s, test %s, diff %s (%s)\n", x, y, z, p);
    }
    fprintf(f, "Calls: base %lld, test %lld%s; %zu rows, %zu only in base, %zu only in test; sorted by |change| of %s\n",
            (long long)calls[0], (long long)calls[1], o->top_level ? " (top-level events)" : "", n, only[0], only[1],
            METRIC_KEYS[sort]);
    fprintf(f, "Self: the operator's own time; total: with the operators it called; change: test - base\n");
    if (g_saturated) fprintf(f, "Saturated: some sums passed the 64-bit range and are shown at its limit\n");
    write_warnings(f, sides);
}

static void write_value(FILE *f, int m, int64_t v)
{
    if (m == M_COUNT) fprintf(f, "%lld", (long long)v);
    else fprintf(f, "%.3f", (double)v / 1000.0);
}

static const char *const COLUMN[M_N] = {"count", "self_cpu_time_total_us", "cpu_time_total_us",
                                        "self_device_time_total_us", "device_time_total_us"};

static void write_csv(FILE *f, const drow *d, size_t n, int by_stack)
{
    fputs(by_stack ? "name,input_shapes,stack" : "name,input_shapes", f);
    for (int m = 0; m < M_N; m++) fprintf(f, ",%s_base,%s_test,%s_diff", COLUMN[m], COLUMN[m], COLUMN[m]);
    fputc('\n', f);
    for (size_t i = 0; i < n; i++) {
        opprof_write_csv_field(f, d[i].name);
        fputc(',', f);
        opprof_write_csv_field(f, d[i].shapes);
        if (by_stack) {
            fputc(',', f);
            opprof_write_csv_field(f, d[i].stack);
        }
        for (int m = 0; m < M_N; m++)
            for (int k = 0; k < 3; k++) {
                fputc(',', f);
                write_value(f, m, k < 2 ? d[i].v[k][m] : sat_sub(d[i].v[1][m], d[i].v[0][m]));
            }
        fputc('\n', f);
    }
}

static void write_json(FILE *f, const drow *d, size_t n, int sort, int by_stack, const side *s)
{
    fprintf(f, "{\"sort\": \"%s\"", METRIC_KEYS[sort]);
    for (int i = 0; i < 2; i++) {
        fprintf(f, ", \"%s\": {\"path\": ", SIDE[i]);
        opprof_write_json_string(f, s[i].path);
        fprintf(f, ", \"dropped_events\": %llu, \"incomplete\": %s}", (unsigned long long)opprof_trace_dropped(s[i].t),
                opprof_trace_incomplete(s[i].t) ? "true" : "false");
    }
    fputs(", \"rows\": [", f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",\n  {\"name\": " : "\n  {\"name\": ", f);
        opprof_write_json_string(f, d[i].name);
        fputs(", \"input_shapes\": ", f);
        opprof_write_json_string(f, d[i].shapes);
        if (by_stack) {
            fputs(", \"stack\": ", f);
            opprof_write_json_string(f, d[i].stack);
        }
        fprintf(f, ", \"in_base\": %s, \"in_test\": %s", d[i].in[0] ? "true" : "false", d[i].in[1] ? "true" : "false");
        for (int m = 0; m < M_N; m++)
            for (int k = 0; k < 3; k++) {
                fprintf(f, ", \"%s_%s\": ", COLUMN[m], k == 0 ? "base" : k == 1 ? "test" : "diff");
                write_value(f, m, k < 2 ? d[i].v[k][m] : sat_sub(d[i].v[1][m], d[i].v[0][m]));
            }
        fputc('}', f);
    }
    fputs(n ? "\n]}\n" : "]}\n", f);
}

int cmd_diff(int argc, char **argv)
{
    cli_avg_opts o = CLI_AVG_OPTS_INIT;
    const char *pos[2];
    int npos, rc = cli_parse(&SPEC, argc, argv, &o, pos, &npos);
    if (rc) return rc > 0 ? CLI_OK : CLI_BAD_INPUT;
    int sort = 0;
    while (strcmp(METRIC_KEYS[sort], o.sort) != 0) sort++; /* cli_parse checked the choice */
    opprof_avg_options ao = {o.by_shape, (int)o.by_stack, o.top_level};
    side s[2] = {{0}, {0}};
    drow *d = NULL;
    size_t n = 0;
    rc = load_side(pos[0], o.max_events, &ao, &s[0]);
    if (rc == CLI_OK) rc = load_side(pos[1], o.max_events, &ao, &s[1]);
    if (rc == CLI_OK && !(d = join(&s[0], &s[1], &n))) rc = CLI_FAIL;
    if (rc == CLI_OK) {
        g_sort_metric = sort;
        qsort(d, n, sizeof *d, by_change);
        int dev = s[0].dev_total || s[1].dev_total;
        if (strcmp(o.format, "table")) write_warnings(stderr, s); /* the table says it under the rows */
        if (!strcmp(o.format, "csv")) write_csv(stdout, d, n, o.by_stack > 0);
        else if (!strcmp(o.format, "json")) write_json(stdout, d, n, sort, o.by_stack > 0, s);
        else write_table(stdout, d, n, &o, sort, dev, s);
        if (fflush(stdout) != 0) {
            fprintf(stderr, "opprof diff: cannot write the output\n");
            rc = CLI_FAIL;
        }
    }
    free(d);
    for (int i = 0; i < 2; i++) {
        free(s[i].rows);
        opprof_key_averages_free(s[i].ka);
        opprof_trace_free(s[i].t);
    }
    return rc;
}

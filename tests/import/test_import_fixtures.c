/* Real traces through the reader, checked against references computed
 * outside this project: the kineto/ traces against ref_summary.py's
 * *.expected.csv (names, counts, self/total CPU and device time within
 * 0.001 us), the torch-traces/ against the per-operator numbers in the tables
 * PyTorch printed. The model's rows are summed by name here, independently of
 * the analysis module, so this checks the reader and the model alone. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "csv.h"
#include "fixtures.h"
#include "import/import.h"
#include "model/model.h"

typedef struct sums {
    uint64_t count;
    int64_t self_cpu, cpu, self_dev, dev; /* ns */
} sums;

/* Rows by name id; ProfilerStep#N are folded into one row, as in the CSVs. */
static sums *sum_rows(const opprof_trace *t, uint32_t *step_id)
{
    sums *s = calloc(t->str.count + 1, sizeof *s);
    *step_id = t->str.count; /* the extra slot */
    for (size_t i = 0; i < t->nev; i++) {
        const op_event *e = &t->ev[i];
        uint32_t id = e->name;
        if (!strncmp(op_strtab_get(&t->str, id), "ProfilerStep#", 13)) id = *step_id;
        sums *r = &s[id];
        if (op_cat_is_device(e->cat)) {
            r->count++;
            r->self_dev += e->dur_ns;
            r->dev += e->dur_ns;
        } else if (op_cat_is_host(e->cat)) {
            r->count++;
            r->self_cpu += e->self_ns;
            r->cpu += e->dur_ns;
            r->self_dev += op_evx_of(t, e)->dev_self_ns;
            r->dev += op_evx_of(t, e)->dev_total_ns;
        }
    }
    return s;
}

static void near_us(const char *what, const char *name, int64_t ns, const char *us)
{
    double want = strtod(us, NULL), got = (double)ns / 1000.0;
    if (got - want > 0.0011 || want - got > 0.0011) fail_msg("%s of %.80s: %.3f us, expected %s", what, name, got, us);
}

static void check_kineto(const char *dir, const char *base)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s.json.gz", dir, base);
    opprof_trace *t;
    if (opprof_trace_load(path, &t) != 0) fail_msg("%s", opprof_last_error());
    uint32_t step;
    sums *s = sum_rows(t, &step);
    snprintf(path, sizeof path, "%s/%s.expected.csv", dir, base);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t cap = 1 << 20, rows = 0, ours = 0;
    char *line = malloc(cap), *name = malloc(cap), field[64];
    assert_non_null(fgets(line, (int)cap, f)); /* header */
    while (fgets(line, (int)cap, f)) {
        const char *p = line;
        csv_field(&p, name, cap);
        uint32_t id = !strcmp(name, "ProfilerStep*") ? step : op_strtab_find(&t->str, name, strlen(name));
        if (id == UINT32_MAX) fail_msg("%s: no row %.80s", base, name);
        const sums *r = &s[id];
        csv_field(&p, field, sizeof field);
        if (strtoull(field, NULL, 10) != r->count)
            fail_msg("%s: count of %.80s is %llu, expected %s", base, name, (unsigned long long)r->count, field);
        csv_field(&p, field, sizeof field);
        near_us("self CPU", name, r->self_cpu, field);
        csv_field(&p, field, sizeof field);
        near_us("CPU total", name, r->cpu, field);
        csv_field(&p, field, sizeof field);
        near_us("self device", name, r->self_dev, field);
        csv_field(&p, field, sizeof field);
        near_us("device total", name, r->dev, field);
        rows++;
    }
    for (uint32_t i = 0; i <= t->str.count; i++) ours += s[i].count > 0;
    assert_int_equal(ours, rows); /* no row the reference does not have */
    assert_true(rows > 0);
    fclose(f);
    free(line);
    free(name);
    free(s);
    opprof_trace_free(t);
}

static void test_kineto_expected_csv(void **state)
{
    (void)state;
    char dir[1024];
    if (!fixture_path(dir, sizeof dir, "kineto")) {
        print_message("skipped: no fixtures at %s\n", dir);
        skip();
    }
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *de;
    int n = 0;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 9 || strcmp(de->d_name + len - 8, ".json.gz") != 0) continue;
        char base[512];
        snprintf(base, sizeof base, "%.*s", (int)(len - 8), de->d_name);
        check_kineto(dir, base);
        n++;
    }
    closedir(d);
    assert_true(n >= 3);
}

/* "183.239ms" -> ns */
static int64_t table_time(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    double scale = !strcmp(end, "us") ? 1e3 : !strcmp(end, "ms") ? 1e6 : !strcmp(end, "s") ? 1e9 : -1;
    if (scale < 0) fail_msg("time '%s'", s);
    return (int64_t)(v * scale + (v >= 0 ? 0.5 : -0.5));
}

static void check_torch_table(const char *dir, const char *base)
{
    char path[2048], line[1024];
    snprintf(path, sizeof path, "%s/%s.trace.json", dir, base);
    opprof_trace *t;
    if (opprof_trace_load(path, &t) != 0) fail_msg("%s", opprof_last_error());
    uint32_t step;
    sums *s = sum_rows(t, &step);
    snprintf(path, sizeof path, "%s/%s.table.count.txt", dir, base);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        char *tok[16];
        int n = 0;
        for (char *p = strtok(line, " \n"); p && n < 16; p = strtok(NULL, " \n")) tok[n++] = p;
        if (n < 7 || tok[n - 1][0] < '0' || tok[n - 1][0] > '9') continue; /* rules, header, footer */
        /* The name is everything before the last six columns. */
        char name[512] = "";
        for (int k = 0; k < n - 6; k++) snprintf(name + strlen(name), sizeof name - strlen(name), "%s%s", k ? " " : "", tok[k]);
        uint32_t id = UINT32_MAX;
        size_t len = strlen(name);
        if (len > 3 && !strcmp(name + len - 3, "...")) { /* PyTorch cut a long name */
            for (uint32_t i = 1; i < t->str.count && id == UINT32_MAX; i++)
                if (s[i].count && !strncmp(op_strtab_get(&t->str, i), name, len - 3)) id = i;
        } else {
            id = op_strtab_find(&t->str, name, len);
        }
        if (id == UINT32_MAX) fail_msg("%s: no row %s", base, name);
        assert_int_equal(s[id].count, strtoull(tok[n - 1], NULL, 10));
        if (s[id].self_cpu != table_time(tok[n - 5]) || s[id].cpu != table_time(tok[n - 3]))
            fail_msg("%s: %s self %lld total %lld, table says %s %s", base, name, (long long)s[id].self_cpu,
                     (long long)s[id].cpu, tok[n - 5], tok[n - 3]);
        rows++;
    }
    assert_true(rows > 10);
    fclose(f);
    free(s);
    opprof_trace_free(t);
}

static void test_torch_tables_per_operator(void **state)
{
    (void)state;
    char dir[1024];
    if (!fixture_path(dir, sizeof dir, "torch-traces")) {
        print_message("skipped: no fixtures at %s\n", dir);
        skip();
    }
    check_torch_table(dir, "resnet18_infer_b5");
    check_torch_table(dir, "mlp_train_3steps");
}

/* Reading a fixture a few bytes at a time into a tiny buffer gives the very
 * same model as reading it whole. */
static void test_same_model_whatever_the_chunks(void **state)
{
    (void)state;
    char path[1024];
    if (!fixture_path(path, sizeof path, "kineto/benchmark_result_2869224_1695835535_trace.json.gz")) skip();
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char gz[1 << 20];
    size_t len = fread(gz, 1, sizeof gz, f);
    fclose(f);
    opprof_trace *whole, *cut;
    assert_int_equal(opprof_trace_load_buffer(gz, len, &whole), 0);
    op_source *src;
    assert_int_equal(op_source_open_memory(gz, len, 7, &src), 0);
    assert_int_equal(op_import_source(src, "cut", 16, &cut), 0);
    assert_int_equal(whole->nev, cut->nev);
    assert_memory_equal(whole->ev, cut->ev, whole->nev * sizeof *whole->ev);
    assert_int_equal(whole->nthreads, cut->nthreads);
    assert_memory_equal(whole->threads, cut->threads, whole->nthreads * sizeof *whole->threads);
    assert_int_equal(whole->base_time_ns, cut->base_time_ns);
    opprof_trace_free(whole);
    opprof_trace_free(cut);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kineto_expected_csv),
        cmocka_unit_test(test_torch_tables_per_operator),
        cmocka_unit_test(test_same_model_whatever_the_chunks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Synthetic traces (tests/data/tables/NAME.case) whose expected tables PyTorch
 * 1.13 itself printed (gen_tables.py beside them): every column, unit and
 * threshold of the table text, compared byte for byte. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "slurp.h"
#include "model/model.h"

static int category(const char *s)
{
    static const char *const names[] = {"cpu_op", "user_annotation", "cuda_runtime", "cuda_driver",
                                        "kernel", "gpu_memcpy", "gpu_memset"};
    for (int i = 0; i < 7; i++)
        if (!strcmp(s, names[i])) return i;
    fail_msg("unknown category %s", s);
    return -1;
}

/* Splits line at '|' in place; returns the number of fields. */
static int split(char *line, char **f, int max)
{
    int n = 0;
    for (char *p = line; n < max; p++) {
        f[n++] = p;
        p = strchr(p, '|');
        if (!p) break;
        *p = '\0';
    }
    return n;
}

static uint32_t intern(opprof_trace *t, const char *s)
{
    return op_trace_intern(t, s, strlen(s));
}

static void add_event(opprof_trace *t, char **f)
{
    uint32_t th = (uint32_t)op_trace_thread(t, 0, atoll(f[1]));
    op_event *e = op_trace_add_event(t, th, intern(t, f[9]), category(f[2]), atoll(f[3]) * 1000,
                                     atoll(f[4]) * 1000);
    assert_non_null(e);
    op_evx_add(t, e)->flops = strtoull(f[5], NULL, 10);
    if (*f[6]) {
        op_evx_add(t, e)->correlation = atoll(f[6]);
        e->flags |= OP_EV_HAS_CORR;
    }
    if (*f[7]) op_evx_add(t, e)->shapes = intern(t, f[7]);
    if (*f[8]) {
        uint32_t frames[16], n = 0;
        for (char *p = f[8]; p && n < 16; n++) {
            char *semi = strchr(p, ';');
            frames[n] = op_trace_intern(t, p, semi ? (size_t)(semi - p) : strlen(p));
            p = semi ? semi + 1 : NULL;
        }
        uint32_t s = op_trace_add_stack(t, frames, n);
        op_evx_add(t, &t->ev[t->nev - 1])->stack = s;
    }
}

static void run_case(const char *dir, const char *name)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s.case", dir, name);
    char *text = slurp(path);
    assert_non_null(text);
    snprintf(path, sizeof path, "%s/%s.tables", dir, name);
    char *want = slurp(path);
    if (!want) fail_msg("%s missing: run gen_tables.py", path);

    opprof_trace *t = op_trace_new();
    opprof_avg_options opt = {0};
    char *tables[32];
    int ntables = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *f[10];
        if (line[0] == '#') continue;
        if (!strncmp(line, "table|", 6)) {
            tables[ntables++] = line;
            continue;
        }
        int n = split(line, f, 10);
        if (!strcmp(f[0], "options")) {
            t->options |= strstr(f[1], "memory") ? OP_TRACE_MEMORY : 0;
            t->options |= strstr(f[1], "flops") ? OP_TRACE_FLOPS : 0;
            t->options |= strstr(f[1], "shapes") ? OP_TRACE_SHAPES : 0;
        } else if (!strcmp(f[0], "avg")) {
            opt.group_by_input_shape = atoi(f[1]);
            opt.group_by_stack_n = atoi(f[2]);
        } else if (!strcmp(f[0], "ev")) {
            assert_int_equal(n, 10);
            add_event(t, f);
        } else if (!strcmp(f[0], "mem")) {
            uint32_t th = (uint32_t)op_trace_thread(t, 0, atoll(f[1]));
            assert_non_null(op_trace_add_mem(t, th, atoll(f[2]) * 1000, 0x1000, atoll(f[3])));
        }
    }
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    opprof_key_averages *ka;
    assert_int_equal(opprof_key_averages(t, &opt, &ka), OPPROF_OK);

    const char *w = want;
    for (int i = 0; i < ntables; i++) {
        char *f[3];
        split(tables[i], f, 3);
        const char *key = *f[1] ? f[1] : NULL;
        char head[128];
        snprintf(head, sizeof head, "#### %s %s\n", f[1], f[2]);
        assert_true(!strncmp(w, head, strlen(head)));
        w += strlen(head);
        const char *end = strstr(w, "\n####");
        size_t len = end ? (size_t)(end - w) + 1 : strlen(w);
        char *got;
        assert_int_equal(opprof_table_string(ka, key, atoi(f[2]), &got), OPPROF_OK);
        if (strlen(got) != len || memcmp(got, w, len) != 0) {
            fprintf(stderr, "%s, sort_by=%s row_limit=%s\nwant:\n%.*s\ngot:\n%s", name, f[1], f[2], (int)len, w, got);
            fail_msg("%s: table differs from PyTorch's", name);
        }
        free(got);
        w += len;
    }
    assert_true(*w == '\0');
    opprof_key_averages_free(ka);
    opprof_trace_free(t);
    free(want);
    free(text);
}

static void test_cases_match_pytorch(void **state)
{
    (void)state;
    const char *src = getenv("OPPROF_SOURCE_DIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/data/tables", src ? src : ".");
    DIR *d = opendir(dir);
    assert_non_null(d);
    int ran = 0;
    for (struct dirent *de; (de = readdir(d));) {
        size_t n = strlen(de->d_name);
        if (n < 6 || strcmp(de->d_name + n - 5, ".case") != 0) continue;
        char name[200];
        snprintf(name, sizeof name, "%.*s", (int)(n - 5), de->d_name);
        run_case(dir, name);
        ran++;
    }
    closedir(d);
    assert_true(ran >= 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases_match_pytorch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* export_stacks: folded output of known call trees, compared byte for byte
 * with what PyTorch 1.13's EventList.export_stacks wrote for the same events
 * (tests/data/stacks, gen_folded.py), and the rules of the folded format that
 * FlameGraph and speedscope read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "model/model.h"
#include "slurp.h"

static void data_path(char *out, size_t cap, const char *name)
{
    const char *src = getenv("OPPROF_SOURCE_DIR");
    snprintf(out, cap, "%s/tests/data/stacks/%s", src ? src : ".", name);
}

static uint32_t intern(opprof_trace *t, const char *s, size_t n)
{
    return op_trace_intern(t, s, n);
}

/* Frames innermost first, '^' between. */
static uint32_t add_stack(opprof_trace *t, const char *frames)
{
    uint32_t ids[32], n = 0;
    for (const char *p = frames; *p && n < 32;) {
        size_t len = strcspn(p, "^");
        ids[n++] = intern(t, p, len);
        p += len + (p[len] == '^');
    }
    return n ? op_trace_add_stack(t, ids, n) : 0;
}

/* Builds the trace a .case file describes (format in its header). */
static opprof_trace *load_case(const char *name)
{
    char path[4096];
    data_path(path, sizeof path, name);
    char *text = slurp(path);
    assert_non_null(text);
    opprof_trace *t = op_trace_new();
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "ev|", 3) != 0) continue;
        char *f[6];
        int n = 0;
        for (char *p = line; p && n < 6; n++) {
            f[n] = p;
            p = strchr(p, '|');
            if (p) *p++ = '\0';
        }
        assert_int_equal(n, 6);
        uint32_t th = (uint32_t)op_trace_thread(t, 1, atoll(f[1]));
        op_event *e = op_trace_add_event(t, th, intern(t, f[5], strlen(f[5])), OPPROF_CAT_CPU_OP, atoll(f[2]),
                                         atoll(f[3]));
        assert_non_null(e);
        uint32_t s = add_stack(t, f[4]);
        op_evx_add(t, &t->ev[t->nev - 1])->stack = s;
    }
    free(text);
    t->options |= OP_TRACE_STACK;
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    return t;
}

static char *folded(const opprof_trace *t, const char *metric, int frames)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(opprof_write_stacks(t, f, metric, frames), OPPROF_OK);
    fclose(f);
    return buf;
}

static void expect_file(const char *got, const char *name)
{
    char path[4096];
    data_path(path, sizeof path, name);
    char *want = slurp(path);
    if (!want) fail_msg("%s missing: run gen_folded.py", path);
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "want (%s):\n%sgot:\n%s", name, want, got);
        fail_msg("%s: folded output differs from PyTorch's", name);
    }
    free(want);
}

/* speedscope's and FlameGraph's reading of a line: everything before the
 * last space is the stack, ';' separates frames, none of them empty; the
 * count is a positive integer. */
static void check_folded_rules(const char *text)
{
    size_t lines = 0;
    for (const char *p = text; *p; lines++) {
        const char *nl = strchr(p, '\n');
        assert_non_null(nl); /* every line ends */
        const char *sp = nl;
        while (sp > p && sp[-1] != ' ') sp--;
        assert_true(sp > p + 1);
        assert_true(sp < nl);
        for (const char *d = sp; d < nl; d++) assert_true(*d >= '0' && *d <= '9');
        assert_true(*sp != '0');
        for (const char *c = p; c < sp - 1; c++) {
            assert_true(*c != '\t' && *c != ' ');
            if (*c == ';') assert_true(c > p && c[1] != ';' && c + 1 < sp - 1);
        }
        p = nl + 1;
    }
    assert_true(lines > 0);
}

static void test_known_tree_matches_pytorch(void **state)
{
    (void)state;
    opprof_trace *t = load_case("known.case");
    char *calls = folded(t, "self_cpu_time_total", OPPROF_STACKS_CALLS);
    expect_file(calls, "known.folded");
    check_folded_rules(calls);
    char *ops = folded(t, NULL, OPPROF_STACKS_OPERATORS);
    expect_file(ops, "known.ops.folded");
    check_folded_rules(ops);

    /* The file form writes the call-stack lines. */
    char path[] = "/tmp/opprof_folded_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(opprof_export_stacks(t, path, "self_cpu_time_total"), OPPROF_OK);
    char *file = slurp(path);
    assert_string_equal(file, calls);
    unlink(path);
    free(file);
    free(calls);
    free(ops);
    opprof_trace_free(t);
}

static void test_tab_and_newline_in_frames_become_underscores(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    uint32_t th = (uint32_t)op_trace_thread(t, 1, 1);
    op_trace_add_event(t, th, intern(t, "a\tb", 3), OPPROF_CAT_CPU_OP, 0, 2500);
    op_evx_add(t, &t->ev[0])->stack = add_stack(t, "f\n(1): g^h i;j");
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    char *s = folded(t, NULL, OPPROF_STACKS_CALLS);
    assert_string_equal(s, "h_i_j;f_(1):_g;a_b 2\n");
    free(s);
    opprof_trace_free(t);
}

/* Device time: the kernel launched inside aten::mm counts for it under the
 * device metrics, in both spellings PyTorch and newer versions use. */
static void test_device_metric(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    uint32_t h = (uint32_t)op_trace_thread(t, 1, 1), d = (uint32_t)op_trace_thread(t, 1, 7);
    op_trace_add_event(t, h, intern(t, "aten::mm", 8), OPPROF_CAT_CPU_OP, 0, 10000);
    op_evx_add(t, &t->ev[0])->stack = add_stack(t, "mm.c(3): matmul");
    op_event *l = op_trace_add_event(t, h, intern(t, "cudaLaunchKernel", 16), OPPROF_CAT_CUDA_RUNTIME, 1000, 1000);
    op_evx_add(t, l)->correlation = 9;
    l->flags |= OP_EV_HAS_CORR;
    op_event *k = op_trace_add_event(t, d, intern(t, "gemm", 4), OPPROF_CAT_KERNEL, 3000, 5500);
    op_evx_add(t, k)->correlation = 9;
    k->flags |= OP_EV_HAS_CORR | OPPROF_EVENT_DEVICE;
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    for (int i = 0; i < 2; i++) {
        char *s = folded(t, i ? "self_device_time_total" : "self_cuda_time_total", OPPROF_STACKS_CALLS);
        assert_string_equal(s, "mm.c(3):_matmul;aten::mm 5\n");
        free(s);
    }
    char *s = folded(t, "self_cpu_time_total", OPPROF_STACKS_CALLS);
    assert_string_equal(s, "mm.c(3):_matmul;aten::mm 9\n");
    free(s);
    opprof_trace_free(t);
}

/* Many sub-microsecond leaves on one stack: their exact nanoseconds add up
 * before the one conversion to microseconds (truncating each event, as
 * PyTorch does, would give them 0 and drop the line). Equal stacks are one
 * line, in order of first appearance, in both frame modes. */
static void test_sub_microsecond_leaves_add_up(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    uint32_t th = (uint32_t)op_trace_thread(t, 1, 1);
    uint32_t cmp = intern(t, "cmp", 3), sort = intern(t, "qsort", 5), other = intern(t, "other", 5);
    op_trace_add_event(t, th, sort, OPPROF_CAT_CPU_OP, 0, 2000000);
    op_evx_add(t, &t->ev[0])->stack = add_stack(t, "main");
    for (int i = 0; i < 3000; i++) { /* 3000 x 401 ns = 1203 us */
        op_trace_add_event(t, th, cmp, OPPROF_CAT_CPU_OP, 1000 + (int64_t)i * 500, 401);
        op_evx_add(t, &t->ev[t->nev - 1])->stack = add_stack(t, "sort.c(9): qsort^main");
    }
    op_trace_add_event(t, th, other, OPPROF_CAT_CPU_OP, 1900000, 999); /* alone: under 1 us, left out */
    op_evx_add(t, &t->ev[t->nev - 1])->stack = add_stack(t, "main");
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    char *s = folded(t, NULL, OPPROF_STACKS_CALLS);
    /* qsort's self time: 2000000 - 3000*401 - 999 = 796 us (796.001). */
    assert_string_equal(s, "main;qsort 796\nmain;sort.c(9):_qsort;cmp 1203\n");
    check_folded_rules(s);
    free(s);
    s = folded(t, NULL, OPPROF_STACKS_OPERATORS);
    assert_string_equal(s, "qsort 796\nqsort;cmp 1203\n");
    free(s);
    opprof_trace_free(t);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    FILE *f = fopen("/dev/null", "w");
    assert_int_equal(opprof_write_stacks(t, f, NULL, OPPROF_STACKS_CALLS), OPPROF_E_INVAL); /* not finished */
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    assert_int_equal(opprof_write_stacks(t, f, "cpu_time", OPPROF_STACKS_CALLS), OPPROF_E_INVAL);
    assert_non_null(strstr(opprof_last_error(), "self_cpu_time_total"));
    assert_int_equal(opprof_write_stacks(t, f, NULL, 7), OPPROF_E_INVAL);
    assert_int_equal(opprof_write_stacks(NULL, f, NULL, OPPROF_STACKS_CALLS), OPPROF_E_INVAL);
    assert_int_equal(opprof_export_stacks(t, "/nonexistent/dir/x.folded", NULL), OPPROF_E_IO);
    assert_non_null(strstr(opprof_last_error(), "/nonexistent/dir/x.folded"));
    assert_int_equal(opprof_write_stacks(t, f, NULL, OPPROF_STACKS_CALLS), OPPROF_OK); /* empty: no lines */
    fclose(f);
    opprof_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_tree_matches_pytorch),
        cmocka_unit_test(test_tab_and_newline_in_frames_become_underscores),
        cmocka_unit_test(test_device_metric),
        cmocka_unit_test(test_sub_microsecond_leaves_add_up),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The event model built directly: ordering, call tree, self time, memory
 * attribution per thread, and device time charged through correlation and
 * external ids, as ../shared/tools/ref_summary.py defines them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "model/model.h"
#include "model/gaps.h"

static op_event *add(opprof_trace *t, uint32_t th, const char *name, int cat, int64_t s, int64_t d)
{
    op_event *e = op_trace_add_event(t, th, op_trace_intern(t, name, strlen(name)), cat, s, d);
    assert_non_null(e);
    return e;
}

static const op_event *get(const opprof_trace *t, const char *name)
{
    for (size_t i = 0; i < t->nev; i++)
        if (!strcmp(op_strtab_get(&t->str, t->ev[i].name), name)) return &t->ev[i];
    fail_msg("no event %s", name);
    return NULL;
}

static void test_unordered_input_sorted_and_nested(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    uint32_t th = (uint32_t)op_trace_thread(t, 1, 1);
    /* given out of order; C and B share a start, the longer one is the parent */
    add(t, th, "D", OPPROF_CAT_CPU_OP, 50, 10);
    add(t, th, "B", OPPROF_CAT_CPU_OP, 10, 20);
    add(t, th, "A", OPPROF_CAT_CPU_OP, 0, 100);
    add(t, th, "C", OPPROF_CAT_CPU_OP, 10, 30);
    add(t, th, "E", OPPROF_CAT_CPU_OP, 95, 10); /* overlaps A's end: not a child */
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    const char *order[] = {"A", "C", "B", "D", "E"};
    for (int i = 0; i < 5; i++) assert_string_equal(op_strtab_get(&t->str, t->ev[i].name), order[i]);
    assert_int_equal(get(t, "A")->self_ns, 100 - 30 - 10);
    assert_int_equal(get(t, "C")->self_ns, 10);
    assert_int_equal(get(t, "B")->parent, 1);
    assert_int_equal(op_event_depth(t, get(t, "B")), 2);
    assert_int_equal(get(t, "D")->parent, 0);
    assert_int_equal(get(t, "E")->parent, -1);
    opprof_trace_free(t);
}

static void test_trees_are_per_thread(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    uint32_t t1 = (uint32_t)op_trace_thread(t, 1, 1), t2 = (uint32_t)op_trace_thread(t, 1, 2);
    add(t, t1, "outer", OPPROF_CAT_CPU_OP, 0, 100);
    add(t, t2, "other", OPPROF_CAT_CPU_OP, 10, 10);
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    assert_int_equal(get(t, "other")->parent, -1);
    assert_int_equal(get(t, "outer")->self_ns, 100);
    opprof_trace_free(t);
}

static void test_memory_attributed_on_own_thread(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    uint32_t t1 = (uint32_t)op_trace_thread(t, 1, 1), t2 = (uint32_t)op_trace_thread(t, 1, 2);
    add(t, t1, "op1", OPPROF_CAT_CPU_OP, 0, 100);
    add(t, t1, "child", OPPROF_CAT_CPU_OP, 20, 20);
    add(t, t2, "op2", OPPROF_CAT_CPU_OP, 0, 100);
    assert_non_null(op_trace_add_mem(t, t2, 30, 0x10, 500));  /* inside op2, during child on t1 */
    assert_non_null(op_trace_add_mem(t, t1, 30, 0x20, 100));  /* inside child */
    assert_non_null(op_trace_add_mem(t, t1, 50, 0x20, -100)); /* freed in op1 */
    assert_non_null(op_trace_add_mem(t, t1, 200, 0x30, 7));   /* outside every op */
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    assert_int_equal(op_evx_of(t, get(t, "op2"))->mem_self, 500);
    assert_int_equal(op_evx_of(t, get(t, "child"))->mem_self, 100);
    assert_int_equal(op_evx_of(t, get(t, "child"))->mem_total, 100);
    assert_int_equal(op_evx_of(t, get(t, "op1"))->mem_self, -100);
    assert_int_equal(op_evx_of(t, get(t, "op1"))->mem_total, 0);
    assert_int_equal(t->mem[3].op, -1);
    assert_int_equal(t->mem[3].total_allocated, 507);
    opprof_trace_free(t);
}

static void test_device_time_charged_to_launching_op(void **state)
{
    (void)state;
    opprof_trace *t = op_trace_new();
    uint32_t cpu = (uint32_t)op_trace_thread(t, 1, 1), gpu = (uint32_t)op_trace_thread(t, 0, 7);
    add(t, cpu, "aten::conv2d", OPPROF_CAT_CPU_OP, 0, 100);
    add(t, cpu, "aten::cudnn_convolution", OPPROF_CAT_CPU_OP, 10, 80);
    op_event *l = add(t, cpu, "cudaLaunchKernel", OPPROF_CAT_CUDA_RUNTIME, 20, 5);
    op_evx_add(t, l)->correlation = 42;
    l->flags |= OP_EV_HAS_CORR;
    op_event *k = add(t, gpu, "conv_kernel", OPPROF_CAT_KERNEL, 30, 300);
    op_evx_add(t, k)->correlation = 42;
    k->flags |= OP_EV_HAS_CORR;
    op_event *op = add(t, cpu, "aten::addmm", OPPROF_CAT_CPU_OP, 200, 10);
    op_evx_add(t, op)->external_id = 9;
    op->flags |= OP_EV_HAS_EXT;
    op_event *k2 = add(t, gpu, "gemm_kernel", OPPROF_CAT_KERNEL, 400, 50);
    op_evx_add(t, k2)->external_id = 9;
    k2->flags |= OP_EV_HAS_EXT;
    assert_int_equal(op_trace_finish(t), OPPROF_OK);
    assert_int_equal(op_evx_of(t, get(t, "aten::cudnn_convolution"))->dev_self_ns, 300);
    assert_int_equal(op_evx_of(t, get(t, "aten::cudnn_convolution"))->dev_total_ns, 300);
    assert_int_equal(op_evx_of(t, get(t, "aten::conv2d"))->dev_self_ns, 0);
    assert_int_equal(op_evx_of(t, get(t, "aten::conv2d"))->dev_total_ns, 300);
    assert_int_equal(op_evx_of(t, get(t, "cudaLaunchKernel"))->dev_total_ns, 0);
    assert_int_equal(op_evx_of(t, get(t, "aten::addmm"))->dev_self_ns, 50);
    assert_int_equal(op_evx_of(t, get(t, "conv_kernel"))->dev_self_ns, 300);
    assert_true(get(t, "conv_kernel")->flags & OPPROF_EVENT_DEVICE);
    assert_int_equal(get(t, "conv_kernel")->parent, -1);
    assert_true(t->options & OP_TRACE_DEVICE);
    opprof_trace_free(t);
}

static void test_strtab_interns_and_grows(void **state)
{
    (void)state;
    op_strtab s;
    assert_int_equal(op_strtab_init(&s), 0);
    char buf[32];
    for (int i = 0; i < 5000; i++) {
        int n = snprintf(buf, sizeof buf, "name%d", i);
        assert_int_equal(op_strtab_intern(&s, buf, (size_t)n), (uint32_t)i + 1);
    }
    assert_int_equal(op_strtab_intern(&s, "name42", 6), 43);
    assert_int_equal(op_strtab_find(&s, "name4999", 8), 5000);
    assert_int_equal(op_strtab_find(&s, "absent", 6), UINT32_MAX);
    assert_string_equal(op_strtab_get(&s, 0), "");
    assert_string_equal(op_strtab_get(&s, 1000), "name999");
    op_strtab_free(&s);
}

/* Gaps taken out of times asked in any order: the lookup that starts from
 * the last one found answers as a search from scratch would, in order
 * (the streamed reader), backwards and at random (the collector's ends);
 * so does the inline op_gaps_map, before, inside and past the last gap. */
static uint64_t gaps_naive(const op_gaps *s, uint64_t ticks)
{
    uint64_t out = ticks;
    for (size_t i = 0; i < s->n; i++) {
        if (s->g[i].from > ticks) break;
        out -= (ticks < s->g[i].to ? ticks : s->g[i].to) - s->g[i].from;
    }
    return out;
}

/* A writer's trace that mirrors the reader's (op_trace_mirror) names every
 * string, thread and stack by the reader's id, however the reader's tables
 * grew between two mirrors, and keeps its own events. */
static void test_mirror_keeps_ids(void **state)
{
    (void)state;
    opprof_trace *src = op_trace_new(), *m = op_trace_new();
    assert_non_null(src);
    assert_non_null(m);
    uint32_t a = op_trace_intern(src, "alpha", 5);
    int64_t t0 = op_trace_thread(src, 10, 11);
    assert_true(t0 >= 0);
    src->threads[t0].name = op_trace_intern(src, "worker", 6);
    uint32_t frames[2] = {a, op_trace_intern(src, "beta\0x", 6)}; /* a NUL inside is kept */
    assert_int_equal(op_trace_add_stack(src, frames, 2), 1);
    src->options = OP_TRACE_SHAPES;
    src->base_time_ns = 1234;
    assert_non_null(op_trace_add_event(m, 0, 0, OPPROF_CAT_CPU_OP, 5, 6));
    assert_int_equal(op_trace_mirror(m, src), OPPROF_OK);
    /* grown after the first mirror */
    for (int i = 0; i < 300; i++) {
        char name[16];
        int n = snprintf(name, sizeof name, "op%d", i);
        (void)op_trace_intern(src, name, (size_t)n);
    }
    assert_true(op_trace_thread(src, 10, 12) == 1);
    uint32_t one = op_trace_intern(src, "op7", 3);
    assert_int_equal(op_trace_add_stack(src, &one, 1), 2);
    assert_int_equal(op_trace_mirror(m, src), OPPROF_OK);
    assert_int_equal(op_trace_mirror(m, src), OPPROF_OK); /* nothing new: nothing changes */
    assert_int_equal(m->str.count, src->str.count);
    for (uint32_t id = 0; id < src->str.count; id++) {
        assert_int_equal(op_strtab_len(&m->str, id), op_strtab_len(&src->str, id));
        assert_memory_equal(op_strtab_get(&m->str, id), op_strtab_get(&src->str, id), op_strtab_len(&src->str, id));
    }
    assert_int_equal(m->nthreads, 2);
    assert_int_equal(m->threads[0].tid, 11);
    assert_string_equal(op_strtab_get(&m->str, m->threads[0].name), "worker");
    assert_int_equal(m->threads[1].tid, 12);
    assert_int_equal(m->nstacks, 2);
    assert_int_equal(m->stacks[0].nframes, 2);
    assert_memory_equal(m->stacks[0].frames, frames, sizeof frames);
    assert_int_equal(m->stacks[1].frames[0], one);
    assert_int_equal(m->options, OP_TRACE_SHAPES);
    assert_int_equal(m->base_time_ns, 1234);
    assert_int_equal(m->nev, 1); /* its own events stay */
    assert_int_equal(src->nev, 0);
    /* A mirror that holds more than src is refused, not mixed up. */
    opprof_trace *other = op_trace_new();
    assert_non_null(other);
    for (uint32_t i = 0; i <= src->str.count; i++) {
        char name[16];
        int n = snprintf(name, sizeof name, "z%u", i);
        (void)op_trace_intern(other, name, (size_t)n);
    }
    assert_int_equal(op_trace_mirror(other, src), OPPROF_E_INVAL);
    opprof_trace_free(other);
    opprof_trace_free(m);
    opprof_trace_free(src);
}

static void test_gaps_lookup_in_any_order(void **state)
{
    (void)state;
    op_gaps g = {0};
    for (uint64_t k = 0; k < 200; k++) assert_int_equal(op_gaps_add(&g, 100 + 50 * k, 100 + 50 * k + k % 7 * 3), 0);
    for (uint64_t t = 0; t < 11000; t += 7) assert_int_equal(op_gaps_apply(&g, t), gaps_naive(&g, t));
    for (uint64_t t = 11000; t >= 13; t -= 13) assert_int_equal(op_gaps_apply(&g, t), gaps_naive(&g, t));
    uint64_t x = 12345;
    for (int i = 0; i < 5000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t t = (x >> 33) % 12000;
        assert_int_equal(op_gaps_apply(&g, t), gaps_naive(&g, t));
        assert_int_equal(op_gaps_map(&g, t), gaps_naive(&g, t)); /* the inline way, past the last gap or not */
    }
    for (uint64_t t = 10040; t < 10200; t++) assert_int_equal(op_gaps_map(&g, t), gaps_naive(&g, t)); /* around the last */
    g.n = 3; /* emptied for the next thread, as the collector does: a stale cursor past the end */
    assert_int_equal(op_gaps_apply(&g, 5000), gaps_naive(&g, 5000));
    op_gaps_free(&g);
    assert_int_equal(op_gaps_apply(&g, 77), 77);
    assert_int_equal(op_gaps_map(&g, 77), 77);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unordered_input_sorted_and_nested),
        cmocka_unit_test(test_trees_are_per_thread),
        cmocka_unit_test(test_memory_attributed_on_own_thread),
        cmocka_unit_test(test_device_time_charged_to_launching_op),
        cmocka_unit_test(test_strtab_interns_and_grows),
        cmocka_unit_test(test_gaps_lookup_in_any_order),
        cmocka_unit_test(test_mirror_keeps_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

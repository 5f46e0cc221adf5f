/* Synthetic traces: nested operators on several threads with shapes, FLOPs,
 * memory, ProfilerStep annotations and device activity linked by
 * correlation ids, as a live session or a Kineto trace would give them. */
#include "synth.h"

#include <stdio.h>
#include <string.h>

typedef struct gen {
    opprof_trace *t;
    const synth_opts *o;
    size_t made;
    uint64_t rng;
    uint32_t names[256], shapes[8], types, launch, kernels[4], memcpy_name, stream[2];
    int64_t corr;
    uint64_t addr;
    int oom;
} gen;

static uint32_t rnd(gen *g)
{
    g->rng = g->rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(g->rng >> 33);
}

static void device_work(gen *g, uint32_t th, int64_t start, int64_t dur)
{
    op_event *l = op_trace_add_event(g->t, th, g->launch, OPPROF_CAT_CUDA_RUNTIME, start + 1, 2);
    if (!l) { g->oom = 1; return; }
    op_evx_add(g->t, l)->correlation = ++g->corr;
    l->flags |= OP_EV_HAS_CORR;
    int copy = rnd(g) % 5 == 0;
    uint32_t s = g->stream[copy];
    op_event *k = op_trace_add_event(g->t, s, copy ? g->memcpy_name : g->kernels[rnd(g) % 4],
                                     copy ? OPPROF_CAT_GPU_MEMCPY : OPPROF_CAT_KERNEL, start + 4, dur / 2 + 1);
    if (!k) { g->oom = 1; return; }
    op_evx_add(g->t, k)->correlation = g->corr;
    k->flags |= OP_EV_HAS_CORR;
    g->made += 2;
}

static void op(gen *g, uint32_t th, int depth, int64_t start, int64_t dur)
{
    if (g->made >= g->o->events || g->oom) return;
    uint32_t r = rnd(g);
    op_event *e = op_trace_add_event(g->t, th, g->names[r % (uint32_t)g->o->names], OPPROF_CAT_CPU_OP, start, dur);
    if (!e) { g->oom = 1; return; }
    g->made++;
    if (r % 3 == 0) {
        op_evx_add(g->t, e)->shapes = g->shapes[(r >> 8) % 8];
        op_evx_add(g->t, e)->types = g->types;
    }
    if (r % 7 == 0) op_evx_add(g->t, e)->flops = 1000u + (r >> 12);
    if (g->o->memory && r % 2 == 0 && dur > 4) {
        uint64_t a = ++g->addr;
        int64_t bytes = 256 + (int64_t)(r % 4096);
        if (!op_trace_add_mem(g->t, th, start + 1, a, bytes) || !op_trace_add_mem(g->t, th, start + dur - 1, a, -bytes))
            g->oom = 1;
    }
    int kids = depth < g->o->depth && dur > 16 ? (int)(rnd(g) % 4) : 0;
    if (!kids && g->o->device && r % 4 == 1 && dur > 8) device_work(g, th, start, dur);
    for (int c = 0; c < kids; c++) {
        int64_t slot = dur / kids;
        op(g, th, depth + 1, start + c * slot + slot / 8, slot - slot / 4);
    }
}

opprof_trace *synth_trace(const synth_opts *o)
{
    gen g = {0};
    g.o = o;
    g.rng = o->seed * 2654435761u + 1;
    g.t = op_trace_new();
    if (!g.t) return NULL;
    char buf[64];
    for (int i = 0; i < o->names && i < 256; i++) {
        int n = snprintf(buf, sizeof buf, "aten::op_%02d", i);
        g.names[i] = op_trace_intern(g.t, buf, (size_t)n);
    }
    if (o->hostile) g.names[1] = op_trace_intern(g.t, o->hostile, strlen(o->hostile));
    for (int i = 0; i < 8; i++) {
        int n = snprintf(buf, sizeof buf, "[[%d, 64, 56, 56], [64, 64, 3, 3]]", 1 << i);
        g.shapes[i] = op_trace_intern(g.t, buf, (size_t)n);
    }
    g.types = op_trace_intern(g.t, "['float', 'float']", 18);
    g.launch = op_trace_intern(g.t, "cudaLaunchKernel", 16);
    for (int i = 0; i < 4; i++) {
        int n = snprintf(buf, sizeof buf, "void gemm_kernel_%d<float>(float const*, float*)", i);
        g.kernels[i] = op_trace_intern(g.t, buf, (size_t)n);
    }
    g.memcpy_name = op_trace_intern(g.t, "Memcpy HtoD (Pageable -> Device)", 32);
    uint32_t th[64];
    int nth = o->threads < 1 ? 1 : o->threads > 64 ? 64 : o->threads;
    for (int i = 0; i < nth; i++) th[i] = (uint32_t)op_trace_thread(g.t, 100, 1000 + i);
    if (o->hostile) g.t->threads[0].name = op_trace_intern(g.t, o->hostile, strlen(o->hostile));
    if (o->device) {
        for (int s = 0; s < 2; s++) {
            g.stream[s] = (uint32_t)op_trace_thread(g.t, 0, 7 + s);
            g.t->threads[g.stream[s]].device = 0;
        }
    }
    int64_t cursor[64] = {0};
    int step = 0;
    while (g.made < o->events && !g.oom) {
        for (int i = 0; i < nth && g.made < o->events; i++) {
            int64_t dur = 2000 + (int64_t)(rnd(&g) % 50000);
            if (i == 0 && o->steps) {
                int n = snprintf(buf, sizeof buf, "ProfilerStep#%d", step++);
                op_event *s = op_trace_add_event(g.t, th[0], op_trace_intern(g.t, buf, (size_t)n),
                                                 OPPROF_CAT_USER_ANNOTATION, cursor[0], dur + 200);
                if (!s) { g.oom = 1; break; }
                g.made++;
                op(&g, th[0], 1, cursor[0] + 100, dur);
                cursor[0] += dur + 300;
            } else {
                op(&g, th[i], 0, cursor[i], dur);
                cursor[i] += dur + 100;
            }
        }
    }
    if (o->hostile && !g.oom) {
        op_event *e = op_trace_add_event(g.t, th[0], g.names[1], OPPROF_CAT_CPU_OP, cursor[0] + 10, 500);
        if (e) {
            op_evx_add(g.t, e)->shapes = op_trace_intern(g.t, o->hostile, strlen(o->hostile));
            char args[256];
            int n = snprintf(args, sizeof args, "\"note\": \"%.200s\"", o->hostile);
            op_evx_add(g.t, e)->args = op_trace_intern(g.t, args, (size_t)n);
            uint32_t frames[2] = {op_trace_intern(g.t, o->hostile, strlen(o->hostile)),
                                  op_trace_intern(g.t, "synth.c(1): main", 16)};
            op_evx_add(g.t, e)->stack = op_trace_add_stack(g.t, frames, 2);
            g.t->options |= OP_TRACE_STACK;
        } else {
            g.oom = 1;
        }
    }
    if (o->memory) g.t->options |= OP_TRACE_MEMORY;
    g.t->options |= OP_TRACE_SHAPES | OP_TRACE_FLOPS;
    g.t->attempted = g.made;
    if (g.oom || op_trace_finish(g.t) != OPPROF_OK) {
        opprof_trace_free(g.t);
        return NULL;
    }
    return g.t;
}

/* A live session of known content for the export tests: n iterations of a
 * user annotation over aten::mm (input shapes, FLOPs, an allocation) and
 * aten::relu (the free), on a fake clock so that every time is exact,
 * several of them under a microsecond. */
#ifndef OPPROF_TESTS_SAMPLE_SESSION_H
#define OPPROF_TESTS_SAMPLE_SESSION_H

#include <stdint.h>

#include "opprof.h"

static int64_t sample_now;

static int64_t sample_clock(void *ctx)
{
    (void)ctx;
    return sample_now;
}

static uint64_t sample_mm_flops(const opprof_input *in, unsigned n)
{
    return n >= 2 ? 2ull * (uint64_t)in[0].dims[0] * (uint64_t)in[0].dims[1] * (uint64_t)in[1].dims[1] : 0;
}

static const opprof_site sample_site_mm = OPPROF_SITE_INIT("aten::mm", OPPROF_CAT_CPU_OP, sample_mm_flops);
static const opprof_site sample_site_relu = OPPROF_SITE_INIT("aten::relu", OPPROF_CAT_CPU_OP, NULL);

/* The finished trace, or NULL when the session could not run; streamed
 * to the file `stream` (opprof_config.stream_trace) unless NULL. */
static inline opprof_trace *sample_session_to(int n, const char *stream)
{
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.stream_trace = stream;
    cfg.record_shapes = 1;
    cfg.with_flops = 1;
    cfg.profile_memory = 1;
    cfg.clock = sample_clock;
    sample_now = 1000;
    if (opprof_start(&cfg) != OPPROF_OK) return NULL;
    for (int i = 0; i < n; i++) {
        const opprof_site *a = opprof_annotation_begin(i % 2 ? "layer \"odd\"" : "layer\teven");
        opprof_input in[2] = {{OPPROF_DTYPE_FLOAT, 2, {4, 8 + i % 3}}, {OPPROF_DTYPE_FLOAT, 2, {8 + i % 3, 16}}};
        sample_now += 7;
        opprof_begin_inputs(&sample_site_mm, in, 2);
        sample_now += 3;
        opprof_record_memory((void *)(uintptr_t)(0x1000 + i * 64), 256 + i);
        sample_now += 1234 + i % 5;
        opprof_end(&sample_site_mm);
        sample_now += 5;
        opprof_begin(&sample_site_relu);
        sample_now += 11;
        opprof_record_memory((void *)(uintptr_t)(0x1000 + i * 64), -(256 + i));
        opprof_end(&sample_site_relu);
        sample_now += 2;
        opprof_end(a);
        sample_now += 1;
    }
    opprof_trace *t = NULL;
    return opprof_stop(&t) == OPPROF_OK ? t : NULL;
}

static inline opprof_trace *sample_session(int n)
{
    return sample_session_to(n, NULL);
}

#endif

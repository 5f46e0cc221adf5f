/* The .pftrace's first sequence (pftrace_meta.h): track descriptors and
 * the session's metadata. */
#define _GNU_SOURCE /* program_invocation_short_name */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "common/pfschema.h"
#include "common/rank_env.h"
#include "export/pftrace_meta.h"

#define META_SEQ 1

static void str_field(op_pbw *b, uint32_t field, const char *s)
{
    op_pbw_bytes(b, field, s, strlen(s));
}

static void strtab_field(op_pbw *b, uint32_t field, const opprof_trace *t, uint32_t id)
{
    op_pbw_bytes(b, field, op_strtab_get(&t->str, id), op_strtab_len(&t->str, id));
}

static int process_track(pf_writer *pw, size_t k, const op_thread *th)
{
    const opprof_trace *t = pw->t;
    op_pbw *p = &pw->pkt;
    char buf[96];
    op_pbw_begin(p, PF_PKT_TRACK_DESCRIPTOR);
    op_pbw_uint(p, PF_TD_UUID, PF_UUID_PROCESS(k));
    op_pbw_begin(p, PF_TD_PROCESS);
    op_pbw_int(p, PF_PD_PID, (int32_t)th->pid);
    if (th->pid_name && op_strtab_len(&t->str, th->pid_name)) {
        strtab_field(p, PF_PD_NAME, t, th->pid_name);
    } else {
        if (th->device >= 0) snprintf(buf, sizeof buf, "GPU %d", (int)th->device);
        else if (th->pid == (int64_t)getpid()) snprintf(buf, sizeof buf, "%s", program_invocation_short_name);
        else snprintf(buf, sizeof buf, "process %lld", (long long)th->pid);
        str_field(p, PF_PD_NAME, buf);
    }
    op_pbw_end(p);
    op_pbw_end(p);
    op_pbw_uint(p, PF_PKT_SEQUENCE_ID, META_SEQ);
    return op_pf_emit(pw);
}

static int thread_track(pf_writer *pw, size_t i)
{
    const opprof_trace *t = pw->t;
    const op_thread *th = &t->threads[i];
    op_pbw *p = &pw->pkt;
    op_pbw_begin(p, PF_PKT_TRACK_DESCRIPTOR);
    op_pbw_uint(p, PF_TD_UUID, PF_UUID_THREAD(i, 0));
    op_pbw_uint(p, PF_TD_PARENT_UUID, PF_UUID_PROCESS(pw->proc_of[i]));
    op_pbw_begin(p, PF_TD_THREAD);
    op_pbw_int(p, PF_THD_PID, (int32_t)th->pid);
    op_pbw_int(p, PF_THD_TID, th->tid);
    if (th->name && op_strtab_len(&t->str, th->name)) {
        strtab_field(p, PF_THD_NAME, t, th->name);
    } else {
        char buf[96];
        snprintf(buf, sizeof buf, "%s %lld", th->device >= 0 ? "stream" : "thread", (long long)th->tid);
        str_field(p, PF_THD_NAME, buf);
    }
    op_pbw_end(p);
    op_pbw_end(p);
    op_pbw_uint(p, PF_PKT_SEQUENCE_ID, META_SEQ);
    return op_pf_emit(pw);
}

size_t op_pf_counter_of(const pf_writer *pw, const op_mem_event *m)
{
    int64_t pid = pw->t->nthreads && m->thread < pw->t->nthreads ? pw->t->threads[m->thread].pid : 0;
    for (size_t k = 0; k < pw->ncounters; k++) {
        const pf_counter *c = &pw->counters[k];
        if (c->pid == pid && c->dev_type == m->device_type && c->dev_id == m->device_id) return k;
    }
    return pw->ncounters; /* not reached: every key was collected first */
}

/* A counter track per (process, device) that has memory events. */
int op_pf_meta_counters(pf_writer *pw)
{
    const opprof_trace *t = pw->t;
    for (size_t m = 0; m < t->nmem; m++) {
        const op_mem_event *me = &t->mem[m];
        if (op_pf_counter_of(pw, me) < pw->ncounters) continue;
        pf_counter *c = realloc(pw->counters, (pw->ncounters + 1) * sizeof *c);
        if (!c) return -1;
        pw->counters = c;
        uint32_t th = t->nthreads && me->thread < t->nthreads ? me->thread : 0;
        c[pw->ncounters++] = (pf_counter){t->nthreads ? t->threads[th].pid : 0, me->device_type, me->device_id};
        op_pbw *p = &pw->pkt;
        char name[64];
        if (me->device_type == 0) snprintf(name, sizeof name, "Total Allocated");
        else snprintf(name, sizeof name, "Total Allocated (device %d)", (int)me->device_id);
        op_pbw_begin(p, PF_PKT_TRACK_DESCRIPTOR);
        op_pbw_uint(p, PF_TD_UUID, PF_UUID_COUNTER(pw->ncounters - 1));
        if (t->nthreads) op_pbw_uint(p, PF_TD_PARENT_UUID, PF_UUID_PROCESS(pw->proc_of[th]));
        str_field(p, PF_TD_NAME, name);
        op_pbw_begin(p, PF_TD_COUNTER);
        op_pbw_uint(p, PF_CD_UNIT, PF_UNIT_SIZE_BYTES);
        op_pbw_end(p);
        op_pbw_end(p);
        op_pbw_uint(p, PF_PKT_SEQUENCE_ID, META_SEQ);
        if (op_pf_emit(pw) != 0) return -1;
    }
    return 0;
}

static void ann_int(op_pbw *p, const char *name, int64_t v)
{
    op_pbw_begin(p, PF_TE_DEBUG_ANNOTATIONS);
    str_field(p, PF_DA_NAME, name);
    op_pbw_int(p, PF_DA_INT, v);
    op_pbw_end(p);
}

static void ann_clock(op_pbw *p, const opprof_clock_sync *cs, const char *suffix)
{
    if (!cs->valid) return;
    char name[64];
    snprintf(name, sizeof name, "clock_offset%s_ns", suffix);
    ann_int(p, name, cs->offset_ns);
    snprintf(name, sizeof name, "clock_uncertainty%s_ns", suffix);
    ann_int(p, name, cs->uncertainty_ns);
    snprintf(name, sizeof name, "clock_sync%s_at_ns", suffix);
    ann_int(p, name, cs->at_ns);
}

/* The "opprof" track and its one instant at the session's start, with what
 * the Chrome trace has at top level: droppedEvents, incomplete and
 * distributedInfo (the rank given in the options wins over the trace's,
 * which wins over the launcher's environment, as in chrome.c). */
int op_pf_meta_info(pf_writer *pw, const opprof_trace *t)
{
    op_pbw *p = &pw->pkt;
    op_pbw_begin(p, PF_PKT_TRACK_DESCRIPTOR);
    op_pbw_uint(p, PF_TD_UUID, PF_UUID_META);
    str_field(p, PF_TD_NAME, PF_META_TRACK_NAME);
    op_pbw_end(p);
    op_pbw_uint(p, PF_PKT_SEQUENCE_ID, META_SEQ);
    if (op_pf_emit(pw) != 0) return -1;

    op_pbw_uint(p, PF_PKT_TIMESTAMP, (uint64_t)(t->base_time_ns > 0 ? t->base_time_ns : 0));
    op_pbw_uint(p, PF_PKT_CLOCK_ID, PF_CLOCK_REALTIME); /* the base time's clock (BOOTTIME by default) */
    op_pbw_begin(p, PF_PKT_TRACK_EVENT);
    op_pbw_uint(p, PF_TE_TYPE, PF_TYPE_INSTANT);
    op_pbw_uint(p, PF_TE_TRACK_UUID, PF_UUID_META);
    str_field(p, PF_TE_NAME, t->dropped ? "opprof: events dropped (event cap reached)" : "opprof");
    op_pbw_begin(p, PF_TE_DEBUG_ANNOTATIONS);
    str_field(p, PF_DA_NAME, "droppedEvents");
    op_pbw_uint(p, PF_DA_UINT, t->dropped);
    op_pbw_end(p);
    if (t->filter_min_ns || t->filter_max_depth) { /* what a streamed file leaves out */
        ann_int(p, "filterMinDurationNs", t->filter_min_ns);
        ann_int(p, "filterMaxDepth", (int64_t)t->filter_max_depth);
        ann_int(p, "filteredSlices", (int64_t)t->filtered);
    }
    if (t->options & OP_TRACE_INCOMPLETE) {
        op_pbw_begin(p, PF_TE_DEBUG_ANNOTATIONS);
        str_field(p, PF_DA_NAME, "incomplete");
        op_pbw_uint(p, PF_DA_BOOL, 1);
        op_pbw_end(p);
    }
    int64_t rank = pw->o->rank, world = pw->o->world_size;
    op_rank_pick(&rank, &world, t->dist_rank, t->dist_world);
    if (rank >= 0) {
        ann_int(p, "rank", rank);
        if (world > 0) ann_int(p, "world_size", world);
        if (t->dist_backend) {
            op_pbw_begin(p, PF_TE_DEBUG_ANNOTATIONS);
            str_field(p, PF_DA_NAME, "backend");
            strtab_field(p, PF_DA_STRING, t, t->dist_backend);
            op_pbw_end(p);
        }
        ann_clock(p, &t->clock_start, "");
        ann_clock(p, &t->clock_end, "_end");
    }
    op_pbw_end(p);
    op_pbw_uint(p, PF_PKT_SEQUENCE_ID, META_SEQ);
    return op_pf_emit(pw);
}

int op_pf_meta_threads(pf_writer *pw)
{
    const opprof_trace *t = pw->t;
    if (pw->described >= t->nthreads) return 0;
    int64_t *p = realloc(pw->proc_of, t->nthreads * sizeof *p);
    if (!p) return -1;
    pw->proc_of = p;
    for (size_t i = pw->described; i < t->nthreads; i++) {
        size_t j = 0;
        while (j < i && t->threads[j].pid != t->threads[i].pid) j++;
        if (j < i) {
            pw->proc_of[i] = pw->proc_of[j];
            continue;
        }
        pw->proc_of[i] = (int64_t)pw->nproc;
        if (process_track(pw, pw->nproc++, &t->threads[i]) != 0) return -1;
    }
    for (size_t i = pw->described; i < t->nthreads; i++)
        if (thread_track(pw, i) != 0) return -1;
    pw->described = t->nthreads;
    return 0;
}

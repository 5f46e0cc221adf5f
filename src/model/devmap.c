/* Device activity into the event model: the client's batches (see
 * device/activity.h) and NVTX start/end ranges mapped onto the host events. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cudaapi.h"
#include "common/error.h"
#include "model/devlink.h"
#include "model/devmap.h"
#include "model/model.h"

const char *op_dev_memcpy_kind_name(unsigned k)
{
    static const char *const names[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                        "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
    return k < sizeof names / sizeof names[0] ? names[k] : "<unknown>";
}

const char *op_dev_memory_kind_name(unsigned k)
{
    static const char *const names[] = {"Unknown", "Pageable", "Pinned",        "Device",
                                        "Array",   "Managed",  "Device Static", "Managed Static"};
    return k < sizeof names / sizeof names[0] ? names[k] : "<unknown>";
}

static int act_is_api(const op_dev_act *a)
{
    return a->kind == OP_DEV_RUNTIME || a->kind == OP_DEV_DRIVER;
}

static int act_kept(const op_dev_act *a)
{
    if (!a->name && act_is_api(a)) return 0;
    if (a->kind == OP_DEV_RUNTIME) return !op_cuda_runtime_is_noise(a->name);
    if (a->kind == OP_DEV_DRIVER) return op_cuda_driver_is_kept(a->name);
    return a->kind >= OP_DEV_KERNEL && a->kind <= OP_DEV_MEMSET;
}

static int ext_cmp(const void *x, const void *y)
{
    const op_dev_ext *a = x, *b = y;
    return a->correlation < b->correlation ? -1 : a->correlation > b->correlation;
}

/* correlation -> the API call that made it (index into acts). */
typedef struct api_ref {
    uint32_t correlation;
    uint32_t act;
} api_ref;

static int api_cmp(const void *x, const void *y)
{
    const api_ref *a = x, *b = y;
    if (a->correlation != b->correlation) return a->correlation < b->correlation ? -1 : 1;
    return a->act < b->act ? -1 : a->act > b->act;
}

static const op_dev_ext *find_ext(const op_dev_ext *e, size_t n, uint32_t corr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e[mid].correlation < corr) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && e[lo].correlation == corr ? &e[lo] : NULL;
}

/* The first API call of a correlation: a runtime call comes before the
 * driver call it makes, and is the one a program wrote. */
static int64_t find_api(const api_ref *r, size_t n, const op_dev_act *acts, uint32_t corr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r[mid].correlation < corr) lo = mid + 1;
        else hi = mid;
    }
    int64_t best = -1;
    for (size_t i = lo; i < n && r[i].correlation == corr; i++)
        if (best < 0 || acts[r[i].act].kind == OP_DEV_RUNTIME) {
            best = r[i].act;
            if (acts[best].kind == OP_DEV_RUNTIME) break;
        }
    return best;
}

typedef struct mapper {
    opprof_trace *tr;
    const op_dev_batch *b;
    const op_dev_clock *clk;
    op_link_index ix;
    op_dev_ext *ext;        /* sorted copy */
    api_ref *api;           /* sorted */
    size_t napi;
    int64_t *ext_of;        /* host event index -> external id given, 0 none */
    size_t nhost;           /* events that existed before mapping */
    int64_t next_ext;
} mapper;

/* The operator open at the launch of `corr`, or -1: the range the launch
 * callback named (OPPROF_CUDA_CALLBACKS=1), else the innermost range of the
 * calling thread open when the API call began (CUPTI's records are stamped
 * with the session's own clock, so the two agree to the nanosecond). */
static int64_t launching_op(mapper *m, uint32_t corr, int64_t api)
{
    const op_dev_ext *x = find_ext(m->ext, m->b->next, corr);
    if (!x) {
        if (api < 0) return -1;
        const op_dev_act *a = &m->b->acts[api];
        int64_t th = op_trace_thread(m->tr, a->pid, a->tid);
        return th < 0 ? -1 : op_link_enclosing(&m->ix, m->tr, (uint32_t)th, (int64_t)a->start + m->clk->offset_ns);
    }
    int64_t start = op_timebase_ns(m->clk->tb, x->op_t0);
    if (api >= 0) {
        const op_dev_act *a = &m->b->acts[api];
        int64_t th = op_trace_thread(m->tr, a->pid, a->tid);
        return th < 0 ? -1 : op_link_find(&m->ix, m->tr, (uint32_t)th, start, UINT32_MAX);
    }
    /* The API record was lost: any host thread with a range that began then. */
    for (size_t th = 0; th < m->tr->nthreads; th++) {
        if (m->tr->threads[th].device >= 0) continue;
        int64_t e = op_link_find(&m->ix, m->tr, (uint32_t)th, start, UINT32_MAX);
        if (e >= 0) return e;
    }
    return -1;
}

static int64_t ext_id_of(mapper *m, int64_t op)
{
    if (op < 0 || (size_t)op >= m->nhost) return 0;
    if (!m->ext_of[op]) {
        op_event *e = &m->tr->ev[op];
        if (e->flags & OP_EV_HAS_EXT) {
            m->ext_of[op] = op_evx_of(m->tr, e)->external_id;
        } else {
            op_evx *x = op_evx_add(m->tr, e);
            if (!x) return -1;
            m->ext_of[op] = m->next_ext++;
            x->external_id = m->ext_of[op];
            e->flags |= OP_EV_HAS_EXT;
        }
    }
    return m->ext_of[op];
}

static uint32_t intern_args(opprof_trace *tr, const char *fmt_buf, int len)
{
    if (len < 0) return UINT32_MAX;
    return op_trace_intern(tr, fmt_buf, (size_t)len);
}

static int map_one(mapper *m, const op_dev_act *a)
{
    opprof_trace *tr = m->tr;
    int64_t off = m->clk->offset_ns;
    int64_t api = find_api(m->api, m->napi, m->b->acts, a->correlation);
    /* Activity launched before this recording began (the wait and warmup
     * steps of a schedule) belongs to no trace. */
    int64_t launch = api >= 0 ? (int64_t)m->b->acts[api].start + off : (int64_t)a->start + off;
    if (launch < 0) return 0;
    int64_t op = launching_op(m, a->correlation, act_is_api(a) ? (int64_t)(a - m->b->acts) : api);
    int64_t s = (int64_t)a->start + off, e = (int64_t)a->end + off;
    if (e < s) e = s;
    char buf[512], nbuf[96];
    int len;
    int64_t th;
    int cat;
    const char *name = a->name ? a->name : "";
    if (act_is_api(a)) {
        th = op_trace_thread(tr, a->pid, a->tid);
        if (th < 0) return -1;
        cat = a->kind == OP_DEV_RUNTIME ? OPPROF_CAT_CUDA_RUNTIME : OPPROF_CAT_CUDA_DRIVER;
        /* Clocks of two sources may disagree by a little: keep the call
         * inside the operator that made it, so the call tree says so. */
        if (op >= 0 && tr->ev[op].thread == (uint32_t)th) {
            int64_t os = tr->ev[op].start_ns, oe = os + tr->ev[op].dur_ns;
            s = s < os ? os : (s > oe ? oe : s);
            e = e < s ? s : (e > oe ? oe : e);
        }
        len = snprintf(buf, sizeof buf, "\"cbid\": %" PRIu32, a->cbid);
    } else {
        th = op_trace_thread(tr, a->device, a->stream);
        if (th < 0) return -1;
        tr->threads[th].device = (int32_t)a->device;
        double gbps = e > s ? (double)a->bytes / (double)(e - s) : 0.0;
        if (a->kind == OP_DEV_KERNEL) {
            cat = OPPROF_CAT_KERNEL;
            len = snprintf(buf, sizeof buf,
                           "\"device\": %" PRIu32 ", \"context\": %" PRIu32 ", \"stream\": %" PRIu32
                           ", \"registers per thread\": %" PRIu32 ", \"shared memory\": %" PRId64
                           ", \"grid\": [%d, %d, %d], \"block\": [%d, %d, %d]",
                           a->device, a->context, a->stream, a->registers,
                           (int64_t)a->static_smem + a->dynamic_smem, a->grid[0], a->grid[1], a->grid[2],
                           a->block[0], a->block[1], a->block[2]);
        } else {
            if (a->kind == OP_DEV_MEMCPY) {
                cat = OPPROF_CAT_GPU_MEMCPY;
                snprintf(nbuf, sizeof nbuf, "Memcpy %s (%s -> %s)", op_dev_memcpy_kind_name(a->copy_kind),
                         op_dev_memory_kind_name(a->src_kind), op_dev_memory_kind_name(a->dst_kind));
            } else {
                cat = OPPROF_CAT_GPU_MEMSET;
                snprintf(nbuf, sizeof nbuf, "Memset (%s)", op_dev_memory_kind_name(a->memory_kind));
            }
            name = nbuf;
            len = snprintf(buf, sizeof buf,
                           "\"device\": %" PRIu32 ", \"context\": %" PRIu32 ", \"stream\": %" PRIu32
                           ", \"bytes\": %" PRIu64 ", \"memory bandwidth (GB/s)\": %.6g",
                           a->device, a->context, a->stream, a->bytes, gbps);
        }
    }
    uint32_t nid = op_trace_intern(tr, name, strlen(name));
    uint32_t args = intern_args(tr, buf, len);
    if (nid == UINT32_MAX || args == UINT32_MAX) return -1;
    int64_t ext = ext_id_of(m, op); /* before the append: it may move the events */
    if (ext < 0) return -1;
    op_event *ev = op_trace_add_event(tr, (uint32_t)th, nid, cat, s, e - s);
    op_evx *x = ev ? op_evx_add(tr, ev) : NULL;
    if (!x) return -1;
    x->correlation = a->correlation;
    ev->flags |= OP_EV_HAS_CORR;
    x->args = args;
    if (ext) {
        x->external_id = ext;
        ev->flags |= OP_EV_HAS_EXT;
    }
    return 1;
}

int op_dev_map(opprof_trace *tr, const op_dev_batch *b, const op_dev_clock *clk)
{
    tr->dropped += b->dropped;
    tr->attempted += b->dropped;
    if (!b->n) return 0;
    mapper m = {.tr = tr, .b = b, .clk = clk, .nhost = tr->nev, .next_ext = 1};
    int rc = -1;
    for (size_t i = 0; i < tr->nev; i++)
        if ((tr->ev[i].flags & OP_EV_HAS_EXT) && op_evx_of(tr, &tr->ev[i])->external_id >= m.next_ext)
            m.next_ext = op_evx_of(tr, &tr->ev[i])->external_id + 1;
    m.ext = malloc((b->next ? b->next : 1) * sizeof *m.ext);
    m.api = malloc(b->n * sizeof *m.api);
    m.ext_of = calloc(tr->nev ? tr->nev : 1, sizeof *m.ext_of);
    if (!m.ext || !m.api || !m.ext_of || op_link_index_build(&m.ix, tr) != 0) goto out;
    if (b->next) memcpy(m.ext, b->ext, b->next * sizeof *m.ext);
    qsort(m.ext, b->next, sizeof *m.ext, ext_cmp);
    for (size_t i = 0; i < b->n; i++)
        if (act_is_api(&b->acts[i])) m.api[m.napi++] = (api_ref){b->acts[i].correlation, (uint32_t)i};
    qsort(m.api, m.napi, sizeof *m.api, api_cmp);
    uint64_t added = 0;
    for (size_t i = 0; i < b->n; i++) {
        if (!act_kept(&b->acts[i])) continue;
        int r = map_one(&m, &b->acts[i]);
        if (r < 0) goto out;
        added += (uint64_t)r;
    }
    tr->attempted += added;
    if (added) tr->options |= OP_TRACE_DEVICE;
    rc = 0;
out:
    op_link_index_free(&m.ix);
    free(m.ext);
    free(m.api);
    free(m.ext_of);
    return rc;
}

/* Each ended start/end range gives the open record its start wrote (now an
 * event closed at the stop) its duration. */
static int map_ranges(opprof_trace *tr, const op_range_done *r, size_t n, const op_timebase *tb)
{
    if (!n) return 0;
    op_link_index ix;
    if (op_link_index_build(&ix, tr) != 0) return -1;
    for (size_t i = 0; i < n; i++) {
        const op_range_done *s = &r[i];
        int64_t th = op_trace_thread(tr, s->pid, s->tid);
        const char *nm = s->site->name;
        uint32_t name = op_trace_intern(tr, nm, strlen(nm));
        int64_t start = op_timebase_ns(tb, s->t0);
        int64_t e = th < 0 ? -1 : op_link_find(&ix, tr, (uint32_t)th, start, name);
        if (e < 0) continue; /* dropped under the event cap */
        op_event *ev = &tr->ev[e];
        int64_t end = op_timebase_ns(tb, s->t1);
        if (end < ev->start_ns + ev->dur_ns) { /* else it ended after the stop */
            ev->dur_ns = end > start ? end - start : 0;
            ev->flags &= (uint8_t)~OPPROF_EVENT_FORCED_END;
        }
    }
    op_link_index_free(&ix);
    return 0;
}

int op_dev_apply(opprof_trace *tr, const op_dev_take *d, const op_timebase *tb)
{
    int rc = map_ranges(tr, d->ranges, d->nranges, tb);
    if (d->cuda) {
        op_dev_clock clk = {.offset_ns = -d->cupti_minus_mono - tb->mono0, .tb = tb};
        if (op_dev_map(tr, &d->batch, &clk) != 0) {
            rc = -1;
        } else if (d->props) {
            tr->device_props = op_trace_intern(tr, d->props, d->props_len);
            if (tr->device_props == UINT32_MAX) rc = -1;
        }
    }
    return rc == 0 ? OPPROF_OK : op_fail(OPPROF_E_NOMEM, "out of memory adding device activity to the trace");
}

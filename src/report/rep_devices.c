/* The devices view: which host operator launched each kernel, memcpy and
 * memset, by the rule of docs/DESIGN.md, "Reading a trace" (the launch with the
 * same correlation id, then its innermost enclosing non-launch event; with no
 * launch, the operator with the same External id), then per-kernel rows and
 * per-stream busy time. */
#include <stdlib.h>
#include <string.h>

#include "common/satmath.h"
#include "report/rep.h"

typedef struct id_ev {
    int64_t id;
    int32_t ev;
} id_ev;

static int by_id_then_ev(const void *a, const void *b)
{
    const id_ev *x = a, *y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return (x->ev > y->ev) - (x->ev < y->ev);
}

/* The entry for id in a sorted array: the last of its run when `last`, else
 * the first; -1 when absent. */
static int32_t find_id(const id_ev *a, size_t n, int64_t id, int last)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    if (lo == n || a[lo].id != id) return -1;
    if (last)
        while (lo + 1 < n && a[lo + 1].id == id) lo++;
    return a[lo].ev;
}

int rep_launches_build(rep_trace *r)
{
    const opprof_trace *t = r->t;
    size_t ndev = 0, nlaunch = 0, next = 0;
    for (size_t i = 0; i < t->nev; i++) {
        const op_event *e = &t->ev[i];
        ndev += op_cat_is_device(e->cat);
        if (op_cat_is_launch(e->cat)) nlaunch += (e->flags & OP_EV_HAS_CORR) != 0;
        else if (op_cat_is_host(e->cat)) next += (e->flags & OP_EV_HAS_EXT) != 0;
    }
    if (!ndev) return 0;
    r->launch_op = malloc(t->nev * sizeof *r->launch_op);
    id_ev *corr = malloc((nlaunch + 1) * sizeof *corr), *ext = malloc((next + 1) * sizeof *ext);
    if (!r->launch_op || !corr || !ext) {
        free(corr);
        free(ext);
        return -1;
    }
    nlaunch = next = 0;
    for (size_t i = 0; i < t->nev; i++) {
        const op_event *e = &t->ev[i];
        r->launch_op[i] = -1;
        if (op_cat_is_launch(e->cat) && (e->flags & OP_EV_HAS_CORR)) corr[nlaunch++] = (id_ev){op_evx_of(t, e)->correlation, (int32_t)i};
        else if (op_cat_is_host(e->cat) && !op_cat_is_launch(e->cat) && (e->flags & OP_EV_HAS_EXT))
            ext[next++] = (id_ev){op_evx_of(t, e)->external_id, (int32_t)i};
    }
    qsort(corr, nlaunch, sizeof *corr, by_id_then_ev);
    qsort(ext, next, sizeof *ext, by_id_then_ev);
    for (size_t i = 0; i < t->nev; i++) {
        const op_event *d = &t->ev[i];
        if (!op_cat_is_device(d->cat)) continue;
        int32_t target = -1;
        int32_t launch = (d->flags & OP_EV_HAS_CORR) ? find_id(corr, nlaunch, op_evx_of(t, d)->correlation, 1) : -1;
        if (launch >= 0) {
            target = t->ev[launch].parent;
            while (target >= 0 && op_cat_is_launch(t->ev[target].cat)) target = t->ev[target].parent;
        } else if (d->flags & OP_EV_HAS_EXT) {
            target = find_id(ext, next, op_evx_of(t, d)->external_id, 0);
        }
        r->launch_op[i] = target;
    }
    free(corr);
    free(ext);
    return 0;
}

/* One (kernel row, launching operator name) pair and the time it adds. */
typedef struct row_op {
    uint32_t row, op_name;
    int64_t ns;
    uint64_t count;
} row_op;

static int by_row_op(const void *a, const void *b)
{
    const row_op *x = a, *y = b;
    if (x->row != y->row) return x->row < y->row ? -1 : 1;
    return (x->op_name > y->op_name) - (x->op_name < y->op_name);
}

static int by_row_then_time(const void *a, const void *b)
{
    const row_op *x = a, *y = b;
    if (x->row != y->row) return x->row < y->row ? -1 : 1;
    return (x->ns < y->ns) - (x->ns > y->ns);
}

typedef struct kern_row {
    uint32_t name, cat;
    uint64_t count;
    int64_t total, min, max;
} kern_row;

/* A device event's group: (category, name) in one key, with its position so
 * that sorting keeps the groups in first-occurrence order within a key. */
typedef struct dev_key {
    uint64_t key;
    uint32_t ev;
} dev_key;

static int by_key_then_ev(const void *a, const void *b)
{
    const dev_key *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->ev > y->ev) - (x->ev < y->ev);
}

#define LAUNCHERS_SHOWN 3

static void kernels_json(rep_out *o, const opprof_trace *t, const kern_row *k, size_t nk, row_op *ro, size_t nro)
{
    rep_puts(o, "\"kernels\":[");
    size_t j = 0;
    for (size_t i = 0; i < nk; i++) {
        rep_puts(o, i ? ",\n[" : "[");
        rep_json_cstr(o, op_strtab_get(&t->str, k[i].name));
        rep_printf(o, ",%u,%llu,%lld,%lld,%lld,[", k[i].cat, (unsigned long long)k[i].count, (long long)k[i].total,
                   (long long)k[i].min, (long long)k[i].max);
        for (int shown = 0; j < nro && ro[j].row == i; j++) {
            if (shown == LAUNCHERS_SHOWN) continue;
            rep_puts(o, shown++ ? ",[" : "[");
            rep_json_cstr(o, ro[j].op_name == UINT32_MAX ? "" : op_strtab_get(&t->str, ro[j].op_name));
            rep_printf(o, ",%llu,%lld]", (unsigned long long)ro[j].count, (long long)ro[j].ns);
        }
        rep_puts(o, "]]");
    }
    rep_puts(o, "]");
}

int rep_devices_json(rep_out *o, const rep_trace *r)
{
    const opprof_trace *t = r->t;
    rep_puts(o, ",\"devices\":{");
    if (!r->launch_op) {
        rep_puts(o, "\"kernels\":[]}");
        return 0;
    }
    size_t ndev = 0;
    for (size_t i = 0; i < t->nev; i++) ndev += op_cat_is_device(t->ev[i].cat);
    kern_row *k = malloc(ndev * sizeof *k);
    row_op *ro = malloc(ndev * sizeof *ro);
    dev_key *keys = malloc(ndev * sizeof *keys);
    if (!k || !ro || !keys) {
        free(k);
        free(ro);
        free(keys);
        return -1;
    }
    size_t nk = 0, nro = 0;
    int sat = 0; /* each time is under 2^61 ns, a sum of a few can pass 2^63: it stays at the limit */
    for (size_t i = 0; i < t->nev; i++)
        if (op_cat_is_device(t->ev[i].cat)) keys[nro++] = (dev_key){(uint64_t)t->ev[i].cat << 32 | t->ev[i].name, (uint32_t)i};
    qsort(keys, nro, sizeof *keys, by_key_then_ev);
    nro = 0;
    for (size_t j = 0; j < ndev; j++) {
        const op_event *e = &t->ev[keys[j].ev];
        if (!j || keys[j].key != keys[j - 1].key) k[nk++] = (kern_row){e->name, e->cat, 0, 0, e->dur_ns, e->dur_ns};
        kern_row *kr = &k[nk - 1];
        kr->count++;
        kr->total = op_sat_add(kr->total, e->dur_ns, &sat);
        if (e->dur_ns < kr->min) kr->min = e->dur_ns;
        if (e->dur_ns > kr->max) kr->max = e->dur_ns;
        int32_t op = r->launch_op[keys[j].ev];
        ro[nro++] = (row_op){(uint32_t)(nk - 1), op >= 0 ? t->ev[op].name : UINT32_MAX, e->dur_ns, 1};
    }
    free(keys);
    /* sum per (row, launcher), then order each row's launchers by time */
    qsort(ro, nro, sizeof *ro, by_row_op);
    size_t w = 0;
    for (size_t i = 0; i < nro; i++) {
        if (w && ro[w - 1].row == ro[i].row && ro[w - 1].op_name == ro[i].op_name) {
            ro[w - 1].ns = op_sat_add(ro[w - 1].ns, ro[i].ns, &sat);
            ro[w - 1].count++;
        } else {
            ro[w++] = ro[i];
        }
    }
    qsort(ro, w, sizeof *ro, by_row_then_time);
    kernels_json(o, t, k, nk, ro, w);
    rep_puts(o, "}");
    free(k);
    free(ro);
    return 0;
}

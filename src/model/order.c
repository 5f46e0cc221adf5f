/* Ordering the events at the least resident memory. Events already in order
 * (a live session of one thread, most files) need nothing. A few ordered
 * runs (a live session's threads, one after another) are merged into a new
 * array while the pages of the old one are given back as each run is
 * consumed, so the two are never both resident. Anything else sorts 4-byte
 * indices and permutes the events in place along the permutation's cycles. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "capture/evstore.h"
#include "common/pages.h"
#include "common/sort.h"
#include "model/model.h"

static int ev_before(const op_event *a, const op_event *b)
{
    if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns;
    return a->start_ns + a->dur_ns > b->start_ns + b->dur_ns;
}

static int idx_less(const op_event *ev, size_t a, size_t b)
{
    if (ev_before(&ev[a], &ev[b])) return 1;
    if (ev_before(&ev[b], &ev[a])) return 0;
    return a < b;
}

static int ev_index_before(const void *ctx, uint32_t a, uint32_t b)
{
    const op_event *ev = ctx;
    return ev_before(&ev[a], &ev[b]);
}

/* Moves event k[j] to place j for every j along the permutation's cycles, so
 * that reordering needs one spare event, not a second array of them. Leaves
 * k[j] == j. Random access: slow for large arrays, hence the merge below. */
static void permute_events(op_event *ev, uint32_t *k, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (k[i] == i) continue;
        op_event held = ev[i];
        size_t j = i;
        while (k[j] != i) {
            size_t from = k[j];
            ev[j] = ev[from];
            k[j] = (uint32_t)j;
            j = from;
        }
        ev[j] = held;
        k[j] = (uint32_t)j;
    }
}

/* One ordered run of the input: the next event it gives, its end, and the
 * address below which its pages were given back. */
typedef struct ev_run {
    size_t at, end;
    uintptr_t released;
} ev_run;

static int run_less(const op_event *ev, const ev_run *r, uint32_t a, uint32_t b)
{
    return idx_less(ev, r[a].at, r[b].at);
}

static void run_sift(const op_event *ev, const ev_run *r, uint32_t *h, size_t m, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, best = i;
        if (l < m && run_less(ev, r, h[l], h[best])) best = l;
        if (l + 1 < m && run_less(ev, r, h[l + 1], h[best])) best = l + 1;
        if (best == i) return;
        uint32_t x = h[i];
        h[i] = h[best];
        h[best] = x;
        i = best;
    }
}

/* Gives back the whole pages of run r's events consumed so far. They lie
 * inside the event array's own block and are never read again, so the
 * allocator's bookkeeping is not touched; free() later returns the rest. */
static void release_consumed(const op_event *ev, ev_run *r, uintptr_t page)
{
    if (!page) return; /* the event store's block: its pages are kept written for the next session */
    uintptr_t hi = (uintptr_t)&ev[r->at] & ~(page - 1);
    if (hi > r->released) {
        (void)madvise((void *)r->released, hi - r->released, MADV_DONTNEED);
        r->released = hi;
    }
}

#define RELEASE_EVERY 16384 /* events of a run between two releases: 640 KiB */

/* Merges the nruns ordered runs of t's events, through a heap of the runs'
 * heads, into a new array; ties go to the lower index, so the merge is
 * stable. pos (when not NULL) receives each event's new index. */
static int merge_runs(opprof_trace *t, size_t nruns, int32_t *pos)
{
    size_t n = t->nev;
    const op_event *ev = t->ev;
    long ps = sysconf(_SC_PAGESIZE);
    uintptr_t page = op_evstore_owns(ev) ? 0 : ps > 0 ? (uintptr_t)ps : 4096;
    op_event *out = malloc(n * sizeof *out);
    ev_run *r = malloc(nruns * sizeof *r);
    uint32_t *h = malloc(nruns * sizeof *h);
    if (!out || !r || !h) {
        free(out);
        free(r);
        free(h);
        return -1;
    }
    op_advise_huge(out, n * sizeof *out);
    size_t m = 0;
    r[0].at = 0;
    for (size_t i = 1; i < n; i++)
        if (ev_before(&ev[i], &ev[i - 1])) {
            r[m++].end = i;
            r[m].at = i;
        }
    r[m++].end = n;
    for (size_t i = 0; i < m; i++) {
        h[i] = (uint32_t)i;
        r[i].released = ((uintptr_t)&ev[r[i].at] + page - 1) & ~(page - 1);
    }
    for (size_t i = m / 2; i-- > 0;) run_sift(ev, r, h, m, i);
    for (size_t o = 0; o < n; o++) {
        ev_run *top = &r[h[0]];
        size_t from = top->at++;
        out[o] = ev[from];
        if (pos) pos[from] = (int32_t)o;
        if (top->at == top->end) {
            release_consumed(ev, top, page);
            h[0] = h[--m];
        } else if (top->at % RELEASE_EVERY == 0) {
            release_consumed(ev, top, page);
        }
        run_sift(ev, r, h, m, 0);
    }
    free(r);
    free(h);
    op_trace_free_events(t->ev);
    t->ev = out;
    t->cap_ev = n;
    return 0;
}

/* The producer's event indices (memory events it placed) to the new order. */
static void move_mem_links(opprof_trace *t, const int32_t *pos)
{
    for (size_t m = 0; m < t->nmem; m++) {
        int32_t *enc = &t->mem[m].enclosing;
        if (*enc >= 0) *enc = (size_t)*enc < t->nev ? pos[*enc] : OP_MEM_FIND;
    }
}

int op_order_events(opprof_trace *t)
{
    size_t n = t->nev, nruns = 1;
    for (size_t i = 1; i < n; i++) nruns += ev_before(&t->ev[i], &t->ev[i - 1]);
    if (nruns == 1) return 0;
    if (n > INT32_MAX) return -1;
    int given = 0;
    for (size_t m = 0; m < t->nmem && !given; m++) given = t->mem[m].enclosing >= 0;
    int32_t *pos = given ? malloc(n * sizeof *pos) : NULL;
    if (given && !pos) return -1;
    /* Few runs: merge them (28 bytes a run); many: sort (8 bytes an event). */
    if (nruns <= n / 16) {
        if (merge_runs(t, nruns, pos) != 0) {
            free(pos);
            return -1;
        }
    } else {
        uint32_t *k = malloc(n * sizeof *k);
        if (!k) {
            free(pos);
            return -1;
        }
        for (size_t i = 0; i < n; i++) k[i] = (uint32_t)i;
        if (op_sort_index(k, n, ev_index_before, t->ev) != 0) {
            free(k);
            free(pos);
            return -1;
        }
        if (pos)
            for (size_t j = 0; j < n; j++) pos[k[j]] = (int32_t)j;
        permute_events(t->ev, k, n);
        free(k);
    }
    if (pos) move_mem_links(t, pos);
    free(pos);
    return 0;
}

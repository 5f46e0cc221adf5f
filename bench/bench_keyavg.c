/* Key averages plus the table over 1,000,000 synthetic events (50 names,
 * call trees up to 6 deep, 4 threads). Target: 100 ms. The reference, timed
 * in the same run, groups the same events by hashing each name's text, as a
 * string-keyed dictionary (PyTorch's) does; ours indexes by strtab id. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/model.h"
#include "timing.h"

#define NEVENTS 1000000u
#define NNAMES 50
#define NTHREADS 4
#define MAX_DEPTH 6
#define REPEAT 7
#define TARGET_MS 100.0

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* One call tree: an event and up to 3 children inside it, recursively. */
static size_t tree(opprof_trace *t, uint32_t th, const uint32_t *names, int depth, int64_t start, int64_t dur,
                   size_t budget)
{
    if (!budget) return 0;
    op_event *e = op_trace_add_event(t, th, names[next() % NNAMES], OPPROF_CAT_CPU_OP, start, dur);
    if (!e) exit(1);
    uint64_t flops = next() % 4 ? 0 : next() % 100000;
    if (flops) op_evx_add(t, e)->flops = flops;
    size_t made = 1;
    if (depth + 1 >= MAX_DEPTH) return made;
    int kids = 1 + (int)(next() % 3);
    int64_t slot = dur / (kids + 1);
    for (int k = 0; k < kids && made < budget; k++)
        made += tree(t, th, names, depth + 1, start + slot / 2 + k * slot, slot * 3 / 4, budget - made);
    return made;
}

static opprof_trace *make_trace(void)
{
    opprof_trace *t = op_trace_new();
    uint32_t names[NNAMES];
    for (int i = 0; i < NNAMES; i++) {
        char n[64];
        int len = snprintf(n, sizeof n, "aten::synthetic_operator_%02d", i);
        names[i] = op_trace_intern(t, n, (size_t)len);
    }
    t->options |= OP_TRACE_FLOPS;
    for (int th = 0; th < NTHREADS; th++) {
        uint32_t tid = (uint32_t)op_trace_thread(t, 1, 100 + th);
        size_t made = 0, want = NEVENTS / NTHREADS;
        for (int64_t start = th * 7; made < want; start += 2000000)
            made += tree(t, tid, names, 0, start, 1000000, want - made);
    }
    return t;
}

/* The reference: the same grouping keyed by each event's name text. */
typedef struct ref_slot {
    const char *name;
    uint64_t count;
    int64_t self, total;
} ref_slot;

static size_t reference(const opprof_trace *t)
{
    enum { CAP = 1024 };
    static ref_slot slots[CAP];
    memset(slots, 0, sizeof slots);
    size_t groups = 0;
    for (size_t i = 0; i < t->nev; i++) {
        const op_event *e = &t->ev[i];
        const char *name = op_strtab_get(&t->str, e->name);
        size_t j = op_hash_bytes(name, strlen(name)) & (CAP - 1);
        while (slots[j].name && strcmp(slots[j].name, name)) j = (j + 1) & (CAP - 1);
        if (!slots[j].name) slots[j].name = name, groups++;
        slots[j].count++;
        slots[j].self += e->self_ns;
        slots[j].total += e->dur_ns;
    }
    return groups;
}

int main(void)
{
    double t0 = now_ms();
    opprof_trace *t = make_trace();
    double t1 = now_ms();
    if (op_trace_finish(t) != OPPROF_OK) return 1;
    double t2 = now_ms();
    printf("bench_keyavg: %zu events, %d names, depth <= %d, %d threads (build %.0f ms, finish %.0f ms)\n", t->nev,
           NNAMES, MAX_DEPTH, NTHREADS, t1 - t0, t2 - t1);

    double ours[REPEAT], ref[REPEAT], keyed[REPEAT];
    opprof_avg_options by_shape = {.group_by_input_shape = 1};
    size_t rows = 0, len = 0, ref_groups = 0;
    for (int r = 0; r < REPEAT; r++) {
        double a = now_ms();
        opprof_key_averages *ka;
        char *text;
        if (opprof_key_averages(t, NULL, &ka) != OPPROF_OK) return 1;
        if (opprof_table_string(ka, "cpu_time_total", -1, &text) != OPPROF_OK) return 1;
        double b = now_ms();
        rows = opprof_key_averages_count(ka);
        len = strlen(text);
        free(text);
        opprof_key_averages_free(ka);
        double c = now_ms();
        ref_groups = reference(t);
        double d = now_ms();
        ours[r] = b - a;
        ref[r] = d - c;
        /* the hashed path that grouping by shapes or stacks takes */
        if (opprof_key_averages(t, &by_shape, &ka) != OPPROF_OK) return 1;
        keyed[r] = now_ms() - d;
        opprof_key_averages_free(ka);
    }
    qsort(ours, REPEAT, sizeof ours[0], cmp_double);
    qsort(ref, REPEAT, sizeof ref[0], cmp_double);
    qsort(keyed, REPEAT, sizeof keyed[0], cmp_double);
    double m = ours[REPEAT / 2], mr = ref[REPEAT / 2];
    printf("  key averages + table: %.2f ms median of %d (%zu rows, %zu bytes of table)\n", m, REPEAT, rows, len);
    printf("  target %.0f ms: %.3f of the target (%s)\n", TARGET_MS, m / TARGET_MS, m <= TARGET_MS ? "met" : "MISSED");
    printf("  reference, grouping by name text: %.2f ms (%zu groups); ours is %.2fx its time\n", mr, ref_groups,
           m / mr);
    printf("  key averages grouped by input shape (hashed keys): %.2f ms\n", keyed[REPEAT / 2]);
    opprof_trace_free(t);
    return m <= TARGET_MS ? 0 : 2;
}

/* Helpers for the model tests: per-name totals of a recorded trace, and the
 * names and counts in a PyTorch trace fixture. */
#ifndef OPPROF_TESTS_NN_TRACE_H
#define OPPROF_TESTS_NN_TRACE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "opprof_trace.h"

typedef struct name_total {
    const char *name;
    uint64_t count, flops;
    int64_t self_ns, total_ns, self_mem, mem;
} name_total;

typedef struct name_totals {
    name_total row[256];
    size_t n;
} name_totals;

static inline name_total *name_slot(name_totals *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->row[i].name, name)) return &t->row[i];
    if (t->n == 256) return NULL;
    memset(&t->row[t->n], 0, sizeof t->row[0]);
    t->row[t->n].name = name;
    return &t->row[t->n++];
}

/* Sums by name; names point into the trace. */
static inline void totals_of(const opprof_trace *tr, name_totals *t)
{
    t->n = 0;
    for (size_t i = 0; i < opprof_trace_event_count(tr); i++) {
        opprof_event e;
        if (opprof_trace_event(tr, i, &e) != 0 || e.category == OPPROF_CAT_MEMORY) continue;
        name_total *r = name_slot(t, e.name);
        if (!r) continue;
        r->count++;
        r->flops += e.flops;
        r->self_ns += e.self_ns;
        r->total_ns += e.dur_ns;
        r->self_mem += e.self_cpu_memory_usage;
        r->mem += e.cpu_memory_usage;
    }
}

static inline const name_total *name_find(const name_totals *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->row[i].name, name)) return &t->row[i];
    return NULL;
}

static inline uint64_t name_count(const name_totals *t, const char *name)
{
    const name_total *r = name_find(t, name);
    return r ? r->count : 0;
}

/* Counts by name of a legacy PyTorch trace (a JSON array of "X" events);
 * names point into *doc, which the caller frees with json_free. */
static inline int fixture_trace_counts(const char *path, json **doc, name_totals *t)
{
    t->n = 0;
    *doc = json_read_file(path);
    if (!*doc || (*doc)->type != JSON_ARR) return -1;
    for (size_t i = 0; i < (*doc)->n; i++) {
        const json *name = json_get(&(*doc)->items[i], "name"), *ph = json_get(&(*doc)->items[i], "ph");
        if (!name || name->type != JSON_STR || !ph || ph->type != JSON_STR || strcmp(ph->str, "X")) continue;
        name_total *r = name_slot(t, name->str);
        if (r) r->count++;
    }
    return 0;
}

#endif

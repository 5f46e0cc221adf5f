/* The page's string table: the strtab ids its slices and threads use,
 * renumbered so that the most used get the shortest varints. A block of
 * merged events names only its longest member, so a trace merged down
 * carries none of its short events' shapes and arguments. */
#include <stdlib.h>
#include <string.h>

#include "report/rep.h"

typedef struct str_use {
    uint32_t count, id;
} str_use;

static int by_use(const void *a, const void *b)
{
    const str_use *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

int rep_strings_build(rep_trace *r)
{
    const opprof_trace *t = r->t;
    uint32_t n = t->str.count ? t->str.count : 1;
    uint32_t *cnt = calloc(n, sizeof *cnt);
    r->strs.map = malloc(n * sizeof *r->strs.map);
    if (!cnt || !r->strs.map) {
        free(cnt);
        return -1;
    }
    for (size_t p = 0; p < r->npage; p++) {
        uint32_t it = r->order[p];
        const op_event *e = &t->ev[it < t->nev ? it : r->blocks[it - t->nev].longest];
        const op_evx *x = op_evx_of(t, e);
        uint32_t ids[4] = {e->name, 0, 0, 0};
        if (it < t->nev) { /* a block carries its longest member's name only */
            ids[1] = x->shapes;
            ids[2] = x->types;
            ids[3] = x->args;
        }
        for (int k = 0; k < 4; k++)
            if (ids[k] < n) cnt[ids[k]]++;
    }
    for (size_t i = 0; i < t->nstacks; i++)
        for (uint32_t k = 0; k < t->stacks[i].nframes; k++)
            if (t->stacks[i].frames[k] < n) cnt[t->stacks[i].frames[k]]++;
    for (size_t i = 0; i < t->nthreads; i++) {
        if (t->threads[i].name < n) cnt[t->threads[i].name]++;
        if (t->threads[i].pid_name < n) cnt[t->threads[i].pid_name]++;
    }
    uint32_t used = 0;
    for (uint32_t i = 1; i < n; i++) used += cnt[i] != 0;
    str_use *u = malloc((used ? used : 1) * sizeof *u);
    r->strs.ids = malloc((used + 1) * sizeof *r->strs.ids);
    if (!u || !r->strs.ids) {
        free(cnt);
        free(u);
        return -1;
    }
    used = 0;
    for (uint32_t i = 1; i < n; i++)
        if (cnt[i]) u[used++] = (str_use){cnt[i], i};
    qsort(u, used, sizeof *u, by_use);
    for (uint32_t i = 0; i < n; i++) r->strs.map[i] = UINT32_MAX;
    r->strs.map[0] = 0;
    r->strs.ids[0] = 0;
    for (uint32_t k = 0; k < used; k++) {
        r->strs.ids[k + 1] = u[k].id;
        r->strs.map[u[k].id] = k + 1;
    }
    r->strs.n = used + 1;
    free(u);
    free(cnt);
    return 0;
}

void rep_strings_json(rep_out *o, const rep_trace *r)
{
    const op_strtab *st = &r->t->str;
    rep_puts(o, "[\"\"");
    for (uint32_t k = 1; k < r->strs.n; k++) {
        rep_puts(o, k % 16 ? "," : ",\n"); /* short lines for anyone reading the page source */
        rep_json_str(o, op_strtab_get(st, r->strs.ids[k]), op_strtab_len(st, r->strs.ids[k]));
    }
    rep_puts(o, "]");
}


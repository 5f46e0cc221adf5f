/* opprof_trace_top_calls: the names that made the most calls, recorded and
 * dropped together, for saying what to leave out when the cap was reached. */
#include <stdio.h>
#include <stdlib.h>

#include "model/model.h"

size_t opprof_trace_top_calls(const opprof_trace *t, size_t n, const char **names, uint64_t *calls)
{
    if (!op_trace_model(t) || !n || !names || !calls) return 0;
    size_t nids = t->str.count;
    uint64_t *count = calloc(nids ? nids : 1, sizeof *count);
    if (!count) return 0;
    for (size_t i = 0; i < t->nev; i++)
        if (op_cat_is_host(t->ev[i].cat) && t->ev[i].name < nids) count[t->ev[i].name]++;
    for (size_t id = 0; id < t->ndropped_calls && id < nids; id++) count[id] += t->dropped_calls[id];
    /* n is small (a handful of names): keep the best n by insertion. */
    size_t have = 0;
    for (size_t id = 0; id < nids; id++) {
        if (!count[id]) continue;
        size_t k = have < n ? have : n;
        while (k > 0 && calls[k - 1] < count[id]) k--;
        if (k >= n) continue;
        size_t last = have < n ? have : n - 1;
        for (size_t j = last; j > k; j--) {
            names[j] = names[j - 1];
            calls[j] = calls[j - 1];
        }
        names[k] = op_strtab_get(&t->str, (uint32_t)id);
        calls[k] = count[id];
        if (have < n) have++;
    }
    free(count);
    return have;
}

/* A name as an opprof_function_exclude pattern that matches it: fnmatch's
 * special characters escaped, the list's comma and the shell's quote
 * replaced by '?' (any one character). */
static void put_pattern(FILE *f, const char *name)
{
    for (const char *p = name; *p; p++) {
        if (*p == ',' || *p == '\'') {
            fputc('?', f);
        } else {
            if (*p == '*' || *p == '?' || *p == '[' || *p == '\\') fputc('\\', f);
            fputc(*p, f);
        }
    }
}

int opprof_trace_drop_note(const opprof_trace *t, const char *who, const char *max_option, const char *exclude_option,
                           FILE *f)
{
    if (!op_trace_model(t) || !f || !t->dropped) return OPPROF_OK;
    const char *names[5];
    uint64_t calls[5];
    size_t n = opprof_trace_top_calls(t, 5, names, calls);
    fprintf(f, "%s: %llu of %llu events were dropped: the event cap was reached", who,
            (unsigned long long)t->dropped, (unsigned long long)(t->attempted ? t->attempted : t->dropped + t->nev));
    if (max_option) fprintf(f, " (raise it with %s)", max_option);
    fputs("\n", f);
    if (n) {
        fprintf(f, "%s: the most calls:", who);
        for (size_t i = 0; i < n; i++) fprintf(f, "%s %s (%llu)", i ? "," : "", names[i], (unsigned long long)calls[i]);
        fputs("\n", f);
    }
    if (n && exclude_option) {
        fprintf(f, "%s: to leave them out: %s '", who, exclude_option);
        for (size_t i = 0; i < n; i++) {
            if (i) fputc(',', f);
            put_pattern(f, names[i]);
        }
        fputs("'\n", f);
    }
    return ferror(f) ? OPPROF_E_IO : OPPROF_OK;
}

/* Folded-stack totals per distinct line (see stacksum.h). */
#include "export/stacksum.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static int grow_slots(op_stacksum *s)
{
    size_t n = s->nslots ? s->nslots * 2 : 256;
    uint32_t *sl = calloc(n, sizeof *sl);
    if (!sl) return -1;
    for (size_t i = 0; i < s->n; i++) {
        const op_stacksum_line *l = &s->lines[i];
        size_t k = hash(s->text + l->off, l->len) & (n - 1);
        while (sl[k]) k = (k + 1) & (n - 1);
        sl[k] = (uint32_t)i + 1;
    }
    free(s->slots);
    s->slots = sl;
    s->nslots = n;
    return 0;
}

int op_stacksum_add(op_stacksum *s, const char *line, size_t len, int64_t ns)
{
    if ((s->n + 1) * 2 > s->nslots && grow_slots(s) != 0) return -1;
    size_t k = hash(line, len) & (s->nslots - 1);
    for (; s->slots[k]; k = (k + 1) & (s->nslots - 1)) {
        op_stacksum_line *l = &s->lines[s->slots[k] - 1];
        if (l->len == len && memcmp(s->text + l->off, line, len) == 0) {
            l->ns += ns;
            return 0;
        }
    }
    if (s->n == UINT32_MAX - 1) return -1;
    if (s->n == s->cap) {
        size_t c = s->cap ? s->cap * 2 : 64;
        op_stacksum_line *p = realloc(s->lines, c * sizeof *p);
        if (!p) return -1;
        s->lines = p;
        s->cap = c;
    }
    if (s->text_cap - s->text_n < len) {
        size_t c = s->text_cap ? s->text_cap : 4096;
        while (c - s->text_n < len) c *= 2;
        char *p = realloc(s->text, c);
        if (!p) return -1;
        s->text = p;
        s->text_cap = c;
    }
    memcpy(s->text + s->text_n, line, len);
    s->lines[s->n] = (op_stacksum_line){s->text_n, len, ns};
    s->text_n += len;
    s->slots[k] = (uint32_t)++s->n;
    return 0;
}

void op_stacksum_free(op_stacksum *s)
{
    free(s->text);
    free(s->lines);
    free(s->slots);
    memset(s, 0, sizeof *s);
}

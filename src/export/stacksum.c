/* Folded-stack totals per distinct line (see stacksum.h). */
#include "export/stacksum.h"

#include <stdlib.h>
#include <string.h>

#include "common/vec.h"

typedef struct probe {
    const op_stacksum *s;
    const char *line;
    size_t len;
} probe;

static int same_line(const void *ctx, uint64_t i)
{
    const probe *p = ctx;
    const op_stacksum_line *l = &p->s->lines[i];
    return l->len == p->len && memcmp(p->s->text.p + l->off, p->line, p->len) == 0;
}

int op_stacksum_add(op_stacksum *s, const char *line, size_t len, int64_t ns)
{
    uint64_t h = op_hash_bytes(line, len);
    probe p = {s, line, len};
    uint64_t *i = op_map_find_h(&s->ix, h, same_line, &p);
    if (i) {
        s->lines[*i].ns += ns;
        return 0;
    }
    if (s->n == UINT32_MAX - 1) return -1;
    if (op_grow(&s->lines, &s->cap, s->n + 1, sizeof *s->lines) != 0 || op_map_reserve(&s->ix, s->n + 1) != 0)
        return -1;
    size_t off = s->text.n;
    if (op_buf_put(&s->text, line, len) != 0) return -1;
    s->lines[s->n] = (op_stacksum_line){off, len, ns};
    return op_map_add_h(&s->ix, h, s->n++);
}

void op_stacksum_free(op_stacksum *s)
{
    op_buf_free(&s->text);
    free(s->lines);
    op_map_free(&s->ix);
    memset(s, 0, sizeof *s);
}

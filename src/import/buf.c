/* The reader's growable byte buffer (see buf.h). */
#include "import/buf.h"

int op_buf_reserve(op_buf *b, size_t extra)
{
    size_t need = b->n + extra;
    if (need < b->n) return -1;
    if (need <= b->cap) return 0;
    size_t c = b->cap ? b->cap : 64;
    while (c < need) c *= 2;
    char *p = realloc(b->p, c);
    if (!p) return -1;
    b->p = p;
    b->cap = c;
    return 0;
}

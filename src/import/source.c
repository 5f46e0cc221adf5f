/* Reading a byte source (source.h): the bytes given back first. */
#include <string.h>

#include "import/source.h"

ssize_t op_source_read(op_source *s, unsigned char *buf, size_t cap)
{
    if (!cap) return 0;
    if (s->nback) {
        size_t n = s->nback < cap ? s->nback : cap;
        memcpy(buf, s->back, n);
        memmove(s->back, s->back + n, s->nback - n);
        s->nback -= n;
        return (ssize_t)n;
    }
    return s->read(s, buf, cap);
}

void op_source_close(op_source *s)
{
    if (s) s->close(s);
}

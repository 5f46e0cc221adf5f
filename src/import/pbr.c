/* The bounds-checked protocol-buffers decoder (see pbr.h). */
#include "import/pbr.h"

int op_pbr_next(op_pbr *r, op_pbf *f, const char **why)
{
    if (r->p >= r->end) return 0;
    uint64_t tag;
    if (op_pbr_varint(r, &tag, why) != 0) return -1;
    if (tag >> 3 == 0 || tag >> 3 > 0x1fffffff) {
        *why = "a field number is 0 or too large";
        return -1;
    }
    f->field = (uint32_t)(tag >> 3);
    f->wire = (int)(tag & 7);
    switch (f->wire) {
    case 0: return op_pbr_varint(r, &f->v, why) == 0 ? 1 : -1;
    case 1:
    case 5: {
        size_t n = f->wire == 1 ? 8 : 4;
        if ((size_t)(r->end - r->p) < n) {
            *why = "a fixed-size field is cut off";
            return -1;
        }
        f->v = 0;
        for (size_t i = 0; i < n; i++) f->v |= (uint64_t)r->p[i] << (8 * i);
        r->p += n;
        return 1;
    }
    case 2: {
        uint64_t n;
        if (op_pbr_varint(r, &n, why) != 0) return -1;
        if (n > (uint64_t)(r->end - r->p)) {
            *why = "a length runs past the end of its message";
            return -1;
        }
        f->sub.p = r->p;
        f->sub.end = r->p + n;
        r->p += n;
        return 1;
    }
    default: *why = "a field has an unknown or unsupported wire type (groups are not read)"; return -1;
    }
}

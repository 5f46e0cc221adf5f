/* "Call stack" text into a model stack (callstack.h). */
#include "import/callstack.h"

#include <stdlib.h>
#include <string.h>

uint32_t op_import_call_stack(opprof_trace *t, op_map *seen, const char *s, size_t n)
{
    if (!n) return 0;
    uint32_t text = op_trace_intern(t, s, n);
    if (text == UINT32_MAX) return UINT32_MAX;
    uint32_t known;
    if (op_map_get_u32(seen, text, &known)) return known;
    size_t nframes = 1;
    for (size_t i = 0; i < n; i++) nframes += s[i] == ';';
    uint32_t *frames = malloc(nframes * sizeof *frames);
    if (!frames) return UINT32_MAX;
    uint32_t k = 0, r = 1;
    for (size_t at = 0; at <= n && r; k++) {
        const char *semi = memchr(s + at, ';', n - at);
        size_t len = semi ? (size_t)(semi - (s + at)) : n - at;
        if ((frames[k] = op_trace_intern(t, s + at, len)) == UINT32_MAX) r = 0;
        at += len + 1;
    }
    if (r) r = op_trace_add_stack(t, frames, k);
    free(frames);
    if (!r || op_map_put(seen, text, r) != 0) return UINT32_MAX;
    t->options |= OP_TRACE_STACK;
    return r;
}

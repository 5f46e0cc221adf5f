/* torch's "Call stack" arg (frames joined by ';', innermost first, as the
 * Chrome and Perfetto writers put it) read back into a stack of the model,
 * so that a saved trace groups by call site and gives folded stacks as the
 * live session did. Shared by the JSON and the Perfetto readers. */
#ifndef OPPROF_IMPORT_CALLSTACK_H
#define OPPROF_IMPORT_CALLSTACK_H

#include <stddef.h>
#include <stdint.h>

#include "common/map.h"
#include "model/model.h"

/* The model stack (index + 1, for op_evx.stack) of the text s[0..n): equal
 * texts give one stack (seen maps the text's string id to it). 0 for an
 * empty text; UINT32_MAX when out of memory. */
uint32_t op_import_call_stack(opprof_trace *t, op_map *seen, const char *s, size_t n);

#endif

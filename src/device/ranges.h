/* NVTX-style ranges recorded as user annotations.
 *
 * Push/pop ranges nest on their thread, so they are ordinary begin/end
 * ranges. Start/end ranges may end on another thread and overlap anything:
 * the start writes an open record on the starting thread without entering
 * its stack of open ranges, and the end only notes its time in a table;
 * op_ranges_take hands the ended ones out, and the analysis library gives
 * each its duration once the trace exists (model/devmap.h). No thread ever
 * writes into another thread's buffer. */
#ifndef OPPROF_DEVICE_RANGES_H
#define OPPROF_DEVICE_RANGES_H

#include <stddef.h>
#include <stdint.h>

#include "opprof.h"

/* Push a range named `name` (UTF-8) or, when site is given, with that
 * site. `domain` tags the entry so that a domain's pop closes its own range.
 * Returns the 0-based nesting level. Outside a session only the nesting is
 * counted, so pops stay balanced. */
int op_range_push(const void *domain, const char *name, const opprof_site *site);
/* Pops the innermost range of `domain`; its level, or -1 when none. */
int op_range_pop(const void *domain);

/* A start/end range; the id is never 0. */
uint64_t op_range_start(const char *name, const opprof_site *site);
void op_range_end(uint64_t id);

/* The site of a name, interned once per thread and name (the string's
 * address is only a hint: the text is compared). */
const opprof_site *op_range_site(const char *name);

/* A start/end range that ended: its site, where and when it started (the
 * starting thread's record), and when it ended, in the recording clock. */
typedef struct op_range_done {
    const opprof_site *site;
    int64_t pid, tid;
    uint64_t t0, t1;
} op_range_done;

/* Moves the ranges of the generation just closed that have ended into *out
 * (malloc'd, *n of them; NULL when none) and forgets every open one. 0, or
 * -1 when out of memory (the ranges are forgotten all the same). */
int op_ranges_take(op_range_done **out, size_t *n);

#endif

/* Dropped begins counted by site, per thread: what `opprof exec` names when
 * the event cap is reached (the functions whose calls filled it), so that
 * the user knows what to --exclude. Only dropped begins come here, on the
 * slow path they take anyway once the cap is reached. */
#ifndef OPPROF_CAPTURE_DROPS_H
#define OPPROF_CAPTURE_DROPS_H

#include <stdint.h>

#include "opprof.h"

typedef struct op_dropsite {
    const opprof_site *site; /* NULL: empty slot */
    uint64_t n;
} op_dropsite;

/* Slots per thread; a thread that drops more distinct sites than fit in
 * three quarters of them counts the rest only in its total. */
#define OP_DROP_SLOTS 1024

/* Counts one dropped begin of site, mapping the table on first use (the
 * thread's state and its table are mapped, not malloc'd: this may run
 * inside a malloc interposer). */
void op_drops_count(op_dropsite **tab, const opprof_site *site);

/* Empties the table for a new session. */
void op_drops_clear(op_dropsite *tab);

void op_drops_free(op_dropsite *tab);

#endif

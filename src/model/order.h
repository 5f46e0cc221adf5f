/* The model's order of events: by start, the longer first (so parents
 * precede their children), equal ones in the order they were added. */
#ifndef OPPROF_MODEL_ORDER_H
#define OPPROF_MODEL_ORDER_H

#include "model/model.h"

/* Puts t's events in the model's order and moves the producer's memory
 * event links (op_mem_event.enclosing) with them. 0, or -1 when out of
 * memory (the events are left as they were). */
int op_order_events(opprof_trace *t);

#endif

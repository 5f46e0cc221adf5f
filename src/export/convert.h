/* opprof_trace_convert's batch: events and memory events read before they
 * are written (1M, about 40 MB of events while a batch is held). A
 * variable, so that tests cross many batch boundaries with small files. */
#ifndef OPPROF_EXPORT_CONVERT_H
#define OPPROF_EXPORT_CONVERT_H

#include <stddef.h>

extern size_t op_convert_batch;

#endif

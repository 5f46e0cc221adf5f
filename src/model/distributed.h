/* distributedInfo stamped into each live trace (distributed.c). */
#ifndef OPPROF_MODEL_DISTRIBUTED_H
#define OPPROF_MODEL_DISTRIBUTED_H

#include "model/model.h"

/* Copies the process-wide distributedInfo (opprof_set_distributed_info)
 * into t; a status. */
int op_distributed_apply(opprof_trace *t);

#endif

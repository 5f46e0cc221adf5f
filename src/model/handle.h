/* The collector the analysis library lends the session (session/handle.h):
 * every generation a session keeps becomes a model. Lent by gate.c, the
 * file every reader of a trace calls first. */
#ifndef OPPROF_MODEL_HANDLE_H
#define OPPROF_MODEL_HANDLE_H

#include "session/handle.h"

extern const op_collector op_model_collector;

#endif

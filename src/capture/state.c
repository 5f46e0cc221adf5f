/* The capture's process-wide state (state.h). */
#include "capture/state.h"

op_global op_g;
uint64_t opprof_active_;
_Thread_local op_tstate *op_tls OP_TLS_MODEL;

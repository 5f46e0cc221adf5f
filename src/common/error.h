/* Status helpers shared by every module: set the thread's error detail and
 * return the status in one expression. */
#ifndef OPPROF_COMMON_ERROR_H
#define OPPROF_COMMON_ERROR_H

#include "common/compiler.h"
#include "opprof.h"

/* Records a formatted detail for opprof_last_error() and returns status. */
OP_SEAM int op_fail(int status, const char *fmt, ...) OP_PRINTF(2, 3);

/* Clears the detail (a call that succeeds after a failure). */
OP_SEAM void op_clear_error(void);

#endif

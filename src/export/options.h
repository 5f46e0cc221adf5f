/* Export options as the program gives them (any struct_size, see
 * include/opprof.h), read into the library's full struct. */
#ifndef OPPROF_EXPORT_OPTIONS_H
#define OPPROF_EXPORT_OPTIONS_H

#include "opprof_trace.h"

/* *out: the defaults, then the program's options over them (user NULL: the
 * defaults alone); fn names the caller in a refusal. */
int op_export_options_in(opprof_export_options *out, const opprof_export_options *user, const char *fn);

#endif

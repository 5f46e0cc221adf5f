#include "common/error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char g_detail[512];

const char *opprof_strerror(int status)
{
    switch (status) {
    case OPPROF_OK: return "success";
    case OPPROF_E_INVAL: return "invalid argument";
    case OPPROF_E_ACTIVE: return "a profiling session is already active";
    case OPPROF_E_NO_SESSION: return "no profiling session is active";
    case OPPROF_E_NOMEM: return "out of memory";
    case OPPROF_E_UNBALANCED: return "end without a matching begin on this thread";
    case OPPROF_E_IO: return "input/output error";
    case OPPROF_E_PARSE: return "malformed input";
    case OPPROF_E_NODEV: return "no such device";
    case OPPROF_E_UNSUPPORTED: return "not supported in this build";
    case OPPROF_E_NOT_FOUND: return "not found";
    case OPPROF_E_RANGE: return "value out of range";
    default: return "unknown status";
    }
}

const char *opprof_last_error(void)
{
    return g_detail;
}

int op_fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_detail, sizeof g_detail, fmt, ap);
    va_end(ap);
    return status;
}

void op_clear_error(void)
{
    g_detail[0] = '\0';
}

const char *opprof_version(void)
{
    return OPPROF_VERSION_STRING;
}

/* The export options (options.h): their defaults, written once, and the
 * program's struct read over them. */
#include <string.h>

#include "common/error.h"
#include "common/structsize.h"
#include "export/options.h"

static void options_defaults(opprof_export_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->gzip = -1;
    o->gzip_level = 1;
    o->fsync = 1;
    o->rank = -1;
    o->world_size = -1;
}

int opprof_export_options_init_size(opprof_export_options *o, size_t struct_size)
{
    if (!o) return op_fail(OPPROF_E_INVAL, "opprof_export_options_init: options are NULL");
    opprof_export_options def;
    options_defaults(&def);
    int rc = op_struct_size_ok(struct_size, sizeof def, sizeof(size_t), "opprof_export_options_init",
                               "opprof_export_options");
    if (rc == OPPROF_OK) op_struct_out(o, struct_size, &def, sizeof def);
    return rc;
}

int op_export_options_in(opprof_export_options *out, const opprof_export_options *user, const char *fn)
{
    options_defaults(out);
    return user ? op_struct_in(out, sizeof *out, sizeof(size_t), user, fn, "opprof_export_options") : OPPROF_OK;
}

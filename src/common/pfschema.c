/* opprof's debug annotation names in .pftrace files: the keys the Chrome
 * trace uses in args, so that both formats read alike. */
#include "common/pfschema.h"

#include <string.h>

const char *const op_pf_ann_names[PF_ANN_COUNT_] = {
    "Input Dims", "Input type", "Call stack", "flops", "External id", "correlation",
    "args", "Bytes", "Addr", "Total Allocated", "Device Type", "Device Id",
};

int op_pf_path(const char *path)
{
    size_t n = path ? strlen(path) : 0;
    if (n >= 3 && strcmp(path + n - 3, ".gz") == 0) n -= 3;
    return n >= 8 && strncmp(path + n - 8, ".pftrace", 8) == 0;
}

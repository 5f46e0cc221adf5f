/* Key averages out in the form --format asks for: the one writer of run and
 * summary, so that their table, CSV and JSON are the same for the same rows. */
#include <string.h>

#include "commands.h"
#include "opprof_trace.h"

int cli_write_key_averages(opprof_key_averages *ka, const char *format, const char *sort, long row_limit, FILE *f)
{
    if (!strcmp(format, "table")) return opprof_table_write(ka, sort, (int)row_limit, f);
    int rc = opprof_key_averages_sort(ka, sort);
    if (rc) return rc;
    return !strcmp(format, "csv") ? opprof_key_averages_write_csv(ka, f) : opprof_key_averages_write_json(ka, f);
}

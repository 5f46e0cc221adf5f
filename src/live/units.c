/* Sizes, durations and slow-step thresholds as people write them on a
 * command line or in the environment ("64M", "5s", "1.5x"). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/error.h"
#include "opprof_trace.h"

/* A non-negative finite number followed by its unit (returned in *unit). */
static int number_unit(const char *text, double *v, const char **unit)
{
    if (!text || !*text || *text == '-' || *text == '+' || *text == ' ') return -1;
    char *end;
    errno = 0;
    double x = strtod(text, &end);
    if (end == text || errno || !isfinite(x) || x < 0) return -1;
    *v = x;
    *unit = end;
    return 0;
}

int opprof_parse_size(const char *text, size_t *bytes)
{
    double v;
    const char *u;
    if (!bytes || number_unit(text, &v, &u) != 0)
        return op_fail(OPPROF_E_PARSE, "size '%s': a number of bytes with an optional K, M or G (64M)",
                       text ? text : "(null)");
    double mult = 1;
    if (!strcasecmp(u, "k") || !strcasecmp(u, "kb") || !strcasecmp(u, "kib")) mult = 1024.0;
    else if (!strcasecmp(u, "m") || !strcasecmp(u, "mb") || !strcasecmp(u, "mib")) mult = 1024.0 * 1024;
    else if (!strcasecmp(u, "g") || !strcasecmp(u, "gb") || !strcasecmp(u, "gib")) mult = 1024.0 * 1024 * 1024;
    else if (*u && strcasecmp(u, "b") != 0)
        return op_fail(OPPROF_E_PARSE, "size '%s': unknown unit '%s' (K, M, G)", text, u);
    double b = v * mult;
    if (b < 1 || b > 1099511627776.0) return op_fail(OPPROF_E_RANGE, "size '%s': from 1 byte to 1T", text);
    *bytes = (size_t)b;
    return OPPROF_OK;
}

int opprof_parse_duration(const char *text, int64_t *ns)
{
    double v;
    const char *u;
    if (!ns || number_unit(text, &v, &u) != 0)
        return op_fail(OPPROF_E_PARSE, "duration '%s': a number with a unit: ns, us, ms, s, m, h (5s)",
                       text ? text : "(null)");
    double mult;
    if (!strcmp(u, "ns")) mult = 1;
    else if (!strcmp(u, "us")) mult = 1e3;
    else if (!strcmp(u, "ms")) mult = 1e6;
    else if (!strcmp(u, "s")) mult = 1e9;
    else if (!strcmp(u, "m") || !strcmp(u, "min")) mult = 60e9;
    else if (!strcmp(u, "h")) mult = 3600e9;
    else return op_fail(OPPROF_E_PARSE, "duration '%s': give a unit: ns, us, ms, s, m, h (5s)", text);
    double d = v * mult;
    if (d < 1 || d > 9.2e18) return op_fail(OPPROF_E_RANGE, "duration '%s' is out of range", text);
    *ns = (int64_t)d;
    return OPPROF_OK;
}

/* One part of a slow-step threshold: a ratio ("1.5x") or a time ("20ms"). */
static int slow_part(const char *text, int64_t *ns, double *ratio)
{
    size_t n = strlen(text);
    if (n > 1 && (text[n - 1] == 'x' || text[n - 1] == 'X')) {
        double v;
        const char *u;
        if (number_unit(text, &v, &u) != 0 || u != text + n - 1 || v <= 1.0) return -1;
        *ratio = v;
        return 0;
    }
    return opprof_parse_duration(text, ns) == OPPROF_OK ? 0 : -1;
}

int opprof_parse_slow_step(const char *text, int64_t *ns, double *ratio)
{
    if (!ns || !ratio) return op_fail(OPPROF_E_INVAL, "opprof_parse_slow_step: NULL argument");
    /* "1.5x", "20ms", or both as "1.5x,20ms": slower than the ratio to the
     * median and than the floor. */
    char a[64] = "", b[64] = "";
    const char *comma = text ? strchr(text, ',') : NULL;
    int64_t n = 0;
    double r = 0;
    int ok = text && strlen(text) < sizeof a;
    if (ok && comma) {
        snprintf(a, sizeof a, "%.*s", (int)(comma - text), text);
        snprintf(b, sizeof b, "%s", comma + 1);
        ok = slow_part(a, &n, &r) == 0 && slow_part(b, &n, &r) == 0 && n > 0 && r > 0;
    } else if (ok) {
        ok = slow_part(text, &n, &r) == 0;
    }
    if (!ok)
        return op_fail(OPPROF_E_PARSE,
                       "slow step '%s': a time (50ms), a ratio to the median above 1 (1.5x), or both (1.5x,20ms)",
                       text ? text : "(null)");
    *ns = n;
    *ratio = r;
    return OPPROF_OK;
}

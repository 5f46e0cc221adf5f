/* Ranks in order, their clocks, and reading collective args (ranks.h). */
#include "ranks/ranks.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/satmath.h"

static int by_rank(const void *a, const void *b)
{
    const op_rank_trace *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* A time of r on rank 0's clock; 1 when it saturates or lies beyond 2^62 ns
 * from 0, where differences between two such times no longer fit. */
static int rank_time_checked(const op_rank_trace *r, int64_t t_ns, int64_t *out)
{
    int sat = 0;
    int64_t wall = op_sat_add(r->t->base_time_ns, t_ns, &sat);
    int64_t off = opprof_clock_offset_at(&r->d, wall);
    int64_t v = op_sat_add(wall, off, &sat);
    *out = v;
    return sat || off == INT64_MAX || off == INT64_MIN || v > 2 * OP_TIME_LIMIT_NS || v < -2 * OP_TIME_LIMIT_NS;
}

/* Each rank's times on rank 0's clock are a monotone function of its own
 * (its offset is constant or linear in time, clamped), so its first and last
 * times bound all of them. The merged trace's times (from the earliest rank's
 * start) must stay within 2^61 ns, as times read from files do: then every
 * time, difference and end of the merge and the report fits in 64 bits. Files
 * whose times are each within that bound can still break it together (a
 * base time and a clock offset of 2^61 each on one rank, -2^61 on another). */
static int check_span(const op_rank_trace *r, size_t n)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        int64_t a, b;
        if (rank_time_checked(&r[i], 0, &a) || rank_time_checked(&r[i], r[i].t->duration_ns, &b))
            return op_fail(OPPROF_E_RANGE,
                           "rank %lld: its times on rank 0's clock (base time plus clock offset) lie more than "
                           "2^62 ns from 0", (long long)r[i].rank);
        if (a > b) {
            int64_t x = a;
            a = b;
            b = x;
        }
        if (a < lo) lo = a;
        if (b > hi) hi = b;
        if (hi - lo > OP_TIME_LIMIT_NS)
            return op_fail(OPPROF_E_RANGE,
                           "rank %lld: the ranks' times on rank 0's clock (base time plus clock offset) span more "
                           "than 2^61 ns (about 73 years)", (long long)r[i].rank);
    }
    return OPPROF_OK;
}

int op_ranks_order(const opprof_trace *const *traces, size_t n, op_rank_trace **out)
{
    *out = NULL;
    if (!traces || n == 0) return op_fail(OPPROF_E_INVAL, "no traces given");
    op_rank_trace *r = calloc(n, sizeof *r);
    if (!r) return op_fail(OPPROF_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (!traces[i]) {
            free(r);
            return op_fail(OPPROF_E_INVAL, "trace %zu is NULL", i);
        }
        if (op_trace_check(traces[i], "opprof_ranks")) {
            free(r);
            return OPPROF_E_INVAL;
        }
        r[i].t = traces[i];
        if (opprof_trace_distributed_info(traces[i], &r[i].d) != OPPROF_OK) r[i].d.rank = (int64_t)i;
        r[i].rank = r[i].d.rank;
    }
    qsort(r, n, sizeof *r, by_rank);
    for (size_t i = 1; i < n; i++) {
        if (r[i].rank == r[i - 1].rank) {
            int64_t dup = r[i].rank;
            free(r);
            return op_fail(OPPROF_E_INVAL, "two traces are rank %lld", (long long)dup);
        }
    }
    for (size_t i = 0; i < n; i++) r[i].origin_ns = op_rank_time(&r[i], 0);
    if (check_span(r, n) != OPPROF_OK) {
        free(r);
        return OPPROF_E_RANGE;
    }
    *out = r;
    return OPPROF_OK;
}

int64_t op_rank_time(const op_rank_trace *r, int64_t t_ns)
{
    int sat = 0; /* times are bounded when read; a saturated one still orders right */
    int64_t wall = op_sat_add(r->t->base_time_ns, t_ns, &sat);
    return op_sat_add(wall, opprof_clock_offset_at(&r->d, wall), &sat);
}

int64_t op_ranks_origin(const op_rank_trace *r, size_t n)
{
    int64_t o = INT64_MAX;
    for (size_t i = 0; i < n; i++)
        if (r[i].origin_ns < o) o = r[i].origin_ns;
    return n ? o : 0;
}

/* The value text after `"key": ` of a member, NULL when absent. Members are
 * `"k": v` separated by ", "; a key is found only where a member starts. */
static const char *value_of(const char *args, const char *key)
{
    size_t kn = strlen(key);
    for (const char *p = args; (p = strstr(p, key)) != NULL; p += kn) {
        if (p == args || p[-1] != '"' || strncmp(p + kn, "\": ", 3) != 0) continue;
        const char *q = p - 1; /* the key's opening quote: at the start, or after ", " */
        if (q == args || (q - args >= 2 && q[-2] == ',' && q[-1] == ' ')) return p + kn + 3;
    }
    return NULL;
}

int op_args_int(const char *args, const char *key, int64_t *out)
{
    const char *v = args ? value_of(args, key) : NULL;
    if (!v || !(*v == '-' || (*v >= '0' && *v <= '9'))) return 0;
    char *end;
    long long x = strtoll(v, &end, 10);
    if (*end == '.' || *end == 'e' || *end == 'E') return 0;
    *out = x;
    return 1;
}

int op_args_str(const char *args, const char *key, const char **s, size_t *n)
{
    const char *v = args ? value_of(args, key) : NULL;
    if (!v || *v != '"') return 0;
    const char *e = v + 1;
    while (*e && *e != '"') e += (*e == '\\' && e[1]) ? 2 : 1;
    if (*e != '"') return 0;
    *s = v + 1;
    *n = (size_t)(e - v - 1);
    return 1;
}

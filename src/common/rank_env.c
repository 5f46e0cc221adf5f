#include "common/rank_env.h"

#include <errno.h>
#include <stdlib.h>

/* The first of the variables that holds a whole number >= 0, -1 for none. */
static int64_t env_first(const char *const *names)
{
    for (; *names; names++) {
        const char *s = getenv(*names);
        if (!s || !*s) continue;
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (!*end && !errno && v >= 0) return v;
    }
    return -1;
}

int op_rank_from_env(int64_t *rank, int64_t *world)
{
    static const char *const ranks[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", NULL};
    static const char *const worlds[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL};
    *rank = env_first(ranks);
    if (world) *world = env_first(worlds);
    return *rank >= 0;
}

void op_rank_pick(int64_t *rank, int64_t *world, int64_t trace_rank, int64_t trace_world)
{
    if (*rank < 0) *rank = trace_rank;
    if (*world < 0) *world = trace_world;
    if (*rank < 0 || *world < 0) {
        int64_t er = -1, ew = -1;
        op_rank_from_env(&er, &ew);
        if (*rank < 0) *rank = er;
        if (*world < 0) *world = ew;
    }
}

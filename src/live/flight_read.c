/* Reading the flight recorder's rings into a trace while the program
 * records on: the rings are frozen (capture/ring.c) for as long as the
 * collector reads them, so nothing is overwritten under it and no
 * recording thread waits. Ranges still open run to the moment of the
 * read, flagged as open (model.h: OP_EV_OPEN), so that the dump writes
 * them as begun, not as ended there. */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "live/flight.h"
#include "model/collect.h"
#include "model/distributed.h"
#include "model/model.h"
#include "session/session.h"

/* Steps were recorded as "ProfilerStep#" with their number as an arg (see
 * session.h); here they get their torch names, ProfilerStep#N. */
static int name_steps(opprof_trace *t)
{
    uint32_t base = op_strtab_find(&t->str, op_ring_step_site.name, strlen(op_ring_step_site.name));
    if (base == UINT32_MAX) return OPPROF_OK;
    size_t klen = strlen(op_step_arg_key);
    for (size_t i = 0; i < t->nev; i++) {
        op_event *e = &t->ev[i];
        uint32_t args = op_evx_of(t, e)->args;
        if (e->name != base || !args) continue;
        const char *a = op_strtab_get(&t->str, args); /* "opprof.step": N */
        if (a[0] != '"' || strncmp(a + 1, op_step_arg_key, klen) != 0 || a[1 + klen] != '"') continue;
        const char *colon = strchr(a, ':');
        if (!colon) continue;
        char name[48];
        int n = snprintf(name, sizeof name, "ProfilerStep#%lld", strtoll(colon + 1, NULL, 10));
        uint32_t id = op_trace_intern(t, name, (size_t)n);
        if (id == UINT32_MAX) return op_fail(OPPROF_E_NOMEM, "out of memory naming the steps");
        t->ev[i].name = id;
        t->evx[t->ev[i].x - 1].args = 0; /* args != 0: it has a cold part */
    }
    return OPPROF_OK;
}

int op_flight_read(opprof_trace **out)
{
    *out = NULL;
    op_live lv;
    int rc = op_session_live_begin(&lv);
    if (rc != OPPROF_OK) return rc;
    uint64_t now = lv.now;
    opprof_trace *t = NULL;
    rc = op_collect(lv.gen, &lv.tb, now, lv.opts, &t);
    op_session_live_end();
    if (rc != OPPROF_OK) return rc;
    t->duration_ns = op_timebase_ns(&lv.tb, now);
    t->step_num = lv.step_num;
    rc = name_steps(t);
    if (rc == OPPROF_OK) rc = op_distributed_apply(t);
    if (rc == OPPROF_OK) rc = op_trace_finish(t);
    if (rc != OPPROF_OK) {
        opprof_trace_free(t);
        return rc;
    }
    *out = t;
    return OPPROF_OK;
}

/* Sessions: start, stop and step, and the hand-over of each finished trace
 * to the caller or to on_trace_ready. One session is active per process. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "capture/memtrack.h"
#include "capture/state.h"
#include "common/error.h"
#include "device/device.h"
#include "model/collect.h"
#include "model/model.h"
#include "session/session.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t g_fork_once = PTHREAD_ONCE_INIT;

static struct {
    int active;
    opprof_config cfg;
    char *output_dir;
    op_timebase tb;
    uint64_t gen;          /* generation being recorded, 0 when none */
    uint64_t gen_counter;
    uint32_t opts;
    int64_t step_num;
} S;

static int64_t mono_clock(void *ctx)
{
    (void)ctx;
    return op_mono_ns();
}

static void fork_prepare(void)
{
    pthread_mutex_lock(&g_lock);
    op_registry_lock();
}

static void fork_parent(void)
{
    op_registry_unlock();
    pthread_mutex_unlock(&g_lock);
}

/* The child starts with no session: the parent's keeps its data, and the
 * child may start its own. */
static void fork_child(void)
{
    op_gen_store(0);
    S.active = 0;
    S.gen = 0;
    op_registry_unlock();
    pthread_mutex_unlock(&g_lock);
}

static void install_fork_handlers(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void opprof_config_init(opprof_config *cfg)
{
    if (!cfg) return;
    memset(cfg, 0, sizeof *cfg);
    cfg->activities = OPPROF_ACTIVITY_CPU;
    cfg->max_events = OPPROF_DEFAULT_MAX_EVENTS;
    cfg->max_stack_depth = 32;
}

static uint32_t opts_of(const opprof_config *c)
{
    uint32_t o = 0;
    if (c->record_shapes) o |= OP_OPT_SHAPES;
    if (c->profile_memory) o |= OP_OPT_MEMORY;
    if (c->with_flops) o |= OP_OPT_FLOPS;
    if (c->with_stack) o |= OP_OPT_STACK;
    return o;
}

/* Opens a new recording generation; the session lock is held. */
void op_session_open_gen(void)
{
    op_g.opts = S.opts;
    op_g.clock = S.cfg.clock ? S.cfg.clock : (op_clock_cycles_usable() ? NULL : mono_clock);
    op_g.clock_ctx = S.cfg.clock ? S.cfg.clock_ctx : NULL;
    op_g.max_stack_depth = S.cfg.max_stack_depth;
    atomic_store_explicit(&op_g.remaining, (int64_t)S.cfg.max_events, memory_order_relaxed);
    uint64_t now = op_g.clock ? (uint64_t)op_g.clock(op_g.clock_ctx) : op_cycles();
    op_timebase_start(&S.tb, op_g.clock != NULL, now);
    S.gen = ++S.gen_counter;
    op_gen_store(S.gen);
}

/* Closes the current generation; returns its trace in *out (NULL when
 * keep is 0: warmup data is thrown away). The session lock is held. */
int op_session_close_gen(int keep, opprof_trace **out)
{
    *out = NULL;
    if (!S.gen) return OPPROF_OK;
    uint64_t stop = op_g.clock ? (uint64_t)op_g.clock(op_g.clock_ctx) : op_cycles();
    uint64_t gen = S.gen;
    op_gen_store(0);
    S.gen = 0;
    op_timebase_finish(&S.tb);
    opprof_trace *tr = NULL;
    int rc = op_collect(gen, &S.tb, stop, S.opts, &tr);
    int drc = op_device_collect(rc == OPPROF_OK && keep ? tr : NULL, &S.tb);
    if (rc == OPPROF_OK) rc = drc;
    if (rc != OPPROF_OK) {
        opprof_trace_free(tr);
        return rc;
    }
    if (!keep) {
        opprof_trace_free(tr);
        return OPPROF_OK;
    }
    tr->duration_ns = op_timebase_ns(&S.tb, stop);
    tr->step_num = S.step_num;
    rc = op_trace_finish(tr);
    if (rc != OPPROF_OK) {
        opprof_trace_free(tr);
        return rc;
    }
    *out = tr;
    return OPPROF_OK;
}

int opprof_start(const opprof_config *cfg)
{
    if (!cfg) return op_fail(OPPROF_E_INVAL, "opprof_start: config is NULL (use opprof_config_init)");
    if (cfg->activities & ~(uint32_t)(OPPROF_ACTIVITY_CPU | OPPROF_ACTIVITY_CUDA))
        return op_fail(OPPROF_E_INVAL, "opprof_start: unknown activity bits 0x%x", (unsigned)cfg->activities);
    pthread_once(&g_fork_once, install_fork_handlers);
    pthread_mutex_lock(&g_lock);
    if (S.active) {
        pthread_mutex_unlock(&g_lock);
        return op_fail(OPPROF_E_ACTIVE, "opprof_start: a session is already active");
    }
    char *dir = NULL;
    if (cfg->output_dir && !(dir = strdup(cfg->output_dir))) {
        pthread_mutex_unlock(&g_lock);
        return op_fail(OPPROF_E_NOMEM, "opprof_start: out of memory");
    }
    free(S.output_dir);
    S.cfg = *cfg;
    S.output_dir = dir;
    S.cfg.output_dir = dir;
    if (!S.cfg.max_events) S.cfg.max_events = OPPROF_DEFAULT_MAX_EVENTS;
    if (!S.cfg.max_stack_depth) S.cfg.max_stack_depth = 32;
    S.opts = opts_of(&S.cfg);
    S.step_num = 0;
    S.active = 1;
    op_capture_prefill(OP_PREFILL_CHUNKS);
    if (S.opts & OP_OPT_MEMORY) op_memtrack_reset();
    op_device_start(&S.cfg);
    op_session_open_gen();
    pthread_mutex_unlock(&g_lock);
    op_clear_error();
    return OPPROF_OK;
}

int opprof_stop(opprof_trace **out)
{
    if (out) *out = NULL;
    pthread_mutex_lock(&g_lock);
    if (!S.active) {
        pthread_mutex_unlock(&g_lock);
        return op_fail(OPPROF_E_NO_SESSION, "opprof_stop: no session is active");
    }
    opprof_trace *tr = NULL;
    int rc = op_session_close_gen(1, &tr);
    op_device_stop();
    S.active = 0;
    opprof_trace_ready_fn ready = S.cfg.on_trace_ready;
    void *user = S.cfg.user;
    pthread_mutex_unlock(&g_lock);
    /* Outside the lock: the callback may call back into the API. */
    if (tr && ready) ready(tr, user);
    if (out)
        *out = tr;
    else
        opprof_trace_free(tr);
    return rc;
}

int opprof_step(void)
{
    pthread_mutex_lock(&g_lock);
    if (!S.active) {
        pthread_mutex_unlock(&g_lock);
        return op_fail(OPPROF_E_NO_SESSION, "opprof_step: no session is active");
    }
    S.step_num++;
    pthread_mutex_unlock(&g_lock);
    return OPPROF_OK;
}

int opprof_is_active(void)
{
    pthread_mutex_lock(&g_lock);
    int a = S.active;
    pthread_mutex_unlock(&g_lock);
    return a;
}

int64_t opprof_step_num(void)
{
    pthread_mutex_lock(&g_lock);
    int64_t n = S.step_num;
    pthread_mutex_unlock(&g_lock);
    return n;
}

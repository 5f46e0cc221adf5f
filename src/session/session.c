/* Sessions: start, stop and step, and the hand-over of each finished trace
 * to the caller or to on_trace_ready. One session is active per process.
 *
 * With a schedule, start, step and stop run the transitions of
 * torch.profiler.profile (session/schedule.c): recording generations are
 * opened for warmup (thrown away) or for keeps, closed into a pending trace,
 * and handed to on_trace_ready outside the lock, at the same points as
 * torch. Each step is a "ProfilerStep#N" annotation on the stepping thread,
 * closed before the transition and opened after it, as torch's
 * record_function is. */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/agg.h"
#include "capture/sample.h"
#include "capture/clock.h"
#include "capture/evstore.h"
#include "capture/keeper.h"
#include "capture/memtrack.h"
#include "capture/pool.h"
#include "capture/ring.h"
#include "capture/stacktab.h"
#include "capture/state.h"
#include "capture/thread.h"
#include "common/error.h"
#include "common/structsize.h"
#include "device/device.h"
#include "session/handle.h"
#include "session/schedule.h"
#include "session/session.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_readers_done = PTHREAD_COND_INITIALIZER;

const char op_step_arg_key[] = "opprof.step";
const opprof_site op_ring_step_site = {"ProfilerStep#", "", 0, OPPROF_CAT_USER_ANNOTATION, NULL};

/* ProfilerStep#N sites: one per step while its generation is open, reused
 * once that generation has been collected (the trace then has its own copy
 * of the name). Interning them would keep one site per step for the life of
 * the process: memory growing with the length of the job. */
typedef struct step_site {
    opprof_site site; /* first: records point here */
    char name[32];
    struct step_site *next;
} step_site;

static step_site *g_steps_free, *g_steps_used; /* under g_lock */

static const opprof_site *step_site_get(int64_t step)
{
    step_site *s = g_steps_free;
    if (s) g_steps_free = s->next;
    else if (!(s = malloc(sizeof *s))) return NULL;
    snprintf(s->name, sizeof s->name, "ProfilerStep#%" PRId64, step);
    s->site = (opprof_site){s->name, "", 0, OPPROF_CAT_USER_ANNOTATION, NULL};
    s->next = g_steps_used;
    g_steps_used = s;
    return &s->site;
}

/* After a collect: no record of the closed generation is read again. */
static void step_sites_recycle(void)
{
    while (g_steps_used) {
        step_site *s = g_steps_used;
        g_steps_used = s->next;
        s->next = g_steps_free;
        g_steps_free = s;
    }
}
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
    int action;                   /* the schedule's action for step_num */
    int keeping;                  /* the open generation is kept (not warmup) */
    int record_steps;             /* ProfilerStep#N annotations (with a schedule) */
    const opprof_site *step_site; /* the open ProfilerStep#N range */
    opprof_trace *pending;        /* stopped, not yet handed out */
    uint64_t serial;              /* sessions started so far */
    uint32_t ring;                /* flight recorder: chunks per thread's ring, 0 for none */
    void (*on_step)(int64_t step); /* flight recorder: told of each step that ends */
    void (*take)(opprof_trace *tr); /* a triggered session: owns each trace made ready at a step */
    unsigned readers;             /* live reads of the ring in progress (op_session_live_begin) */
    int status;                   /* first failure inside a transition */
    int stopping_incomplete;      /* the stop in progress is opprof_stop_incomplete's */
    int comp_applied;             /* the sums take the overhead out (compensate) */
} S;

static _Atomic int64_t g_steps_seen; /* opprof_step calls, with a session or not */

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
    S.ring = 0;
    S.readers = 0;
    atomic_store(&op_g.ring_freeze, 0);
    S.step_site = NULL;
    S.pending = NULL; /* the parent's; the child's copy is left alone */
    op_registry_unlock();
    pthread_mutex_unlock(&g_lock);
}

static void install_fork_handlers(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* The fields whose 0 means "the default": their defaults, written once,
 * for opprof_config_init and for a program that set them to 0. */
static void zero_means_default(opprof_config *cfg)
{
    if (!cfg->max_events) cfg->max_events = OPPROF_DEFAULT_MAX_EVENTS;
    if (!cfg->max_stack_depth) cfg->max_stack_depth = 32;
}

static void config_defaults(opprof_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->struct_size = sizeof *cfg;
    cfg->activities = OPPROF_ACTIVITY_CPU;
    zero_means_default(cfg);
}

int opprof_config_init_size(opprof_config *cfg, size_t struct_size)
{
    if (!cfg) return op_fail(OPPROF_E_INVAL, "opprof_config_init: config is NULL");
    opprof_config def;
    config_defaults(&def);
    int rc = op_struct_size_ok(struct_size, sizeof def, sizeof(size_t), "opprof_config_init", "opprof_config");
    if (rc != OPPROF_OK) return rc;
    op_struct_out(cfg, struct_size, &def, sizeof def);
    return OPPROF_OK;
}

int op_config_in(opprof_config *out, const opprof_config *user, const char *fn)
{
    config_defaults(out);
    return op_struct_in(out, sizeof *out, sizeof(size_t), user, fn, "opprof_config");
}

static uint32_t opts_of(const opprof_config *c)
{
    uint32_t o = 0;
    if (c->record_shapes) o |= OP_OPT_SHAPES;
    if (c->profile_memory) o |= OP_OPT_MEMORY;
    if (c->with_flops) o |= OP_OPT_FLOPS;
    if (c->with_stack) o |= OP_OPT_STACK;
    else if (c->aggregate == OPPROF_AGGREGATE_PATHS && !(c->activities & OPPROF_ACTIVITY_CUDA)) o |= OP_OPT_PATHS;
    if (c->stream_trace) return o | OP_OPT_STREAM; /* records for the file; its writer sums them */
    /* Sums hold no device activity: events are kept with CUDA. */
    if (c->aggregate && !(c->activities & OPPROF_ACTIVITY_CUDA)) o |= OP_OPT_AGG;
    return o;
}

/* Starts the streamed trace's writer for the generation being opened. It
 * cannot fail for want of a file (opprof_start opened it); when it fails
 * all the same, the session records events as without streaming. */
static void stream_begin(void)
{
    const op_stream_hooks *sw = op_session_stream();
    int rc = sw ? sw->begin(&S.tb, S.opts, S.gen) : op_fail(OPPROF_E_INVAL, "no trace writer");
    if (rc == OPPROF_OK) return;
    fprintf(stderr, "opprof: the trace is not streamed (%s); it is written at the end\n", opprof_last_error());
    if (sw) sw->abort();
    S.opts &= ~(uint32_t)OP_OPT_STREAM;
    op_g.opts = S.opts;
    atomic_store_explicit(&op_g.remaining, (int64_t)S.cfg.max_events, memory_order_relaxed);
}

/* Overhead compensation, for the sums only (a session that keeps events
 * hands its records out as they were): the figures in ticks for the
 * tables reset from now on, the session's threads' and a stream writer's
 * replay. */
static void compensate(void)
{
    int sums = (S.opts & (OP_OPT_AGG | OP_OPT_STREAM)) != 0;
    double in = sums ? S.cfg.overhead_inside_ns : 0, out = sums ? S.cfg.overhead_outside_ns : 0;
    S.comp_applied = in > 0 || out > 0;
    if (!S.comp_applied) {
        op_agg_compensate(0, 0);
        return;
    }
    double tpn = op_g.clock ? 1.0 : op_clock_ticks_per_ns();
    op_agg_compensate((uint64_t)(in * tpn + 0.5), (uint64_t)((in + out) * tpn + 0.5));
}

/* Opens a new recording generation; the session lock is held. */
static void open_gen(void)
{
    op_g.opts = S.opts;
    op_g.clock = S.cfg.clock ? S.cfg.clock : (op_clock_cycles_usable() ? NULL : mono_clock);
    op_g.clock_ctx = S.cfg.clock ? S.cfg.clock_ctx : NULL;
    op_g.max_stack_depth = S.cfg.max_stack_depth;
    op_g.ring_chunks = S.ring;
    /* A ring holds the latest events, a stream writes them out: no cap. */
    int uncapped = S.ring || (S.opts & OP_OPT_STREAM);
    atomic_store_explicit(&op_g.remaining, uncapped ? INT64_MAX / 4 : (int64_t)S.cfg.max_events, memory_order_relaxed);
    uint64_t now = op_g.clock ? (uint64_t)op_g.clock(op_g.clock_ctx) : op_cycles();
    op_timebase_start(&S.tb, op_g.clock != NULL, now);
    compensate();
    S.gen = ++S.gen_counter;
    if (S.opts & OP_OPT_STREAM) stream_begin();
    op_gen_store(S.gen);
}

/* The records of generation gen, read by no one: exited threads' states
 * go, and the pages of the chunks the pool will not keep, as after a
 * collect (a stopped flight recorder's rings). */
static void drop_gen(uint64_t gen)
{
    unsigned seen = 0;
    op_registry_lock();
    for (op_tstate *t = op_registry_first(); t; t = t->next)
        if (t->gen == gen)
            for (op_chunk *c = t->head; c; c = atomic_load_explicit(&c->next, memory_order_acquire))
                op_chunk_decoded(c, &seen);
    op_registry_reap(gen);
    op_registry_unlock();
}

/* Closes the current generation; returns its trace in *out (NULL when
 * keep is 0: warmup data is thrown away). The session lock is held. The
 * model is built by the collector the analysis library lent; without one
 * a kept generation becomes a bare handle. */
static int close_gen(int keep, opprof_trace **out)
{
    *out = NULL;
    if (!S.gen) return OPPROF_OK;
    while (S.readers) pthread_cond_wait(&g_readers_done, &g_lock);
    uint64_t stop = op_g.clock ? (uint64_t)op_g.clock(op_g.clock_ctx) : op_cycles();
    uint64_t gen = S.gen;
    op_gen_store(0);
    S.gen = 0;
    op_timebase_finish(&S.tb);
    const op_collector *col = op_session_collector();
    op_gen_done g = {.gen = gen, .tb = &S.tb, .stop_ticks = stop, .opts = S.opts, .step_num = S.step_num,
                     .duration_ns = op_timebase_ns(&S.tb, stop), .output_dir = S.output_dir};
    if (S.comp_applied && (S.opts & (OP_OPT_AGG | OP_OPT_STREAM))) {
        g.comp_inside_ns = S.cfg.overhead_inside_ns;
        g.comp_outside_ns = S.cfg.overhead_outside_ns;
    }
    opprof_trace *tr = NULL;
    int rc = OPPROF_OK;
    if (S.ring) op_ring_freeze(); /* a thread still in its last record must not overwrite what is read */
    const op_stream_hooks *sw = op_session_stream();
    if (col && sw && sw->running()) {
        rc = sw->stop(&g, S.stopping_incomplete, &tr);
        if (rc != OPPROF_OK && tr) { /* the file failed, the sums did not: the stop says so, the trace goes out */
            if (!S.status) S.status = rc;
            rc = OPPROF_OK;
        }
    } else if (col && keep) {
        rc = col->collect(&g, &tr);
    } else {
        drop_gen(gen); /* nothing to build a trace for: no reading, no model */
    }
    if (S.ring) op_ring_thaw();
    if (!S.step_site) step_sites_recycle(); /* an open step range keeps them (a stop racing with a step) */
    op_dev_take dev;
    int drc = op_device_take(&dev);
    if (rc == OPPROF_OK) rc = drc;
    g.dev = &dev;
    if (rc == OPPROF_OK && keep && tr) rc = col->finish(tr, &g);
    op_device_take_free(&dev);
    if (rc != OPPROF_OK || !keep) {
        opprof_trace_free(tr);
        return rc;
    }
    if (!tr && !(tr = op_trace_bare())) return op_fail(OPPROF_E_NOMEM, "out of memory");
    *out = tr;
    return OPPROF_OK;
}

/* Throws the open generation away (warmup data). */
static void discard_gen(void)
{
    opprof_trace *tr = NULL;
    int rc = close_gen(0, &tr);
    if (rc != OPPROF_OK && !S.status) S.status = rc;
}

/* Runs a transition's operations from *i on; stops after one that makes a
 * trace ready and returns that trace (the caller hands it out without the
 * lock, then resumes). The lock is held. */
static opprof_trace *run_ops(const op_sched_ops *ops, unsigned *i)
{
    int fresh = 0; /* the open generation was prepared in this run: nothing to throw away */
    while (*i < ops->n) {
        switch (ops->op[(*i)++]) {
        case OP_SCHED_WARN: op_sched_warn_once(ops->warning); break;
        case OP_SCHED_PREPARE:
            if (S.gen) discard_gen();
            open_gen();
            S.keeping = 0;
            fresh = 1;
            break;
        case OP_SCHED_START:
            if (S.gen && !fresh) discard_gen(); /* what warmup recorded goes */
            if (!S.gen) open_gen();
            S.keeping = 1;
            fresh = 0;
            break;
        case OP_SCHED_STOP:
            if (S.gen) {
                opprof_trace *tr = NULL;
                int rc = close_gen(S.keeping, &tr);
                if (rc != OPPROF_OK && !S.status) S.status = rc;
                opprof_trace_free(S.pending);
                S.pending = tr;
            }
            S.keeping = 0;
            break;
        case OP_SCHED_READY: {
            opprof_trace *tr = S.pending;
            S.pending = NULL;
            if (tr) return tr;
            break;
        }
        default: break;
        }
    }
    return NULL;
}

static void step_range_end(void)
{
    if (S.step_site) (void)opprof_end(S.step_site); /* another thread's step range ends at the cycle's end */
    S.step_site = NULL;
}

static void step_range_begin(void)
{
    if (!S.record_steps || !S.gen) return; /* torch's range exists then too, but records nothing */
    if (S.ring) {
        opprof_arg a = opprof_arg_int(op_step_arg_key, S.step_num);
        opprof_begin_args(&op_ring_step_site, &a, 1);
        S.step_site = &op_ring_step_site;
        return;
    }
    const opprof_site *site = step_site_get(S.step_num);
    if (!site) return;
    opprof_begin(site);
    S.step_site = site;
}

static int start_session(const opprof_config *user_cfg, uint32_t ring, void (*on_step)(int64_t),
                         void (*take)(opprof_trace *))
{
    if (!user_cfg) return op_fail(OPPROF_E_INVAL, "opprof_start: config is NULL (use opprof_config_init)");
    opprof_config full; /* the program's fields, and defaults for those its struct does not have */
    int rc = op_config_in(&full, user_cfg, "opprof_start");
    if (rc != OPPROF_OK) return rc;
    const opprof_config *cfg = &full;
    if (cfg->activities & ~(uint32_t)(OPPROF_ACTIVITY_CPU | OPPROF_ACTIVITY_CUDA))
        return op_fail(OPPROF_E_INVAL, "opprof_start: unknown activity bits 0x%x", (unsigned)cfg->activities);
    rc = opprof_schedule_check(&cfg->schedule);
    if (rc != OPPROF_OK) return rc;
    if (!(cfg->overhead_inside_ns >= 0 && cfg->overhead_inside_ns <= 1e6) ||
        !(cfg->overhead_outside_ns >= 0 && cfg->overhead_outside_ns <= 1e6))
        return op_fail(OPPROF_E_INVAL, "opprof_start: overhead_inside_ns %g and overhead_outside_ns %g must lie in 0..1e6",
                       cfg->overhead_inside_ns, cfg->overhead_outside_ns);
    /* Here, in the program's call: a thread's first record, which sets its
     * stack table up, may come from inside a malloc interposer. */
    if (cfg->with_stack && op_stack_load() != 0)
        return op_fail(OPPROF_E_UNSUPPORTED, "opprof_start: with_stack needs libunwind: %s", op_stack_load_error());
    pthread_once(&g_fork_once, install_fork_handlers);
    pthread_mutex_lock(&g_lock);
    if (S.active) {
        pthread_mutex_unlock(&g_lock);
        return op_fail(OPPROF_E_ACTIVE, "opprof_start: a session is already active");
    }
    /* The sampler first: it may refuse (no free signal, no timer). */
    if (cfg->sample_hz && !ring && (rc = op_sample_start(cfg->sample_hz, cfg->max_stack_depth ? cfg->max_stack_depth : 64,
                                                         cfg->sample_unwind)) != 0) {
        pthread_mutex_unlock(&g_lock);
        return rc;
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
    zero_means_default(&S.cfg);
    if (ring) S.cfg.aggregate = 0; /* a flight recorder's dumps are traces: its rings keep events */
    if (S.cfg.trace_min_duration_ns < 0 || S.cfg.trace_max_depth < 0 ||
        ((S.cfg.trace_min_duration_ns || S.cfg.trace_max_depth) && !S.cfg.stream_trace)) {
        S.cfg.stream_trace = NULL;
        pthread_mutex_unlock(&g_lock);
        return op_fail(OPPROF_E_INVAL, "opprof_start: trace_min_duration_ns and trace_max_depth filter a streamed "
                                       "trace (stream_trace), and are not negative");
    }
    if (S.cfg.stream_trace) {
        const char *why = ring                           ? "the flight recorder keeps its own rings"
                          : S.cfg.schedule.enabled       ? "a schedule makes a trace per cycle"
                          : (S.cfg.activities & OPPROF_ACTIVITY_CUDA) ? "CUDA activity"
                                                                        : NULL;
        int src = why ? op_fail(OPPROF_E_INVAL, "opprof_start: stream_trace does not go with %s", why)
                      : !op_session_stream()
                          ? op_fail(OPPROF_E_INVAL, "opprof_start: stream_trace needs libopprof_trace's trace writer linked in")
                          : op_session_stream()->open(S.cfg.stream_trace, S.cfg.trace_min_duration_ns,
                                                      S.cfg.trace_max_depth);
        if (src != OPPROF_OK) {
            S.cfg.stream_trace = NULL;
            pthread_mutex_unlock(&g_lock);
            return src;
        }
    }
    S.opts = opts_of(&S.cfg);
    S.step_num = 0;
    S.active = 1;
    S.serial++;
    S.status = 0;
    S.keeping = 0;
    S.step_site = NULL;
    S.record_steps = S.cfg.schedule.enabled; /* torch 1.13: step annotations only with a schedule */
    S.ring = ring;
    S.on_step = on_step;
    S.take = take;
    if (ring) {
        S.cfg.schedule.enabled = 0; /* the ring records all the time */
        S.record_steps = 1;
    }
    op_capture_prefill(OP_PREFILL_CHUNKS);
    if (!(S.opts & OP_OPT_AGG)) op_keeper_start(); /* sums take no chunks after the first */
    op_evstore_arm(!(S.opts & (OP_OPT_AGG | OP_OPT_STREAM)) && !ring); /* its stop builds events */
    if (S.opts & OP_OPT_MEMORY) op_memtrack_reset();
    op_device_start(&S.cfg);
    const char *warning = op_sched_config_warning(&S.cfg.schedule);
    if (warning) op_sched_warn_once(warning);
    S.action = opprof_schedule_action(&S.cfg.schedule, 0);
    unsigned i = 0;
    (void)run_ops(op_sched_transition(OPPROF_ACTION_NONE, S.action), &i); /* nothing is ready at start */
    step_range_begin();
    pthread_mutex_unlock(&g_lock);
    op_clear_error();
    return OPPROF_OK;
}

int opprof_sample_thread(void)
{
    if (!op_sample_on()) return OPPROF_OK;
    return op_sample_join() == 0 ? OPPROF_OK
                                 : op_fail(OPPROF_E_NOMEM, "opprof_sample_thread: the thread cannot be sampled "
                                                           "(out of memory, of timers, or past 4096 threads)");
}

int opprof_start(const opprof_config *cfg)
{
    return start_session(cfg, 0, NULL, NULL);
}

int op_session_start_ring(const opprof_config *cfg, uint32_t ring_chunks, void (*on_step)(int64_t step))
{
    return start_session(cfg, ring_chunks < 2 ? 2 : ring_chunks, on_step, NULL);
}

int op_session_start_taking(const opprof_config *cfg, void (*take)(opprof_trace *tr))
{
    return start_session(cfg, 0, NULL, take);
}

int64_t op_session_steps_seen(void)
{
    return atomic_load_explicit(&g_steps_seen, memory_order_relaxed);
}

void op_session_watch(const char *name, void (*fn)(uint64_t t0, uint64_t t1))
{
    if (name) OP_STORE(&op_g.watch_fn, fn);
    OP_STORE(&op_g.watch_name, name);
}

int op_session_live_begin(op_live *lv)
{
    pthread_mutex_lock(&g_lock);
    if (!S.active || !S.ring || !S.gen) {
        pthread_mutex_unlock(&g_lock);
        return op_fail(OPPROF_E_NO_SESSION, "the flight recorder is not running");
    }
    S.readers++;
    lv->gen = S.gen;
    lv->tb = S.tb;
    lv->opts = S.opts;
    lv->step_num = S.step_num;
    pthread_mutex_unlock(&g_lock);
    op_ring_freeze();
    lv->now = op_g.clock ? (uint64_t)op_g.clock(op_g.clock_ctx) : op_cycles();
    op_timebase_finish(&lv->tb);
    return OPPROF_OK;
}

void op_session_live_end(void)
{
    op_ring_thaw();
    pthread_mutex_lock(&g_lock);
    if (S.readers && --S.readers == 0) pthread_cond_broadcast(&g_readers_done);
    pthread_mutex_unlock(&g_lock);
}

/* incomplete: the session was cut short (a signal), and the trace handed
 * out says so in its metadata. */
static int stop_session(opprof_trace **out, int incomplete)
{
    if (out) *out = NULL;
    pthread_mutex_lock(&g_lock);
    if (!S.active) {
        pthread_mutex_unlock(&g_lock);
        return op_fail(OPPROF_E_NO_SESSION, "opprof_stop: no session is active");
    }
    step_range_end();
    unsigned i = 0;
    /* A flight recorder's stop: what its rings hold goes unread (a dump was
     * the time to keep it), so a stop costs no reading however much they hold. */
    if (S.ring && !out && !S.cfg.on_trace_ready) S.keeping = 0;
    S.stopping_incomplete = incomplete;
    op_evstore_arm(0); /* the keeper writes no block ahead for the collection below to miss */
    opprof_trace *tr = run_ops(op_sched_transition(S.action, OP_SCHED_EXIT), &i);
    S.stopping_incomplete = 0;
    const op_collector *col = op_session_collector();
    if (tr && incomplete && col && ((op_trace_head *)(void *)tr)->free) col->mark_incomplete(tr);
    if (S.gen) discard_gen();
    opprof_trace_free(S.pending);
    S.pending = NULL;
    op_device_stop();
    op_sample_stop();
    S.active = 0;
    int rc = S.status;
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

int opprof_stop(opprof_trace **out)
{
    return stop_session(out, 0);
}

int opprof_stop_incomplete(opprof_trace **out)
{
    return stop_session(out, 1);
}

int opprof_step(void)
{
    atomic_fetch_add_explicit(&g_steps_seen, 1, memory_order_relaxed);
    pthread_mutex_lock(&g_lock);
    if (!S.active) {
        pthread_mutex_unlock(&g_lock);
        return op_fail(OPPROF_E_NO_SESSION, "opprof_step: no session is active");
    }
    uint64_t serial = S.serial;
    step_range_end();
    int prev = S.action;
    S.step_num++;
    S.action = opprof_schedule_action(&S.cfg.schedule, S.step_num);
    const op_sched_ops *ops = op_sched_transition(prev, S.action);
    unsigned i = 0;
    opprof_trace *tr;
    while ((tr = run_ops(ops, &i)) != NULL) {
        /* torch calls on_trace_ready in the middle of the transition, before
         * the next cycle starts recording: so do we, without the lock. */
        opprof_trace_ready_fn ready = S.cfg.on_trace_ready;
        void *user = S.cfg.user;
        void (*take)(opprof_trace *) = S.take;
        pthread_mutex_unlock(&g_lock);
        if (take) {
            take(tr); /* the trigger's listener writes it, on its own thread */
        } else {
            if (ready) ready(tr, user);
            opprof_trace_free(tr);
        }
        pthread_mutex_lock(&g_lock);
        if (!S.active || S.serial != serial) { /* the callback stopped the session */
            pthread_mutex_unlock(&g_lock);
            return OPPROF_OK;
        }
    }
    step_range_begin();
    int rc = S.status;
    S.status = 0;
    void (*on_step)(int64_t) = S.ring ? S.on_step : NULL;
    int64_t ended = S.step_num - 1;
    pthread_mutex_unlock(&g_lock);
    if (on_step) on_step(ended); /* the flight recorder may ask its writer for a dump of the slow step */
    return rc;
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

/* The writer of a streamed trace (stream.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture/spill.h"
#include "capture/thread.h"
#include "common/error.h"
#include "common/pfschema.h"
#include "common/quietthread.h"
#include "export/chrome.h"
#include "export/out.h"
#include "export/pftrace_pack.h"
#include "export/pftrace_stream.h"
#include "export/pftrace_zq.h"
#include "export/spool.h"
#include "export/stream.h"
#include "export/stream_enc.h"
#include "model/collect.h"
#include "model/distributed.h"
#include "model/model.h"
#include "model/samples.h"
#include "model/stream.h"
#include "session/handle.h"

static struct {
    int opened, running;
    op_out out;
    op_chrome_stream *cs; /* a Chrome JSON trace's writer, or */
    op_pf_stream *pf;     /* a .pftrace's */
    int pftrace, gz;
    op_sdec *dec;
    op_spool *spool; /* the session's chunks, read back at the end */
    op_senc *enc;    /* the end's writing thread; NULL: batches written in the reader's */
    pthread_t th;
    op_timebase tb;
    uint32_t opts;
    int64_t min_ns;      /* the file's filters (opprof_config.trace_min_duration_ns, */
    uint32_t max_depth;  /* trace_max_depth), 0 none */
    int status;      /* the first failure, 0 none */
    char error[512]; /* its detail */
    char path[4096];
} W;

static pthread_once_t g_fork_once = PTHREAD_ONCE_INIT;
static int g_stats; /* OPPROF_STREAM_STATS=1: the end's cost on stderr, for benchmarks */
static int g_spool_direct = 1; /* OPPROF_SPOOL_DIRECT=0: the spool through the page cache (spool.h) */
static int g_write_direct = 1; /* OPPROF_STREAM_DIRECT=0: a .pftrace's plain ranges as batches too, for benchmarks */

/* A forked child has no session: it forgets the parent's stream (whose
 * temporary file is the parent's to finish) without touching it. */
static void fork_child(void)
{
    memset(&W, 0, sizeof W);
}

static void install_fork_handler(void)
{
    pthread_atfork(NULL, NULL, fork_child);
}

/* Keeps the first failure and its detail; the writer goes on taking chunks
 * (so that no recording thread waits for it) and summing their records for
 * the tables, but writes nothing more. */
static void fail(int rc)
{
    if (W.status || rc == OPPROF_OK) return;
    W.status = rc;
    snprintf(W.error, sizeof W.error, "%s", opprof_last_error());
}

/* One batch into the file: in the end's writing thread, or in the
 * reader's when none started. */
static int encode_batch(void *ctx, const opprof_trace *t, const uint32_t *order, size_t n)
{
    (void)ctx;
    return W.pf ? op_pf_stream_events(W.pf, t, order, n) : op_chrome_stream_events(W.cs, t);
}

static void write_batch(void)
{
    size_t n;
    const uint32_t *order = op_sdec_order(W.dec, &n);
    if (!W.status && W.enc) fail(op_senc_hand(W.enc, W.dec));
    else if (!W.status) fail(encode_batch(NULL, op_sdec_trace(W.dec), order, n));
    op_sdec_clear(W.dec);
}

/* Every batch handed is in the file; the writer is the caller's again. */
static double g_enc_cpu; /* the last end's writing thread, CPU seconds (OPPROF_STREAM_STATS) */

static void end_encoder(void)
{
    if (!W.enc) return;
    fail(op_senc_drain(W.enc));
    g_enc_cpu = op_senc_cpu_s(W.enc);
    op_senc_free(W.enc);
    W.enc = NULL;
}

/* Ends the file's writer: with t the last batch and the samples of
 * `sampled`, else giving up. */
static int end_writer(const opprof_trace *t, const opprof_trace *sampled, uint64_t dropped, int incomplete)
{
    int rc = OPPROF_OK;
    if (W.pf) {
        size_t n = 0;
        const uint32_t *order = t ? op_sdec_order(W.dec, &n) : NULL;
        rc = op_pf_stream_end(W.pf, t, order, n, sampled, dropped, incomplete);
    } else if (W.cs) {
        rc = op_chrome_stream_end(W.cs, t, sampled, dropped, incomplete);
    }
    W.pf = NULL;
    W.cs = NULL;
    return rc;
}

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double g_spool_cpu; /* the spooling thread's CPU seconds in the last run (OPPROF_STREAM_STATS) */

/* During the session the writer only spools the chunks handed over: a
 * write of each full chunk, no decoding or encoding, so it keeps up with
 * the recording threads and never makes one wait. */
static void *writer_main(void *arg)
{
    (void)arg;
    op_thread_never_record();
    op_spill_item it;
    while (op_spill_take(&it) == 0) op_spool_put(W.spool, it.t, it.chunks);
    g_spool_cpu = clock_s(CLOCK_THREAD_CPUTIME_ID); /* read by the joiner */
    return NULL;
}

/* A .pftrace's plain ranges straight from the reader (model/stream.h's
 * sink): written as they are read, on the reader's thread. A failure is
 * kept (fail) and the reader goes on summing. */
static int sink_flush(void *ctx)
{
    (void)ctx;
    write_batch();
    return 0;
}

static int sink_ranges(void *ctx, const opprof_trace *t, const op_sdec_item *items, size_t n)
{
    (void)ctx;
    int rc = W.status ? OPPROF_OK : op_pf_stream_ranges(W.pf, t, items, n);
    if (__builtin_expect(rc != OPPROF_OK, 0)) fail(rc);
    return 0;
}

static const op_sdec_sink k_sink = {NULL, sink_flush, sink_ranges};

/* A chunk read back from the spool, in hand-off order: decoded and written. */
static int replay_chunk(void *ctx, op_tstate *t, op_chunk *c)
{
    (void)ctx;
    if (op_sdec_chunks(W.dec, t, c) != 0) return -1;
    write_batch();
    return 0;
}

int op_stream_open(const char *path, int64_t min_duration_ns, int max_depth)
{
    pthread_once(&g_fork_once, install_fork_handler);
    if (W.opened || W.running) return op_fail(OPPROF_E_ACTIVE, "a streamed trace is already being written");
    if (!path || !*path) return op_fail(OPPROF_E_INVAL, "stream_trace: no file name given");
    if (strlen(path) >= sizeof W.path) return op_fail(OPPROF_E_INVAL, "stream_trace: the file name is too long");
    /* The name picks the format and the compression, as for an export. */
    W.pftrace = op_pf_path(path);
    W.gz = op_path_is_gz(path);
    int rc = op_out_open_path_named(&W.out, path, W.gz, 1);
    if (rc != OPPROF_OK) return rc;
    snprintf(W.path, sizeof W.path, "%s", path);
    W.min_ns = min_duration_ns;
    W.max_depth = max_depth > 0 ? (uint32_t)max_depth : 0;
    W.opened = 1;
    W.status = 0;
    W.error[0] = '\0';
    return OPPROF_OK;
}

void op_stream_abort(void)
{
    if (!W.opened) return;
    op_out_discard(&W.out);
    W.opened = 0;
}

int op_stream_begin(const opprof_trace *head, const op_timebase *tb, uint32_t opts, uint64_t gen)
{
    if (!W.opened) return op_fail(OPPROF_E_INVAL, "no streamed trace is open");
    opprof_export_options o;
    opprof_export_options_init(&o);
    /* A .pftrace.gz holds plain packets: the gzip around them compresses them better. */
    int rc = W.pftrace ? op_pf_stream_begin(&W.pf, &W.out.w, head, &o, W.gz ? 0 : op_pf_zlevel(&o))
                       : op_chrome_stream_begin(&W.cs, &W.out.w, head, &o);
    if (rc != OPPROF_OK) {
        op_stream_abort();
        return rc;
    }
    W.tb = *tb;
    W.opts = opts;
    W.dec = NULL;
    W.spool = op_spool_open(W.path, g_spool_direct);
    if (!W.spool) {
        (void)end_writer(NULL, NULL, 0, 0);
        op_stream_abort();
        return OPPROF_E_IO;
    }
    op_spill_open(gen, 0);
    int e = op_thread_start_quiet(&W.th, NULL, writer_main, NULL);
    if (e != 0) {
        op_spill_close();
        (void)end_writer(NULL, NULL, 0, 0);
        op_stream_abort();
        op_spool_free(W.spool);
        W.spool = NULL;
        return op_fail(OPPROF_E_NOMEM, "cannot start the streamed trace's writer: %s", strerror(e));
    }
    W.running = 1;
    return OPPROF_OK;
}

int op_stream_running(void)
{
    return W.running;
}

static double mono_s(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

/* What the spool could not do is said, never hidden: chunks it kept in
 * memory (the file could not take them), hand-offs deferred while it was
 * behind, chunks lost. */
static void spool_note(uint64_t lost)
{
    op_spool_stats st;
    op_spool_stats_get(W.spool, &st);
    op_spill_stats q;
    op_spill_stats_get(&q);
    if (st.error[0] || st.kept)
        fprintf(stderr, "opprof: trace spool: %s; %llu chunks of records were kept in memory instead\n",
                st.error[0] ? st.error : "out of memory", (unsigned long long)st.kept);
    if (q.deferred)
        fprintf(stderr, "opprof: trace spool: the disk fell behind; %llu hand-offs waited in the threads' memory\n",
                (unsigned long long)q.deferred);
    lost += st.lost;
    if (lost && !W.status)
        fail(op_fail(OPPROF_E_IO, "%llu chunks of records were lost from the trace's spool (%s)",
                     (unsigned long long)lost, st.error[0] ? st.error : "unreadable"));
}

int op_stream_stop(uint64_t gen, const op_timebase *tb, uint64_t stop_ticks, int incomplete, opprof_trace **out)
{
    *out = NULL;
    if (!W.running) return op_fail(OPPROF_E_NO_SESSION, "no streamed trace is being written");
    /* Under the registry lock no thread hands a chunk over or exits: the
     * queue and the threads' lists hold every record, in order. */
    double t_stop = mono_s();
    g_enc_cpu = 0;
    double zq0 = g_stats ? op_pf_zq_cpu_s() : 0;
    op_registry_lock();
    op_spill_close();
    pthread_join(W.th, NULL);
    double t_joined = mono_s(), cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    W.running = 0;
    /* The file's times by the session's final timebase, as its tables'. */
    W.tb = *tb;
    W.dec = op_sdec_new(&W.tb, W.opts);
    if (W.dec && W.pftrace) op_sdec_keep_begins(W.dec); /* a slice begins in the file before its end is known */
    if (W.dec) op_sdec_filter(W.dec, W.min_ns, W.max_depth);
    /* The program is done: its cores are free. A .pftrace of plain ranges
     * (no shapes, no stacks: instrumented functions, most API sessions) is
     * written as it is read, on this thread, and compressed on the other
     * core (pftrace_zq.c): making each range two events that a writing
     * thread then read back took more CPU than writing its packets
     * (bench_trace_cost: reading 1.5-1.8 s and writing 1.2-1.4 s of
     * twothread_work's 31M ranges). Else the records are read here and
     * written beside (stream_enc.h). */
    int direct = g_write_direct && W.pftrace && !(W.opts & (OP_OPT_SHAPES | OP_OPT_STACK));
    if (W.dec && direct) op_sdec_direct(W.dec, &k_sink);
    if (W.dec && !W.status && !direct) W.enc = op_senc_new(encode_batch, NULL);
    int nomem = !W.dec;
    uint64_t lost = 0;
    if (op_spool_replay(W.spool, nomem ? NULL : replay_chunk, NULL, &lost) != 0) nomem = 1;
    spool_note(lost);
    for (op_tstate *t = op_registry_first(); t && !nomem; t = t->next) {
        if (t->gen != gen) continue;
        uint64_t close = atomic_load_explicit(&t->dead, memory_order_acquire) ? t->exit_ticks : stop_ticks;
        if (op_sdec_rest(W.dec, t, close) != 0) nomem = 1;
        else write_batch();
    }
    if (!nomem && op_sdec_end_rest(W.dec, stop_ticks) != 0) nomem = 1;
    op_registry_reap(gen);
    op_registry_unlock();
    opprof_trace *tr = NULL;
    if (!nomem && op_sdec_finish(W.dec, tb, stop_ticks, &tr) != 0) nomem = 1;
    int rc = nomem ? op_fail(OPPROF_E_NOMEM, "out of memory ending the streamed trace") : OPPROF_OK;
    /* A sampling session's samples go into the file, at its end: taken
     * here into the trace of sums, whose collector's own take (model/
     * handle.c) then finds none left. */
    if (tr && rc == OPPROF_OK) rc = op_samples_take(tr, tb, stop_ticks);
    end_encoder();
    if (!W.status && W.dec)
        fail(end_writer(op_sdec_trace(W.dec), rc == OPPROF_OK ? tr : NULL, tr ? tr->dropped : 0, incomplete));
    else (void)end_writer(NULL, NULL, 0, 0);
    if (!W.status) fail(op_out_close(&W.out));
    else op_out_discard(&W.out);
    W.opened = 0;
    op_sdec_free(W.dec);
    W.dec = NULL;
    op_spool_stats sp;
    op_spool_stats_get(W.spool, &sp);
    op_spool_free(W.spool);
    W.spool = NULL;
    if (W.status) {
        fprintf(stderr, "opprof: streamed trace %s: %s\n", W.path, W.error);
        if (rc == OPPROF_OK) rc = op_fail(W.status, "%s", W.error);
    }
    if (tr) tr->options |= OP_TRACE_STREAMED;
    /* OPPROF_STREAM_STATS=1: what the end cost, for benchmarks */
    if (g_stats) {
        double t_end = mono_s(), rd = clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu0, zq = op_pf_zq_cpu_s() - zq0;
        uint64_t n = tr ? tr->attempted : 0;
        /* per thread: the ranges over its CPU time, the throughput of one core */
        char cpu[256];
        int k = snprintf(cpu, sizeof cpu, "reading %.2f s (%.1fM/s a core)", rd, rd > 0 ? (double)n / rd / 1e6 : 0);
        if (g_enc_cpu > 0 && k > 0 && (size_t)k < sizeof cpu)
            k += snprintf(cpu + k, sizeof cpu - (size_t)k, ", writing %.2f s (%.1fM/s)", g_enc_cpu,
                          (double)n / g_enc_cpu / 1e6);
        if (zq > 0 && k > 0 && (size_t)k < sizeof cpu)
            snprintf(cpu + k, sizeof cpu - (size_t)k, ", compressing %.2f s (%.1fM/s)", zq, (double)n / zq / 1e6);
        fprintf(stderr, "opprof: stream stats: spooled %.1f MB in %llu chunks (%llu direct) on %.2f s of CPU; "
                "spool drained in %.3f s; %llu ranges decoded and written in %.3f s (%.2fM/s); CPU: %s\n",
                (double)sp.bytes / 1e6, (unsigned long long)sp.chunks, (unsigned long long)sp.direct, g_spool_cpu,
                t_joined - t_stop, (unsigned long long)n, t_end - t_joined, (double)n / (t_end - t_joined) / 1e6, cpu);
    }
    *out = tr;
    return rc;
}

/* The session's view of the writer: begin makes the trace's head (its
 * options and distributedInfo) for the file's metadata. */
static int hook_begin(const op_timebase *tb, uint32_t opts, uint64_t gen)
{
    opprof_trace *head = op_trace_new();
    int rc = head ? OPPROF_OK : op_fail(OPPROF_E_NOMEM, "out of memory");
    if (rc == OPPROF_OK) {
        op_collect_options(head, tb, opts, 0);
        rc = op_distributed_apply(head);
    }
    if (rc == OPPROF_OK) rc = op_stream_begin(head, tb, opts, gen);
    opprof_trace_free(head);
    return rc;
}

static int hook_stop(const op_gen_done *g, int incomplete, opprof_trace **out)
{
    return op_stream_stop(g->gen, g->tb, g->stop_ticks, incomplete, out);
}

static const op_stream_hooks k_hooks = {op_stream_open, hook_begin, op_stream_running, hook_stop, op_stream_abort};

/* Early (priority 101), as the collector: a program's own constructor may
 * start a streamed session. */
__attribute__((constructor(101))) static void lend_writer(void)
{
    const char *stats = getenv("OPPROF_STREAM_STATS"); /* now: opprof exec's settings go before main */
    g_stats = stats && *stats == '1';
    const char *direct = getenv("OPPROF_SPOOL_DIRECT");
    g_spool_direct = !(direct && strcmp(direct, "0") == 0);
    const char *wd = getenv("OPPROF_STREAM_DIRECT");
    g_write_direct = !(wd && strcmp(wd, "0") == 0);
    op_session_lend_stream(&k_hooks);
}

/* Here, beside the writer, so that a statically linked program that asks
 * whether its trace was streamed also links the writer that streams it. */
int opprof_trace_streamed(const opprof_trace *t)
{
    return t && (t->options & OP_TRACE_STREAMED) ? 1 : 0;
}

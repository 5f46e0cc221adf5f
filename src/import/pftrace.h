/* The .pftrace reader: Perfetto's protobuf trace into the event model, so
 * that every table of a .pftrace equals the table of the same session's
 * Chrome trace (export/pftrace.h describes what opprof writes).
 *
 * What it reads, of any Perfetto trace: TrackDescriptors of threads (and
 * tracks under them), TrackEvent slice begin/end pairs on those tracks
 * (names inline or interned, categories as in the Chrome reader: none is
 * cpu_op, an unknown one is skipped), "[memory]" instants, opprof's debug
 * annotations and metadata track; timestamps absolute or on sequence-scoped
 * clocks, incremental or not, with packet defaults and interning per
 * sequence (cleared by SEQ_INCREMENTAL_STATE_CLEARED), compressed_packets
 * inflated in place (pftrace_inflate.c), ahead of the decoding on a thread
 * of their own (pftrace_ahead.h). A slice still open at the end
 * lasts to the trace's last time. Everything else is skipped. */
#ifndef OPPROF_IMPORT_PFTRACE_H
#define OPPROF_IMPORT_PFTRACE_H

#include <stdint.h>

#include "common/buf.h"
#include "import/pbr.h"
#include "import/source.h"
#include "import/threads.h"
#include "common/map.h"
#include "model/model.h"

/* The most one packet may hold: as the JSON reader's largest token. */
#define PF_MAX_PACKET ((size_t)256 << 20)

/* The most one compressed_packets may inflate to. Perfetto keeps each
 * under 512 KiB compressed; deflate at best shrinks about 1000:1, so a
 * real batch inflates to far less, and a hostile one (a "decompression
 * bomb") is refused here instead of taking the machine's memory. */
#define PF_MAX_INFLATED ((size_t)64 << 20)

enum { PF_TK_OTHER, PF_TK_THREAD, PF_TK_META };

/* A slice open on a track while sums are folded (pftrace_fold.c). */
typedef struct pf_fopen {
    int64_t start;  /* its begin, ns */
    int64_t child;  /* the durations of its direct children so far */
    uint64_t seq;   /* its place among the begins kept: the model's order of addition */
    uint64_t flops; /* its FLOPs annotation, 0 none */
    uint32_t name;  /* strtab id; UINT32_MAX: a slice the model skips, kept to pair with its end */
    uint32_t shapes; /* strtab id of its input shapes, 0 none */
} pf_fopen;

typedef struct pf_track {
    int kind;
    uint32_t thread;
    uint32_t *open; /* open slices: event index, UINT32_MAX for a skipped one */
    size_t nopen, cap;
    pf_fopen *fo;   /* open slices while folding (then open stays empty) */
    size_t nfo, capfo;
    int64_t last_ns; /* while folding: the track's latest begin or end, which the next may not precede */
} pf_track;

/* The key averages' sums folded as slices are read (pftrace_fold.c). */
typedef struct pf_fold pf_fold;

/* r->status when the fold meets what only the model can answer (memory
 * events, device activity, a thread's slices on two tracks, times that go
 * back on a track): the caller reads the file again into the model. */
#define PF_NEED_MODEL 1

/* The most packet sequences a file may have. Perfetto gives one to each
 * writer (a thread of a producer), so real traces have tens to thousands;
 * each costs the reader about 250 bytes, so the bound keeps a small hostile
 * file of one-packet sequences from costing more than about 16 MiB. */
#define PF_MAX_SEQS ((size_t)1 << 16)

typedef struct pf_clock {
    uint8_t id; /* 0..63: the sequence-scoped clock 64 + id */
    uint8_t valid, incremental;
    uint64_t value, unit;
    int64_t offset; /* to the trace's clock */
} pf_clock;

/* Event name iids below this are also kept in an array of their sequence
 * (pf_seq.name_q), read by the short path of plain slices (op_pf_fold_run). */
#define PF_QUICK_NAMES 128

/* A sequence's state, made by the first packet that sets some (a clock
 * snapshot, defaults, interned data): a packet of a sequence that has none
 * reads an empty one (pf_reader.none), so that a sequence costs nothing
 * until it says something, and its clocks only as many as it defines. */
typedef struct pf_seq {
    op_map names, cats, anns, strs; /* iid -> strtab id, category, PF_ANN_*, strtab id */
    uint32_t *name_q; /* [PF_QUICK_NAMES]: iid -> strtab id + 1 as in names, 0 not interned; NULL until one is */
    uint32_t def_clock;
    int has_def_track;
    uint64_t def_track;
    pf_clock *clk; /* the sequence-scoped clocks (64..127) its snapshots defined */
    size_t nclk, cap_clk;
} pf_seq;

/* The sequence-scoped clock 64 + id of s, NULL when none is defined. */
pf_clock *op_pf_clock(pf_seq *s, unsigned id);

/* A timestamp ts on clock k (a sequence's, valid) in the trace's ns into
 * *v, before the limit check: k's unit and offset, and an incremental
 * clock's value plus *step, which the caller adds to k->value when it
 * takes the packet. 0, or -1 when it overflows. */
static inline int op_pf_clock_ns(const pf_clock *k, uint64_t ts, uint64_t *v, uint64_t *step)
{
    if (__builtin_mul_overflow(ts, k->unit, step)) return -1;
    if (!k->incremental) *v = *step;
    else if (__builtin_add_overflow(k->value, *step, v)) return -1;
    *v += (uint64_t)k->offset; /* unsigned: a negative offset wraps back, as intended */
    return 0;
}

/* The decompressors of a reader, or of the inflater ahead of it, each
 * made at its first batch. */
typedef struct pf_unpackers {
    struct libdeflate_decompressor *ld;
    void *zd; /* zstd's ZSTD_DCtx */
} pf_unpackers;

enum { PF_UNPACK_OK, PF_UNPACK_SHORT, PF_UNPACK_BAD, PF_UNPACK_NOMEM };

/* z[0..n) decompressed whole into out[0..cap), *got bytes: one or more
 * zstd frames when zstd, else a zlib or (by its first bytes) gzip stream,
 * by libdeflate. PF_UNPACK_SHORT: out is too small; PF_UNPACK_BAD: not a
 * valid stream, *why (when not NULL) zstd's reason or NULL for libdeflate,
 * which gives none. The one call both the reader and the inflater ahead
 * of it (pftrace_ahead.c) make. */
int op_pf_unpack(pf_unpackers *u, int zstd, const unsigned char *z, size_t n, unsigned char *out, size_t cap,
                 size_t *got, const char **why);
void op_pf_unpackers_free(pf_unpackers *u);

typedef struct pf_reader {
    opprof_trace *t;
    op_thread_map threads;
    op_map seq_ix, track_ix;
    /* The last sequence and track found: most packets are on the same ones
     * as the packet before (a thread's batch), so each costs a compare
     * instead of a hash lookup. A track's index never changes once given. */
    uint64_t last_seq_id, last_track;
    uint32_t last_seq_k, last_track_k;
    int last_seq_ok, last_track_ok;
    op_map call_stacks; /* "Call stack" texts read (import/callstack.h) */
    pf_seq *seqs;
    size_t nseqs, cap_seqs;
    pf_seq none; /* what a sequence without state of its own reads: always empty */
    pf_track *tracks;
    size_t ntracks, cap_tracks;
    int64_t t_min, t_max;
    int any_time;
    uint64_t mem_totals;
    op_buf scratch;
    uint64_t max_events; /* refuse more events and memory events than this; 0 no limit */
    const struct op_import_batch *batch; /* NULL: the whole trace at once (import.h) */
    int batch_failed; /* the failure is the batch's writer's, in err */
    pf_fold *fold; /* non-NULL: sums folded, no events kept */
    /* The packet being read, for error offsets. */
    const unsigned char *pkt;
    uint64_t pkt_off;
    /* While packets inflated from compressed_packets are read: pkt_off is
     * inside the inflated bytes, and errors name the file's byte z_off
     * where the compressed bytes start. */
    int in_batch;
    uint64_t z_off;
    void *z;  /* zlib's inflate stream (a z_stream), for what libdeflate refuses */
    pf_unpackers un;
    unsigned char *zbuf;
    size_t zcap;
    uint64_t z_out; /* bytes inflated from earlier batches, bounded by op_inflate_over */
    /* Batches inflated ahead (pftrace_ahead.h): started at the file's
     * first batch, unless OPPROF_READ_AHEAD=0 or it could not start. */
    struct pf_ahead *ahead;
    int ahead_off;
    int status;
    uint64_t err_off;
    char err[200];
} pf_reader;

/* Records a failure at p (inside the current packet); returns -1. */
int op_pf_fail(pf_reader *r, int status, const unsigned char *p, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* One TracePacket's body. 0 or -1 (failure recorded). */
int op_pf_packet(pf_reader *r, op_pbr body);

/* The packets of a compressed_packets field (zstd: of a
 * zstd_compressed_packets field) (pftrace_inflate.c), each through
 * op_pf_packet. 0 or -1 (failure recorded). */
int op_pf_compressed(pf_reader *r, op_pbr z, int zstd);
void op_pf_inflate_free(pf_reader *r);

/* A TrackEvent at ns on sequence s (pftrace_event.c). */
int op_pf_track_event(pf_reader *r, pf_seq *s, op_pbr te, int64_t ns);

/* Events and memory events the reader holds (or, folding, has met), for
 * the max_events check. */
uint64_t op_pf_held(const pf_reader *r);

/* The fold's side of a slice begin and end on track tr, and of what the
 * fold cannot take (PF_NEED_MODEL); pftrace_fold.c. */
/* A begin or end at ns on tr: PF_NEED_MODEL when ns precedes the track's
 * last time, or (a begin) when tr's thread has slices on another track. */
int op_pf_fold_time(pf_reader *r, pf_track *tr, int64_t ns, int begin);
/* *o pushed on tr's stack of open slices (o->name UINT32_MAX: skipped). */
int op_pf_fold_push(pf_reader *r, pf_track *tr, const pf_fopen *o, const unsigned char *at);
/* Slice *o, popped from tr, ended dur after its start: into its row's
 * sums and its parent's children time. */
int op_pf_fold_close(pf_reader *r, pf_track *tr, const pf_fopen *o, int64_t dur, const unsigned char *at);
/* Sets PF_NEED_MODEL; -1. */
int op_pf_need_model(pf_reader *r);

/* The fold's state for the sums opt's key averages need; NULL when out of
 * memory. */
pf_fold *op_pf_fold_new(const opprof_avg_options *opt);
void op_pf_fold_free(pf_fold *f);
/* While folding, the plain slices of inflated packets p..end as opprof
 * writes them (op_pf_seq_quick: a begin with a name iid under
 * PF_QUICK_NAMES, or an end, on its sequence's default track) read without
 * the general reader's steps, to the same sums. *stop gets the first
 * packet it did not read: another shape, or one the general reader must
 * see (an unknown sequence or name, a time that goes back, a stack to
 * grow, the limit of events), which then reads it. base: the inflated
 * bytes' start, for error offsets. 0, or -1 out of memory (failure
 * recorded). */
int op_pf_fold_run(pf_reader *r, const unsigned char *p, const unsigned char *end, const unsigned char *base,
                   const unsigned char **stop);

/* At the end of the input: slices still open end at the trace's last time
 * (as close_open does for events), the rows are put in the order of their
 * first slices, and r->t is finished. 0 or -1 (failure recorded). */
int op_pf_fold_finish(pf_reader *r);

/* Reads src (owned, closed) folding the sums key averages with opt need
 * into *out (a finished trace of sums, op_aggrow, and no events). Returns
 * PF_NEED_MODEL (nothing in *out) when the file needs the model; else as
 * op_import_pftrace. */
int op_import_pftrace_fold(op_source *src, const char *label, uint64_t max_events, const opprof_avg_options *opt,
                           opprof_trace **out);

/* The reader's entry: src (owned, closed) into a finished model; more
 * than max_events events and memory events (0: no limit) fail with
 * OPPROF_E_RANGE as soon as the reader meets them. */
int op_import_pftrace(op_source *src, const char *label, uint64_t max_events, opprof_trace **out);

/* The same in batches (import.h, op_import_batches): *out is left with
 * what the end needs, its events handed out. */
int op_import_pftrace_batches(op_source *src, const char *label, const struct op_import_batch *b, opprof_trace **out);

/* 1 when the first bytes b[0..n) look like a Perfetto trace rather than
 * JSON: a Trace.packet tag (0x0a, a newline to JSON) and a length, where JSON
 * would have white space up to its '{' or '['. */
int op_pf_sniff(const unsigned char *b, size_t n);

#endif

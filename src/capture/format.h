/* The record format: what a recording thread writes into its chunks, and
 * what every reader of them (the collector, model/collect.c; the streamed
 * trace's reader, model/stream.c) reads. One home for both sides, as Tracy
 * keeps its queue's format in one file: a field added here is added for
 * the writer (capture/record.c, memory.c, reserve.c) and the readers at once.
 *
 * A chunk is a run of 64-bit words. Words written before the thread
 * publishes its cursor (release) are plain stores; the words changed after
 * that (t1, the forced flag, the flops slot, an arg's value) use relaxed
 * atomics, which are plain moves on x86-64 and aarch64, so a concurrent
 * reader never reads torn data and TSan sees no race. Readers load every
 * word with OP_LOAD.
 *
 *   range:   [site | flags] [t0] [t1]                       24 bytes
 *   range+x: [site | flags | OP_REC_EXT] [t0] [t1] [hdr] [payload...]
 *   memory:  [OP_REC_MEM] [ts] [addr] [bytes]
 *   gap:     [OP_REC_GAP] [from] [to]
 *
 * A range+x's payload holds, in this order and each only when its header
 * says so: the flops slot, the stack slot, the args block, the inputs'
 * descriptors and their dims.
 *
 * Sites are at least 8-byte aligned, so word 0's low 3 bits hold flags.
 * t1 stays OP_OPEN until the range ends. A range's record is reserved at its
 * begin, so each thread's buffer is in start order and a parent precedes its
 * children. */
#ifndef OPPROF_CAPTURE_FORMAT_H
#define OPPROF_CAPTURE_FORMAT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/compiler.h"
#include "opprof.h"

typedef uint64_t op_word;

enum {
    OP_REC_EXT = 1u,    /* a header word and payload follow */
    OP_REC_FORCED = 2u, /* closed by an outer end or by stop */
    OP_REC_MEM = 4u,    /* a memory event (word 0 holds only this) */
    OP_REC_FLAGS = 7u,
    /* word 0 exactly: [OP_REC_GAP] [from] [to], the profiler's own work on
     * this thread, taken out of its timeline (model/gaps.h) */
    OP_REC_GAP = OP_REC_MEM | OP_REC_FORCED
};

/* Words of each kind of record; a range+x is OP_REC_HEAD_WORDS and its payload. */
enum { OP_REC_RANGE_WORDS = 3, OP_REC_HEAD_WORDS = 4, OP_REC_MEM_WORDS = 4, OP_REC_GAP_WORDS = 3 };

#define OP_OPEN UINT64_MAX

/* Extension header: payload words, inputs, optional slots. */
#define OP_EXT_WORDS(h) ((uint32_t)((h)&0xffffu))
#define OP_EXT_NINPUTS(h) ((uint32_t)(((h) >> 16) & 0xffu))
#define OP_EXT_HAS_FLOPS (1ull << 24) /* a flops word first: UINT64_MAX until given */
#define OP_EXT_HAS_STACK (1ull << 25) /* a stack id word next */
#define OP_EXT_HAS_ARGS (1ull << 26)  /* an args block next (before the inputs) */
/* The inputs are not in the payload: they equal those of this thread's
 * input tuple number OP_EXT_REF(h), the OP_EXT_REF(h)-th record of the
 * session on this thread that has OP_EXT_NINPUTS > 0 and no
 * OP_EXT_INPUTS_REF (counted from 0). A reader must walk the thread's
 * records in order from the session's first; rings never refer. */
#define OP_EXT_INPUTS_REF (1ull << 27)
#define OP_EXT_REF(h) ((uint32_t)((h) >> 32))

/* The header of a range+x: payload words, inputs, which slots it has, and
 * ref (0, or op_ext_ref's) when its inputs are a reference. */
static inline uint64_t op_ext_header(uint32_t payload, unsigned ninputs, int flops, int stack, int args, uint64_t ref)
{
    return ref | (uint64_t)ninputs << 16 | (flops ? OP_EXT_HAS_FLOPS : 0) | (stack ? OP_EXT_HAS_STACK : 0) |
           (args ? OP_EXT_HAS_ARGS : 0) | payload;
}

static inline uint64_t op_ext_ref(uint32_t ordinal)
{
    return OP_EXT_INPUTS_REF | (uint64_t)ordinal << 32;
}

/* Where a range+x's slots start, in words from the record's first: the
 * flops slot, the stack slot (after the flops slot), the args block (after
 * both). */
#define OP_EXT_FLOPS_AT 4u
static inline size_t op_ext_stack_at(uint64_t hdr)
{
    return OP_REC_HEAD_WORDS + ((hdr & OP_EXT_HAS_FLOPS) ? 1 : 0);
}

static inline size_t op_ext_args_at(uint64_t hdr)
{
    return op_ext_stack_at(hdr) + ((hdr & OP_EXT_HAS_STACK) ? 1 : 0);
}

/* The args block: one word with the count (low 8 bits) and 2 type bits per
 * arg from bit 8, then a key word and a value word per arg. Keys and string
 * values are static pointers; doubles are stored as their bits. A value may
 * be replaced when the range ends (opprof_end_args), so readers load value
 * words with relaxed atomics; types never change after begin. */
#define OP_ARGS_COUNT(w) ((unsigned)((w)&0xffu))
#define OP_ARGS_TYPE(w, i) ((int)(((w) >> (8 + 2 * (i))) & 3u))
#define OP_ARGS_WORDS(n) (1u + 2u * (n))

static inline uint64_t op_args_head(const opprof_arg *args, unsigned n)
{
    uint64_t head = n;
    for (unsigned i = 0; i < n; i++) head |= (uint64_t)((unsigned)args[i].type & 3u) << (8 + 2 * i);
    return head;
}

/* An arg's value word. */
static inline uint64_t op_arg_value(const opprof_arg *a)
{
    uint64_t v;
    switch (a->type) {
    case OPPROF_ARG_DOUBLE: memcpy(&v, &a->v.d, sizeof v); break;
    case OPPROF_ARG_STR: v = (uint64_t)(uintptr_t)a->v.s; break;
    default: v = (uint64_t)a->v.i; break;
    }
    return v;
}

/* Where a range+x's inputs start (after its args block), in words from the
 * record's first, at most len (the record's length). */
static inline size_t op_ext_inputs_at(const op_word *p, uint64_t hdr, size_t len)
{
    size_t q = op_ext_args_at(hdr);
    if ((hdr & OP_EXT_HAS_ARGS) && q < len) q += OP_ARGS_WORDS(OP_ARGS_COUNT(OP_LOAD(&p[q])));
    return q <= len ? q : len;
}

/* The inputs: a descriptor per input, four to a word, the first in the low
 * 16 bits (dtype << 8 | ndim), then each input's dims in turn. */
#define OP_DESC_WORDS(n) (((n) + 3u) / 4u)

static inline uint64_t op_desc_put(unsigned i, unsigned dtype, unsigned ndim)
{
    return (uint64_t)(dtype << 8 | ndim) << (16 * (i % 4));
}

/* Input i's descriptor: its dtype and ndim. */
static inline void op_desc_get(const op_word *desc, unsigned i, uint8_t *dtype, uint8_t *ndim)
{
    unsigned d = (unsigned)(OP_LOAD(&desc[i / 4]) >> (16 * (i % 4))) & 0xffffu;
    *dtype = (uint8_t)(d >> 8);
    *ndim = (uint8_t)(d & 0xff);
}

/* Largest record: range + header + flops + stack + args + 4 descriptor words + dims. */
#define OP_MAX_RECORD_WORDS (4 + 2 + OP_ARGS_WORDS(OPPROF_MAX_ARGS) + 4 + OPPROF_MAX_INPUTS * OPPROF_MAX_DIMS)

/* A range's site, from its word 0. */
static inline const opprof_site *op_rec_site(uint64_t w0)
{
    return (const opprof_site *)(uintptr_t)(w0 & ~(uint64_t)OP_REC_FLAGS);
}

/* The length in words of the record at p, whose data ends at end (p < end);
 * 0 when it is cut short there (a record still being written). */
static inline size_t op_rec_len(const op_word *p, const op_word *end)
{
    size_t avail = (size_t)(end - p);
    uint64_t w0 = OP_LOAD(&p[0]);
    size_t len = w0 == OP_REC_MEM ? OP_REC_MEM_WORDS : OP_REC_RANGE_WORDS; /* memory, gap, plain range */
    if (w0 & OP_REC_EXT) {
        if (avail < OP_REC_HEAD_WORDS) return 0;
        len = OP_REC_HEAD_WORDS + OP_EXT_WORDS(OP_LOAD(&p[3]));
    }
    return avail < len ? 0 : len;
}

/* A chunk of a thread's records. The pool (capture/pool.h) hands them out
 * and takes them back; a thread links them as it fills them. */
typedef struct op_chunk {
    _Atomic(struct op_chunk *) next;
    _Atomic(op_word *) end; /* published end of the data, set when the chunk is left */
    size_t nwords;
    /* NULL: a mapping of its own, pooled when given back. Else the block of
     * the retired-data arena that holds this copy of an exited thread's
     * last records (capture/arena.h). */
    struct op_arena *arena;
    /* Flight recorder: the clock when its thread left it (or exited), so
     * that the exited threads' oldest chunks go first (ring_exited.c). */
    uint64_t left;
    op_word words[];
} op_chunk;

#endif

/* Compressed batches inflated ahead of the .pftrace reader, on a thread
 * of their own. The reader's decoding is most of its time, inflating the
 * rest (12% of `opprof summary` of a 30M-slice trace); on a second core the
 * two overlap. The reader finds a file's batches in the bytes it holds past
 * the packet it decodes (pftrace.c), gives each to the inflater in file
 * order, and takes each when it reaches it. The inflater only inflates:
 * a batch it cannot inflate whole (its codec refuses it, or it inflates
 * past AHEAD_MAX_OUT) is handed back as not done, and the reader inflates
 * it in place as before, so that every failure is the reader's own, named
 * as before, and the decompression-bomb bound is checked by the reader on
 * what was inflated either way. */
#ifndef OPPROF_IMPORT_PFTRACE_AHEAD_H
#define OPPROF_IMPORT_PFTRACE_AHEAD_H

#include <stddef.h>
#include <stdint.h>

typedef struct pf_ahead pf_ahead;

/* The inflater, its thread started (taking no signal); NULL when memory or
 * a thread cannot be had (the reader then inflates every batch itself). */
pf_ahead *op_pf_ahead_new(void);

/* The compressed bytes z[0..n) of the batch whose bytes start at file
 * offset key (zstd: zstd frames, else a zlib stream), copied and queued.
 * 0 queued; 1 the queue is full (give it again later); -1 not taken (too
 * big, or out of memory): the reader inflates that one itself. */
int op_pf_ahead_give(pf_ahead *a, uint64_t key, int zstd, const unsigned char *z, size_t n);

/* The batch at key of n compressed bytes, waited for: 1 with its inflated
 * bytes in *out[0..*out_n), held until op_pf_ahead_release; 0 when it was
 * never given or could not be inflated (nothing held). */
int op_pf_ahead_take(pf_ahead *a, uint64_t key, size_t n, const unsigned char **out, size_t *out_n);
void op_pf_ahead_release(pf_ahead *a);

/* Batches taken inflated, by every reader of this process so far (for the
 * tests, which check the inflater was the one that inflated). */
uint64_t op_pf_ahead_taken(void);

/* The thread stopped and joined, everything freed; NULL is nothing. */
void op_pf_ahead_free(pf_ahead *a);

#endif

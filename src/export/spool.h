/* The spool of a streamed trace: while the program runs, the writer thread
 * only copies each full chunk of records to a file (no decoding, no
 * encoding), so it never falls behind the recording threads and takes
 * little of the cores the program uses; the trace is decoded and encoded
 * from the spool once the session stops (export/stream.c).
 *
 * A chunk may hold records of ranges still open (a record is reserved at
 * its begin and completed at its end): such a chunk is held in memory, with
 * the list of its open records, until they have all ended, and written
 * then. Chunks held are few (those with a range open across their hand-off
 * still open now: the open depth, not the run). The index in memory keeps
 * the hand-off order, so a chunk written late is read back in its place.
 *
 * Chunks go to the file with O_DIRECT where the file system takes it:
 * each chunk whole, from its own mapping, so the kernel neither copies the
 * records nor takes a page of cache for each 4 KiB of them (the page
 * cache then, where it does not, or when not asked: OPPROF_SPOOL_DIRECT=0,
 * read by export/stream.c).
 *
 * The file has no name (O_TMPFILE, or a name unlinked at once) in the
 * trace's folder, else in TMPDIR: a killed program leaves nothing behind.
 * Its descriptor is checked (device and inode) before each use, since a
 * program may close descriptors it did not open and reuse the number; a
 * file that cannot be written (a full disk) or was closed under us keeps
 * later chunks in memory instead, and says so. */
#ifndef OPPROF_EXPORT_SPOOL_H
#define OPPROF_EXPORT_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "capture/state.h"

typedef struct op_spool op_spool;

/* A spool near the file `near` (its folder first), written past the page
 * cache when `direct` and the file system allow. NULL with the error set
 * when no file can be made anywhere. */
op_spool *op_spool_open(const char *near, int direct);

/* Takes a hand-off of thread t (chunks in order, each with its end
 * published): each chunk is written, or held while a range in it is open.
 * Also writes the held chunks whose ranges have all ended since. */
void op_spool_put(op_spool *s, op_tstate *t, op_chunk *chunks);

/* Hands every chunk taken so far to fn in hand-off order, each a chunk of
 * its own (next NULL, end published) that fn owns from then on: read back
 * from the file into a pool chunk, or the held chunk itself. Then the spool
 * is empty again. 0; or fn's first non-zero return (the rest are freed
 * unread). Chunks the file lost (a descriptor closed under us) are counted
 * in *lost and skipped. */
typedef int (*op_spool_fn)(void *ctx, op_tstate *t, op_chunk *c);
int op_spool_replay(op_spool *s, op_spool_fn fn, void *ctx, uint64_t *lost);

/* What happened to the file, for the closing note and tests: bytes and
 * chunks written (direct: of them, those written past the page cache),
 * chunks kept in memory because the file could not take them, chunks lost
 * (no memory to index them), the most held at once for open ranges, and
 * the file's first error ("" none). */
typedef struct op_spool_stats {
    uint64_t bytes, chunks, direct, kept, lost, held_peak;
    const char *error;
} op_spool_stats;
void op_spool_stats_get(const op_spool *s, op_spool_stats *st);

/* Closes the file and frees what is left (held chunks go to the pool). */
void op_spool_free(op_spool *s);

#endif

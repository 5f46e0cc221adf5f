/* Atomic file replacement: write a temporary file in the target's directory,
 * fsync it, rename it over the target. A reader sees the old file or the new
 * one, never a part; a failure leaves the old file as it was and no
 * temporary file behind.
 *
 * The temporary file has no name (O_TMPFILE) until it is committed, so a
 * crash, _exit or kill -9 leaves nothing. A file written for long (a
 * streamed trace: op_afile_open_named) has a hidden name instead,
 * .NAME.PID.XXXXXX, so that it can be opened again when the program closes
 * opprof's descriptor (see common/ownfd.h); one left by a process that is
 * gone is removed when the next writer of NAME opens it. Every write checks
 * that the descriptor is still the file's: a descriptor the program took
 * over is never written or closed. */
#ifndef OPPROF_EXPORT_AFILE_H
#define OPPROF_EXPORT_AFILE_H

#include <stddef.h>
#include <stdint.h>

#include "common/ownfd.h"

typedef struct op_afile {
    int fd;     /* own.fd */
    op_ownfd own;
    char *path; /* the target */
    char *tmp;  /* the temporary file's name, NULL once renamed or removed, or while it has none */
    int anon;   /* the temporary file has no name (O_TMPFILE) */
    unsigned reopened; /* times the program took the descriptor and the file was opened again */
    uint64_t written;
    uint64_t synced; /* bytes whose write-back has been started */
    int direct;      /* the target is a device or a pipe: written in place */
    int err;         /* errno of the write that failed, 0 none */
} op_afile;

/* Creates the temporary file. On failure nothing exists and the detail
 * names the path and the system's reason. A symbolic link is followed (the
 * file it names is replaced, as writing through it would); a target that is
 * not a regular file (/dev/stdout, a named pipe) is written in place. */
int op_afile_open(op_afile *f, const char *path);

/* The same with a temporary file that has a name from the start, which
 * op_afile_write opens again when the program closed opprof's descriptor:
 * for a file written while the program runs. */
int op_afile_open_named(op_afile *f, const char *path);

/* Writes all of p[0..n), retrying short writes; a failure (ENOSPC, EFBIG,
 * EIO) is returned with a detail naming the path, errno text and offset. */
int op_afile_write(op_afile *f, const void *p, size_t n);

/* fsync (when do_fsync), close, rename over the target, fsync the
 * directory. On failure the temporary file is removed. Frees f's strings. */
int op_afile_commit(op_afile *f, int do_fsync);

/* Closes and removes the temporary file; the target is untouched. */
void op_afile_abort(op_afile *f);

#endif

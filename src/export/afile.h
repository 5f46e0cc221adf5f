/* Atomic file replacement: write a temporary file in the target's directory,
 * fsync it, rename it over the target. A reader sees the old file or the new
 * one, never a part; a failure leaves the old file as it was and no
 * temporary file behind. */
#ifndef OPPROF_EXPORT_AFILE_H
#define OPPROF_EXPORT_AFILE_H

#include <stddef.h>
#include <stdint.h>

typedef struct op_afile {
    int fd;
    char *path; /* the target */
    char *tmp;  /* the temporary file, NULL once renamed or removed */
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

/* Writes all of p[0..n), retrying short writes; a failure (ENOSPC, EFBIG,
 * EIO) is returned with a detail naming the path, errno text and offset. */
int op_afile_write(op_afile *f, const void *p, size_t n);

/* fsync (when do_fsync), close, rename over the target, fsync the
 * directory. On failure the temporary file is removed. Frees f's strings. */
int op_afile_commit(op_afile *f, int do_fsync);

/* Closes and removes the temporary file; the target is untouched. */
void op_afile_abort(op_afile *f);

#endif

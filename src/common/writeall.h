/* Writes that finish: a signal handled without SA_RESTART interrupts a
 * blocked write(2) with EINTR, which a profiler running inside someone
 * else's program must expect (a timer, a job control signal). */
#ifndef OPPROF_COMMON_WRITEALL_H
#define OPPROF_COMMON_WRITEALL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Writes n bytes to fd, retrying on EINTR and short writes. 0, or -1 with
 * errno set; *done (when not NULL) receives the bytes written either way. */
int op_write_all_fd(int fd, const void *p, size_t n, size_t *done);

/* The same at offset off (>= 0) of the file, the descriptor's position
 * left as it was (pwrite). 0, or -1 with errno set. */
int op_pwrite_all_fd(int fd, const void *p, size_t n, int64_t off);

/* n bytes to a stream. A stream on a descriptor is flushed, then written
 * past stdio, whose buffer would drop what an interrupted flush did not
 * write; other streams (memory, cookies) take fwrite. 0, or -1 with errno. */
int op_write_all_stream(FILE *f, const void *p, size_t n);

#endif

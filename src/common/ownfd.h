/* A descriptor opprof opened, kept with the identity of what it opened.
 *
 * opprof lives inside someone else's process, and programs close every
 * descriptor above 2 at start (closefrom(3), close_range, a loop to 1024),
 * then open their own files, which take the same numbers. So opprof never
 * writes to, reads from or closes one of its descriptors without first
 * checking that the number still names what opprof opened: the device and
 * inode it had. For a file that is still linked no other file can have
 * them; pipes and sockets get inode numbers from a 32-bit counter of the
 * kernel, so a stranger's could only match after four billion more were
 * made. (The check and the call after it are two steps: a program that
 * closes and reopens in between, in nanoseconds, is not caught.) */
#ifndef OPPROF_COMMON_OWNFD_H
#define OPPROF_COMMON_OWNFD_H

#include <stdint.h>

typedef struct op_ownfd {
    int fd; /* -1: none */
    uint64_t dev, ino;
} op_ownfd;

#define OP_OWNFD_NONE {-1, 0, 0}

/* Keeps fd and the identity of what it names: 0, or -1 (errno) when fd is
 * not open; o is then none. */
int op_ownfd_set(op_ownfd *o, int fd);

/* 1 when o's number still names what it was set to. */
int op_ownfd_ours(const op_ownfd *o);

/* Closes o's descriptor when it is still ours; a number that is the
 * program's now is left alone. o is none after. */
void op_ownfd_close(op_ownfd *o);

#endif

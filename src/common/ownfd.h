/* A descriptor opprof opened, kept with the identity of what it opened.
 *
 * opprof lives inside someone else's process, and programs close every
 * descriptor above 2 at start (closefrom(3), close_range, a loop to 1024),
 * then open their own files, which take the same numbers. So opprof never
 * writes to, reads from or closes one of its descriptors without first
 * checking that the number still names what opprof opened: the same
 * device and inode, file type, birth time (where the file system keeps
 * one) and, for a file without a name (O_TMPFILE), still none. A file
 * that is still linked keeps its inode number to itself; a nameless file's
 * number is free for reuse the moment it is closed, but the file that
 * reuses it has a name; pipes and sockets get inode numbers from a 32-bit
 * counter of the kernel, so a stranger's could only match after four
 * billion more were made. (The check and the call after it are two steps:
 * a program that closes and reopens in between, in nanoseconds, is not
 * caught.) */
#ifndef OPPROF_COMMON_OWNFD_H
#define OPPROF_COMMON_OWNFD_H

#include <stdint.h>

typedef struct op_ownfd {
    int fd; /* -1: none */
    uint32_t kind; /* S_IFMT bits, and OP_OWNFD_NAMELESS */
    uint64_t dev, ino;
    int64_t btime_ns; /* 0: not known */
} op_ownfd;

#define OP_OWNFD_NAMELESS 1u /* no link: no S_IF* value has bit 0 */
#define OP_OWNFD_NONE {-1, 0, 0, 0, 0}

/* Keeps fd and the identity of what it names: 0, or -1 (errno) when fd is
 * not open; o is then none. */
int op_ownfd_set(op_ownfd *o, int fd);

/* 1 when a and b name the same file (their numbers aside). */
int op_ownfd_same(const op_ownfd *a, const op_ownfd *b);

/* 1 when o's number still names what it was set to. */
int op_ownfd_ours(const op_ownfd *o);

/* Closes o's descriptor when it is still ours; a number that is the
 * program's now is left alone. o is none after. */
void op_ownfd_close(op_ownfd *o);

#endif

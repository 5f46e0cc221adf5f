/* Where the on-demand sockets live and how a request or a reply crosses
 * them: shared by the listener (listener.c), its services (ondemand.c,
 * flight.c) and the trigger (trigger.c). */
#ifndef OPPROF_LIVE_ODSOCK_H
#define OPPROF_LIVE_ODSOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The folder of uid's sockets, candidate k (0, 1, ...): $XDG_RUNTIME_DIR/opprof
 * (for the caller's own uid), /run/user/UID/opprof, /tmp/opprof-UID. Returns
 * 0, or -1 past the last candidate. */
int op_od_dir_candidate(uid_t uid, int k, char *buf, size_t cap);

/* The listener's folder: the first candidate whose parent exists, made with
 * mode 0700 when missing, and refused (-1, with the detail set) when it is
 * not a folder of ours that only we may enter. */
int op_od_dir_make(char *buf, size_t cap);

/* dir/PID.sock; -1 when it does not fit a socket address. */
int op_od_sock_path(const char *dir, int64_t pid, char *buf, size_t cap);

/* Writes all of buf; 0 or -1. */
int op_od_write_all(int fd, const char *buf, size_t n);

/* Reads until EOF or max bytes into a NUL-terminated malloc'd buffer; waits
 * at most timeout_ms for each piece (-1: forever). 0 or -1. */
int op_od_read_all(int fd, size_t max, int timeout_ms, char **out, size_t *len);

/* op_od_read_all waiting first_ms for the first piece and rest_ms for each
 * after it: 0, -2 when nothing came within first_ms, else -1. */
int op_od_read_reply(int fd, size_t max, int first_ms, int rest_ms, char **out, size_t *len);

/* The value of "key=" on its own line of a request, copied into buf; 0 when
 * absent. */
int op_od_get(const char *req, const char *key, char *buf, size_t cap);

/* A requested path with its first "{n}" replaced by the trigger's number. */
void op_od_expand(const char *in, unsigned long n, char *out, size_t cap);

#endif

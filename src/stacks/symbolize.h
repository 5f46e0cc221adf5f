/* Code addresses of this process to names, with libdw (elfutils): the
 * function, and the file and line where debug information exists. One
 * process-wide session of libdw behind a lock; modules loaded after its
 * start (dlopen) are picked up when an address falls outside every known
 * one. Never on a recording path. */
#ifndef OPPROF_STACKS_SYMBOLIZE_H
#define OPPROF_STACKS_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

/* Receives one frame text; a nonzero return stops the walk. */
typedef int (*op_frame_fn)(void *ctx, const char *frame, size_t len);

/* Emits the frames of the return address ip, innermost first, in PyTorch's
 * "FILE(LINE): FUNC" form: one per function inlined at the call, then the
 * function the code belongs to. Without line information a frame is
 * "MODULE: FUNC", without a symbol "MODULE(+0xOFFSET): ??". Returns the
 * number of frames emitted (at least one), or -1 when emit stopped the walk. */
int op_symbolize_frames(uint64_t ip, op_frame_fn emit, void *ctx);

typedef struct op_function_info {
    char name[512]; /* the symbol ("" when unknown) */
    char file[1024]; /* its source file ("" without debug information) */
    int line;
    char module[1024]; /* the object file it lives in */
    uint64_t offset;  /* from the module's load address */
} op_function_info;

/* Describes the function whose entry is fn (what -finstrument-functions
 * passes). 0, or -1 when no loaded module holds fn (info then holds only the
 * address's text in module). */
int op_symbolize_function(const void *fn, op_function_info *info);

#endif

/* The seam between the two libraries. libopprof (the recording client) is
 * built with hidden visibility, as libopprof_trace (the analysis library) is;
 * the few internal functions of the client that the analysis library calls
 * are marked OP_SEAM, so that libopprof.so exports them beside the public
 * API. They are not API: their names start with op_, no public header
 * declares them, and they change with the library. Nothing in the client
 * calls the analysis library: what the client needs of it at run time is
 * lent through function pointers (session/handle.h). */
#ifndef OPPROF_COMMON_SEAM_H
#define OPPROF_COMMON_SEAM_H

#if defined(__GNUC__)
#define OP_SEAM __attribute__((visibility("default")))
#else
#define OP_SEAM
#endif

#endif

/* Large anonymous memory written once in order: 2 MiB-aligned mappings
 * with transparent huge pages advised, and pages written one byte each so
 * that their faults are taken where the caller chooses. On this project's
 * VMs (Firecracker, free page reporting) MAP_POPULATE maps pages the guest
 * believes zero without writing them, and the first store still pays the
 * host's fault, 15-40 us per 4 KiB page; only a write takes it. Used by the
 * chunk pool, the event store and the model's event arrays. */
#ifndef OPPROF_COMMON_PAGES_H
#define OPPROF_COMMON_PAGES_H

#include <stdatomic.h>
#include <stddef.h>

#define OP_HUGE_BYTES ((size_t)2 << 20)

/* A 2 MiB-aligned private anonymous mapping of bytes (a multiple of
 * OP_HUGE_BYTES) with huge pages advised; NULL when none can be mapped.
 * Its pages are not written: see op_write_pages. */
void *op_map_huge(size_t bytes);

/* Writes one byte (a zero) of each page of [p, p + bytes), from the first,
 * and stops early once *stop (when not NULL) reads non-zero; returns the
 * bytes from p whose pages it wrote. */
size_t op_write_pages(void *p, size_t bytes, _Atomic int *stop);

/* Asks for transparent huge pages on the 2 MiB-aligned interior of a large
 * block about to be written once in order (the event array, the merge's
 * copy of it): where a fresh 4 KiB page costs a fault of 15-40 us (a VM's
 * host), that fault was most of the model's build. No-op for small blocks
 * and where the kernel offers no huge pages. */
void op_advise_huge(void *p, size_t bytes);

#endif

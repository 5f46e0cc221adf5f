/* CUPTI activity records into op_dev_act (activity.h). A pure function of
 * the record, so tests feed it records they build themselves. Compiled
 * where the CUPTI headers are (OPPROF_HAVE_CUPTI). */
#ifndef OPPROF_DEVICE_CUPTI_DECODE_H
#define OPPROF_DEVICE_CUPTI_DECODE_H

#include <cupti.h>

#include "device/activity.h"

/* Names API calls: CUPTI's callback name without its "_v3020"-style
 * version suffix, valid for the process's life. */
typedef const char *(*op_cupti_api_name_fn)(CUpti_CallbackDomain domain, uint32_t cbid, void *ctx);

/* Gives a kernel's CUPTI name a name that outlives CUPTI's (demangled). */
typedef const char *(*op_cupti_kernel_name_fn)(const char *raw, void *ctx);

typedef struct op_cupti_decoder {
    op_cupti_api_name_fn api_name;       /* NULL: API calls are skipped */
    op_cupti_kernel_name_fn kernel_name; /* NULL: CUPTI's pointer is kept */
    void *ctx;
} op_cupti_decoder;

/* Adds what rec says to b: an activity, an external correlation (kind
 * CUSTOM0, ours), or nothing for kinds we do not use. Device records
 * without timestamps (CUPTI could not take them) count as dropped.
 * -1 when out of memory. */
int op_cupti_decode(const op_cupti_decoder *d, const CUpti_Activity *rec, op_dev_batch *b);

/* Strips a trailing "_v<digits>" (CUPTI's API versions) into buf. */
const char *op_cupti_strip_version(const char *name, char *buf, size_t n);

#endif

/* The field numbers of Perfetto's trace schema that opprof writes and reads
 * (Perfetto's protos/perfetto/trace/perfetto_trace.proto, package
 * perfetto.protos; tests/test_export_pftrace.c decodes opprof's files with
 * it), and the conventions of opprof's .pftrace files. */
#ifndef OPPROF_COMMON_PFSCHEMA_H
#define OPPROF_COMMON_PFSCHEMA_H

/* Protocol buffers' wire types. */
enum { OP_PB_VARINT = 0, OP_PB_I64 = 1, OP_PB_LEN = 2, OP_PB_I32 = 5 };

enum {
    PF_TRACE_PACKET = 1, /* Trace.packet */

    /* TracePacket */
    PF_PKT_CLOCK_SNAPSHOT = 6,
    PF_PKT_TIMESTAMP = 8,
    PF_PKT_SEQUENCE_ID = 10, /* trusted_packet_sequence_id */
    PF_PKT_TRACK_EVENT = 11,
    PF_PKT_INTERNED_DATA = 12,
    PF_PKT_SEQUENCE_FLAGS = 13,
    PF_PKT_INCREMENTAL_CLEARED = 41, /* deprecated bool, read only */
    PF_PKT_COMPRESSED = 50,          /* compressed_packets: a zlib stream of Trace.packet fields */
    PF_PKT_ZSTD_COMPRESSED = 133,    /* zstd_compressed_packets: the same as one zstd frame */
    PF_PKT_CLOCK_ID = 58,            /* timestamp_clock_id */
    PF_PKT_DEFAULTS = 59,            /* trace_packet_defaults */
    PF_PKT_TRACK_DESCRIPTOR = 60,
    PF_PKT_PERF_SAMPLE = 66,

    /* PerfSample; its callstack is interned on the sequence */
    PF_PS_PID = 2,
    PF_PS_TID = 3,
    PF_PS_CALLSTACK_IID = 4,
    PF_PS_CPU_MODE = 5,
    PF_PS_TIMEBASE_COUNT = 6,
    PF_CPU_MODE_USER = 2,

    PF_SEQ_INCREMENTAL_STATE_CLEARED = 1,
    PF_SEQ_NEEDS_INCREMENTAL_STATE = 2,

    /* ClockSnapshot / ClockSnapshot.Clock */
    PF_CS_CLOCKS = 1,
    PF_CLK_ID = 1,
    PF_CLK_TIMESTAMP = 2,
    PF_CLK_INCREMENTAL = 3,
    PF_CLK_UNIT_NS = 4,
    PF_CLOCK_REALTIME = 1,
    PF_CLOCK_BOOTTIME = 6,
    PF_CLOCK_SEQ_FIRST = 64, /* sequence-scoped clocks: 64..127 */

    /* TracePacketDefaults / TrackEventDefaults */
    PF_DEF_CLOCK_ID = 58,
    PF_DEF_TRACK_EVENT = 11,
    PF_TED_TRACK_UUID = 11,

    /* TrackEvent */
    PF_TE_CATEGORY_IIDS = 3,
    PF_TE_DEBUG_ANNOTATIONS = 4,
    PF_TE_TYPE = 9,
    PF_TE_NAME_IID = 10,
    PF_TE_TRACK_UUID = 11,
    PF_TE_CATEGORIES = 22,
    PF_TE_NAME = 23,
    PF_TE_COUNTER_VALUE = 30,
    PF_TE_FLOW_IDS = 47,
    PF_TE_TERMINATING_FLOW_IDS = 48,
    PF_TYPE_SLICE_BEGIN = 1,
    PF_TYPE_SLICE_END = 2,
    PF_TYPE_INSTANT = 3,
    PF_TYPE_COUNTER = 4,

    /* DebugAnnotation */
    PF_DA_NAME_IID = 1,
    PF_DA_BOOL = 2,
    PF_DA_UINT = 3,
    PF_DA_INT = 4,
    PF_DA_STRING = 6,
    PF_DA_NAME = 10,
    PF_DA_STRING_IID = 17,

    /* InternedData; EventName, EventCategory, DebugAnnotationName and
     * InternedString all have iid = 1 and name/str = 2. */
    PF_ID_CATEGORIES = 1,
    PF_ID_EVENT_NAMES = 2,
    PF_ID_ANNOTATION_NAMES = 3,
    PF_ID_STRING_VALUES = 29,
    PF_IN_IID = 1,
    PF_IN_NAME = 2,

    /* InternedData of callstacks: function names and mapping paths are
     * InternedStrings (iid 1, str 2); Frame, Mapping and Callstack have iid 1. */
    PF_ID_FUNCTION_NAMES = 5,
    PF_ID_FRAMES = 6,
    PF_ID_CALLSTACKS = 7,
    PF_ID_SOURCE_PATHS = 18,
    PF_ID_MAPPING_PATHS = 17,
    PF_ID_MAPPINGS = 19,
    PF_FR_FUNCTION_NAME_ID = 2,
    PF_FR_MAPPING_ID = 3,
    PF_FR_REL_PC = 4,
    PF_FR_SOURCE_PATH_IID = 5,
    PF_FR_LINE_NUMBER = 6,
    PF_MAP_PATH_STRING_IDS = 7,
    PF_CALLSTACK_FRAME_IDS = 2, /* outermost frame first */

    /* TrackDescriptor, ProcessDescriptor, ThreadDescriptor, CounterDescriptor */
    PF_TD_UUID = 1,
    PF_TD_NAME = 2,
    PF_TD_PROCESS = 3,
    PF_TD_THREAD = 4,
    PF_TD_PARENT_UUID = 5,
    PF_TD_COUNTER = 8,
    PF_PD_PID = 1,
    PF_PD_NAME = 6,
    PF_THD_PID = 1,
    PF_THD_TID = 2,
    PF_THD_NAME = 5,
    PF_CD_UNIT = 3,
    PF_UNIT_SIZE_BYTES = 3
};

/* opprof's conventions: debug annotations (named as in the Chrome trace's
 * args) and the track of the session's metadata. */
enum {
    PF_ANN_SHAPES,   /* "Input Dims": string */
    PF_ANN_TYPES,    /* "Input type": string */
    PF_ANN_STACK,    /* "Call stack": string, frames joined by ';' innermost first */
    PF_ANN_FLOPS,    /* "flops": uint */
    PF_ANN_EXT,      /* "External id": int */
    PF_ANN_CORR,     /* "correlation": int */
    PF_ANN_ARGS,     /* "args": the other args as JSON members */
    PF_ANN_BYTES,    /* "Bytes": int ([memory] instants) */
    PF_ANN_ADDR,     /* "Addr": uint */
    PF_ANN_TOTAL,    /* "Total Allocated": int */
    PF_ANN_DEV_TYPE, /* "Device Type": int */
    PF_ANN_DEV_ID,   /* "Device Id": int */
    PF_ANN_COUNT_
};

/* The metadata instant ("opprof" on the track of that name) carries
 * droppedEvents, incomplete, and distributedInfo's members as annotations. */
#define PF_META_TRACK_NAME "opprof"



/* The annotations' names, by PF_ANN_*. */
extern const char *const op_pf_ann_names[PF_ANN_COUNT_];

/* 1 when path names Perfetto's format: it ends in ".pftrace" or
 * ".pftrace.gz" (the name picks the format, as it picks compression). */
int op_pf_path(const char *path);
#endif

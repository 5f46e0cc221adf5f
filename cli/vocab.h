/* The options every command that prints key averages shares: one name, one
 * meaning and one default for each, PyTorch's name where PyTorch has one
 * (key_averages().table(sort_by=..., row_limit=...), group_by_input_shape,
 * group_by_stack_n, with_stack, export_stacks). A command's table lists
 * them with CLI_ROW_* and its own example text (run's --help gives one per
 * option; the others pass ""). The old spellings stay as hidden rows. */
#ifndef OPPROF_CLI_VOCAB_H
#define OPPROF_CLI_VOCAB_H

#include <limits.h>

#include "opts.h"

/* The defaults of run, summary, diff, exec and the environment's table: the
 * PyTorch profiler guide's table(sort_by="cpu_time_total", row_limit=10). */
#define CLI_DEFAULT_SORT "cpu_time_total"
#define CLI_DEFAULT_ROW_LIMIT 10
#define CLI_DEFAULT_ROW_LIMIT_TEXT "10"

/* The keys of opprof_key_averages_sort (tests check the two agree). */
#define CLI_SORT_KEYS                                                                                         \
    "cpu_time_total|self_cpu_time_total|cpu_time|count|flops|cpu_memory_usage|self_cpu_memory_usage|"         \
    "cuda_time_total|self_cuda_time_total|cuda_time|device_time_total|self_device_time_total|device_time|"       \
    "oncpu_time_total|self_oncpu_time_total|wait_time_total"

#define CLI_SORT_HELP                                                                                         \
    "row order, largest first (default " CLI_DEFAULT_SORT "): cpu_time_total," CLI_CONT                        \
    "self_cpu_time_total, cpu_time (average), count, flops, cpu_memory_usage," CLI_CONT                       \
    "self_cpu_memory_usage, cuda_time_total, self_cuda_time_total, cuda_time," CLI_CONT                       \
    "device_time_total, self_device_time_total, device_time (cuda_* = device_*)," CLI_CONT                 \
    "oncpu_time_total, self_oncpu_time_total, wait_time_total (with sampling)"

#define CLI_ROW_SORT(field, eg)                                                                               \
    {"--sort", "KEY", CLI_OPT_STRING, field, 0, 0, CLI_SORT_KEYS, CLI_SORT_HELP eg}

#define CLI_ROW_ROW_LIMIT(field, eg)                                                                          \
    {"--row-limit", "N", CLI_OPT_LONG, field, -1, INT_MAX, NULL,                                              \
     "table rows printed; -1: all (default " CLI_DEFAULT_ROW_LIMIT_TEXT "; csv and json give every row)" eg}

#define CLI_ROW_FORMAT(field, eg)                                                                             \
    {"--format", "FMT", CLI_OPT_STRING, field, 0, 0, "table|csv|json",                                        \
     "table (PyTorch's key_averages().table(); default), csv or json" CLI_CONT                                \
     "(csv and json: every row, in the --sort order)" eg}

#define CLI_ROW_GROUP_BY_INPUT_SHAPE(field, help, eg)                                                        \
    {"--group-by-input-shape", NULL, CLI_OPT_FLAG, field, 0, 0, NULL, help eg}

/* more: what it means for the command ("; implies --with-stack" where it records). */
#define CLI_ROW_GROUP_BY_STACK(field, more, eg)                                                               \
    {"--group-by-stack", "N", CLI_OPT_LONG, field, 0, 128, NULL,                                              \
     "one row per (name, top N frames), with a Source Location column" more eg}

/* The text of --group-by-stack and --stacks for the commands that read
 * traces: the stacks are the trace's "Call stack" args. */
#define CLI_GROUP_BY_STACK_READ ";" CLI_CONT "the frames of the trace's \"Call stack\" (recorded with --with-stack)"
#define CLI_STACKS_READ                                                                                       \
    "folded stacks for flame graphs (flamegraph.pl, speedscope): the trace's" CLI_CONT                        \
    "call stacks, or its operator call tree when it has none"

#define CLI_ROW_WITH_STACK(field, help, eg) {"--with-stack", NULL, CLI_OPT_FLAG, field, 0, 0, NULL, help eg}

#define CLI_ROW_STACKS(field, help, eg) {"--stacks", "FILE", CLI_OPT_STRING, field, 0, 0, NULL, help eg}

#define CLI_ROW_STACKS_METRIC(field, eg)                                                                      \
    {"--stacks-metric", "METRIC", CLI_OPT_STRING, field, 0, 0,                                                \
     "self_cpu_time_total|self_cuda_time_total|self_device_time_total",                                       \
     "the value of --stacks' lines: self_cpu_time_total (default)," CLI_CONT                                   \
     "self_cuda_time_total or self_device_time_total (device time)" eg}

#define CLI_ROW_TOP_LEVEL(field)                                                                              \
    {"--top-level", NULL, CLI_OPT_FLAG, field, 0, 0, NULL, "only events that no other event encloses"}

/* --max-events of the commands that read traces: a bound on what is read. */
#define CLI_ROW_MAX_EVENTS_READ(field)                                                                        \
    {"--max-events", "N", CLI_OPT_LONG, field, 1, LONG_MAX, NULL,                                              \
     "refuse a trace with more than N events (exit 2), stopping as soon as it has read N + 1"}

/* --max-events of the commands that record: the session's event cap; more
 * says where the command's cap does not apply. */
#define CLI_ROW_MAX_EVENTS_RECORD(field, more, eg)                                                           \
    {"--max-events", "N", CLI_OPT_LONG, field, 1, LONG_MAX, NULL,                                              \
     "cap on recorded events (default 16777216); past it events are dropped, the" CLI_CONT                     \
     "ranges still open end at that time, and a note on stderr says so" more eg}

/* Before one vocabulary: run's --stack and --stacks-out, exec's --sort-by. */
#define CLI_ROW_OLD_WITH_STACK(field) {"--stack", NULL, CLI_OPT_FLAG, field, 0, 0, NULL, NULL}
#define CLI_ROW_OLD_STACKS(field) {"--stacks-out", "FILE", CLI_OPT_STRING, field, 0, 0, NULL, NULL}
#define CLI_ROW_OLD_SORT(field) {"--sort-by", "KEY", CLI_OPT_STRING, field, 0, 0, CLI_SORT_KEYS, NULL}

#endif

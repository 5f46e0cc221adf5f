/* The HTML report's internals: the pieces of data each view needs,
 * computed from the event model, written through rep_out.h's writers. */
#ifndef OPPROF_REPORT_REP_H
#define OPPROF_REPORT_REP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "common/error.h"
#include "model/model.h"
#include "report/rep_out.h"

/* ---- strings: the trace's strtab ids the page needs, renumbered ------ */

typedef struct rep_strs {
    uint32_t *map;   /* strtab id -> page id, UINT32_MAX unused */
    uint32_t *ids;   /* page id -> strtab id */
    uint32_t n;
} rep_strs;

/* ---- per-trace derived data ------------------------------------------ */

/* Short events merged into one slice of the page (rep_layout.c): a run of
 * neighbours on one level, all below the same kept event, and what they
 * contain. */
typedef struct rep_block {
    int64_t start, end;
    int64_t busy, mem, dev; /* sums over the members at the block's row: duration, memory, device time */
    uint64_t flops;
    uint32_t count;   /* members, at every row */
    uint32_t first;   /* the first member (model index) */
    uint32_t longest; /* the longest member: the block's name and category */
} rep_block;

/* A page of at most this many slices draws its first view in well under
 * 3 s; a bigger trace is merged down to it. */
#define REP_PAGE_SLICES 1000000

typedef struct rep_trace {
    const opprof_trace *t;
    rep_strs strs;
    int32_t *launch_op; /* device event -> the host operator that launched it, -1 none; NULL without devices */
    uint32_t *order;    /* page position -> item: a model index, or nev + a block index; by (thread, row, start) */
    uint32_t *pos;      /* model index -> page position (a merged event's: its block's) */
    size_t npage;       /* the page's slices */
    rep_block *blocks;
    size_t nblocks, blocks_cap;
    size_t merged;      /* events merged into blocks */
    int64_t lod_min_ns; /* events shorter than this are merged; 0: none */
    int64_t lod_gap_ns; /* the largest gap a block bridges */
    uint32_t *levels;   /* (thread, row, count) triples in page order */
    size_t nlevels;
    op_buf ev;          /* event columns */
    rep_col ev_cols[24];
    size_t ev_ncols;
    op_buf mem;         /* memory event columns */
    rep_col mem_cols[4];
    size_t mem_ncols;
} rep_trace;

int rep_strings_build(rep_trace *r);
void rep_strings_json(rep_out *o, const rep_trace *r);
static inline uint32_t rep_sid(const rep_trace *r, uint32_t strtab_id)
{
    return strtab_id < r->t->str.count && r->strs.map[strtab_id] != UINT32_MAX ? r->strs.map[strtab_id] : 0;
}

/* Rows, levels and the level of detail: at most budget page slices (0: no
 * limit). */
int rep_layout_build(rep_trace *r, size_t budget);
/* How the page was merged down, when it was. */
void rep_lod_json(rep_out *o, const rep_trace *r);
int rep_launches_build(rep_trace *r);
int rep_events_build(rep_trace *r);
int rep_memory_build(rep_trace *r);

/* JSON members of the trace's meta object, each preceded by a comma. */
void rep_threads_json(rep_out *o, const rep_trace *r);
void rep_levels_json(rep_out *o, const rep_trace *r);
void rep_stacks_json(rep_out *o, const rep_trace *r);
void rep_steps_json(rep_out *o, const rep_trace *r);
void rep_memory_json(rep_out *o, const rep_trace *r);
int rep_ops_json(rep_out *o, const rep_trace *r);
int rep_devices_json(rep_out *o, const rep_trace *r);

void rep_trace_free(rep_trace *r);

/* opprof_report_write with a page of at most budget slices (tests). */
int rep_report_write(const opprof_trace *a, const opprof_trace *b, const opprof_report_options *opt,
                     const char *path, size_t budget);

/* The page, embedded at build time (cmake/embed_report.cmake). */
extern const unsigned char op_report_html[], op_report_css[], op_report_js[];
extern const size_t op_report_html_len, op_report_css_len, op_report_js_len;
extern const char op_report_js_sha256[];

#endif

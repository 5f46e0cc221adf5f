/* Captured stacks into the model (see stacks.h). Work is per distinct
 * thing: a stack entry is decoded once, a code address symbolized once, and
 * a frame sequence stored once for the whole trace. */
#include "model/stacks.h"

#include <stdlib.h>
#include <string.h>

#include "capture/stacktab.h"
#include "common/vec.h"
#include "stacks/symbolize.h"

#define OWN_PREFIX "opprof_"
#define HOOK_NAME "__cyg_profile_func_enter"

typedef struct emit_ctx {
    op_stack_map *m;
    opprof_trace *tr;
    int failed;
} emit_ctx;

static int add_frame(void *arg, const char *frame, size_t len)
{
    emit_ctx *c = arg;
    op_stack_map *m = c->m;
    uint32_t id = op_trace_intern(c->tr, frame, len);
    if (id == UINT32_MAX || op_grow(&m->pool, &m->cap_pool, m->npool + 1, sizeof *m->pool)) {
        c->failed = 1;
        return 1;
    }
    m->pool[m->npool++] = id;
    return 0;
}

/* The frames of code address ip: k with pool[ipf[k].off] .. + ipf[k].cnt. */
static int ip_frames(op_stack_map *m, opprof_trace *tr, uint64_t ip, uint32_t *k_out)
{
    if (op_map_get_u32(&m->ips, ip, k_out)) return 0;
    if (op_grow(&m->ipf, &m->cap_ips, m->nips + 1, sizeof *m->ipf)) return -1;
    emit_ctx c = {m, tr, 0};
    size_t first = m->npool;
    op_symbolize_frames(ip, add_frame, &c);
    if (c.failed) return -1;
    uint32_t k = (uint32_t)m->nips++;
    m->ipf[k].off = (uint32_t)first;
    m->ipf[k].cnt = (uint32_t)(m->npool - first);
    if (op_map_put(&m->ips, ip, k)) return -1;
    *k_out = k;
    return 0;
}

/* How many frames at the innermost end of a stack are the profiler's: its
 * public API (an inline wrapper the compiler kept out of line), or the
 * -finstrument-functions hook and the prologue of the function that called
 * it (that function is the operator itself; its stack starts at its call). */
static size_t own_frames(const opprof_trace *tr, const uint32_t *ids, size_t n)
{
    size_t k = 0;
    while (k < n) {
        const char *s = op_strtab_get(&tr->str, ids[k]);
        const char *fn = strrchr(s, ' ');
        fn = fn ? fn + 1 : s;
        if (strcmp(fn, HOOK_NAME) == 0) return k + 2 < n ? k + 2 : n;
        if (strncmp(fn, OWN_PREFIX, sizeof OWN_PREFIX - 1) != 0) break;
        k++;
    }
    return k;
}

static uint32_t new_stack(op_stack_map *m, opprof_trace *tr, const uint64_t *ips, uint32_t n)
{
    uint32_t *ids = NULL;
    size_t nids = 0, cap = 0;
    uint32_t result = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k;
        if (ip_frames(m, tr, ips[i], &k) != 0) goto out;
        if (op_grow(&ids, &cap, nids + m->ipf[k].cnt, sizeof *ids)) goto out;
        memcpy(ids + nids, m->pool + m->ipf[k].off, m->ipf[k].cnt * sizeof *ids);
        nids += m->ipf[k].cnt;
    }
    size_t skip = own_frames(tr, ids, nids);
    if (skip == nids) {
        result = 0;
        goto out;
    }
    uint32_t seq = op_strtab_intern(&m->seqs, (const char *)(ids + skip), (nids - skip) * sizeof *ids);
    if (seq == UINT32_MAX) goto out;
    if (seq >= m->cap_seq) {
        size_t old = m->cap_seq;
        if (op_grow(&m->seq_stack, &m->cap_seq, (size_t)seq + 1, sizeof *m->seq_stack)) goto out;
        memset(m->seq_stack + old, 0, (m->cap_seq - old) * sizeof *m->seq_stack);
    }
    if (!m->seq_stack[seq]) {
        uint32_t s = op_trace_add_stack(tr, ids + skip, (uint32_t)(nids - skip));
        if (!s) goto out;
        m->seq_stack[seq] = s;
    }
    result = m->seq_stack[seq];
out:
    free(ids);
    return result;
}

uint32_t op_stack_map_get(op_stack_map *m, opprof_trace *tr, uint64_t entry)
{
    if (!entry) return 0;
    uint32_t v;
    if (op_map_get_u32(&m->entries, entry, &v)) return v;
    if (!m->ready) {
        if (op_strtab_init(&m->seqs) != 0) return UINT32_MAX;
        m->ready = 1;
    }
    const uint64_t *e = (const uint64_t *)(uintptr_t)entry;
    uint32_t s = new_stack(m, tr, OP_STACK_FRAMES(e), OP_STACK_NFRAMES(e));
    if (s == UINT32_MAX || op_map_put(&m->entries, entry, s)) return UINT32_MAX;
    return s;
}

void op_stack_map_free(op_stack_map *m)
{
    op_map_free(&m->entries);
    op_map_free(&m->ips);
    free(m->ipf);
    free(m->pool);
    if (m->ready) op_strtab_free(&m->seqs);
    free(m->seq_stack);
    memset(m, 0, sizeof *m);
}

/* Memory events: allocations and frees reported by allocators, written into
 * the reporting thread's buffer in time order with its ranges, so that the
 * model can attribute each to the operator open on that thread. */
#include <inttypes.h>

#include "capture/agg.h"
#include "capture/memtrack.h"
#include "capture/reserve.h"
#include "capture/state.h"
#include "capture/thread.h"
#include "common/error.h"

/* Writes one memory record; the caller checked that memory is profiled. */
static void write_mem(op_tstate *t, const void *addr, int64_t bytes)
{
    if (t->opts & OP_OPT_AGG) {
        op_agg_memory(t, bytes, op_now(t));
        return;
    }
    if (op_thread_reserve(t, OP_REC_MEM_WORDS) != 0) return;
    op_word *c = atomic_load_explicit(&t->cur, memory_order_relaxed);
    c[0] = OP_REC_MEM;
    c[2] = (uint64_t)(uintptr_t)addr;
    c[3] = (uint64_t)bytes;
    t->budget--;
    c[1] = op_now(t);
    op_publish(t, c + OP_REC_MEM_WORDS);
}

/* The recording thread's state when this session profiles memory, else NULL. */
static inline op_tstate *mem_state(void)
{
    uint64_t g = op_gen_load();
    if (OP_LIKELY(g == 0)) return NULL;
    op_tstate *t = op_state_for(g);
    return t && (t->opts & OP_OPT_MEMORY) ? t : NULL;
}

void opprof_record_memory(const void *addr, int64_t bytes)
{
    op_tstate *t = mem_state();
    if (!t) return;
    /* A free of INT64_MIN bytes has no allocation that matches it (the
     * largest is INT64_MAX): refused, not recorded as nonsense. */
    if (OP_UNLIKELY(bytes == INT64_MIN)) {
        op_fail(OPPROF_E_RANGE, "opprof_record_memory: %" PRId64 " bytes is out of range; not recorded", bytes);
        return;
    }
    write_mem(t, addr, bytes);
}

void opprof_record_alloc(const void *addr, uint64_t bytes)
{
    op_tstate *t = mem_state();
    if (!t || !addr) return;
    if (OP_UNLIKELY(bytes > (uint64_t)INT64_MAX)) {
        op_fail(OPPROF_E_RANGE, "opprof_record_alloc: %" PRIu64 " bytes is out of range; not recorded", bytes);
        return;
    }
    if (op_memtrack_insert((uint64_t)(uintptr_t)addr, bytes) != 0) return;
    write_mem(t, addr, (int64_t)bytes);
}

void opprof_record_free(const void *addr)
{
    op_tstate *t = mem_state();
    if (!t || !addr) return;
    int64_t size = op_memtrack_remove((uint64_t)(uintptr_t)addr);
    if (size >= 0) write_mem(t, addr, -size);
}

void opprof_record_realloc(const void *old_addr, const void *new_addr, uint64_t new_bytes)
{
    op_tstate *t = mem_state();
    if (!t) return;
    if (OP_UNLIKELY(new_addr && new_bytes > (uint64_t)INT64_MAX)) {
        op_fail(OPPROF_E_RANGE, "opprof_record_realloc: %" PRIu64 " bytes is out of range; not recorded", new_bytes);
        return;
    }
    op_memtrack_count_realloc();
    /* A block that moves exists twice while it is copied: count the new one
     * before freeing the old, so that the peak shows it. In place, the old
     * entry must go first or the new size would be forgotten with it. */
    int moved = old_addr != new_addr;
    if (new_addr && moved && op_memtrack_insert((uint64_t)(uintptr_t)new_addr, new_bytes) == 0)
        write_mem(t, new_addr, (int64_t)new_bytes);
    if (old_addr) {
        int64_t size = op_memtrack_remove((uint64_t)(uintptr_t)old_addr);
        if (size >= 0) write_mem(t, old_addr, -size);
    }
    if (new_addr && !moved && op_memtrack_insert((uint64_t)(uintptr_t)new_addr, new_bytes) == 0)
        write_mem(t, new_addr, (int64_t)new_bytes);
}

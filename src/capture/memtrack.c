#include "capture/memtrack.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#define NSHARDS 256
#define MIN_CAP 1024
#define RECENT 16

typedef struct slot {
    uint64_t key; /* address; 0: empty */
    uint64_t val; /* size */
} slot;

typedef struct shard {
    _Alignas(64) atomic_flag lock; /* a cache line per shard: no false sharing of locks */
    unsigned recent_pos;
    slot *slots;
    uint64_t cap, live;
    uint64_t recent[RECENT]; /* addresses freed last: a second free of one is a double free */
} shard;

static shard g_shards[NSHARDS];
static _Atomic uint64_t g_unknown, g_double, g_reallocs;

static inline uint64_t mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ull;
    x ^= x >> 27;
    x *= 0x81dadef4bc2dd44dull;
    x ^= x >> 33;
    return x;
}

/* Where an address lives. The 16 granules of 16 bytes in each 256-byte
 * line of address space map to a run of 16 consecutive slots, placed at a
 * random offset (and shard) per line. Blocks an allocator packs together sit
 * together in the table, so a program cycling through recently freed
 * addresses touches few table pages even with ten million live blocks; runs
 * are short enough that linear probing does not pile them into long
 * clusters. (Measured here: one random slot per block cost 2.7x more per
 * operation at 10M live blocks than on an empty table, whole 4 KiB pages per
 * run 4x from clustering, 256-byte lines 1.8x.) This placement, tables
 * from mmap (the tracker runs inside malloc) and a spin lock per shard are
 * why this is not the common op_map. */
static inline uint64_t line_hash(uint64_t addr)
{
    return mix(addr >> 8);
}

static inline uint64_t home_slot(uint64_t addr, uint64_t h, uint64_t cap)
{
    return ((h >> 8) + ((addr >> 4) & 15)) & (cap - 1);
}

static inline void lock(shard *s)
{
    while (atomic_flag_test_and_set_explicit(&s->lock, memory_order_acquire)) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}

static inline void unlock(shard *s)
{
    atomic_flag_clear_explicit(&s->lock, memory_order_release);
}

static void *map(uint64_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void unmap(shard *s)
{
    if (s->slots) munmap(s->slots, s->cap * sizeof(slot));
    s->slots = NULL;
    s->cap = s->live = 0;
    memset(s->recent, 0, sizeof s->recent);
}

/* Doubles the shard's table (or makes its first one). */
static int grow(shard *s)
{
    uint64_t cap = s->cap ? s->cap * 2 : MIN_CAP;
    slot *slots = map(cap * sizeof *slots);
    if (!slots) return -1;
    for (uint64_t i = 0; i < s->cap; i++) {
        const slot *o = &s->slots[i];
        if (!o->key) continue;
        uint64_t j = home_slot(o->key, line_hash(o->key), cap);
        while (slots[j].key) j = (j + 1) & (cap - 1);
        slots[j] = *o;
    }
    munmap(s->slots, s->cap * sizeof(slot));
    s->slots = slots;
    s->cap = cap;
    return 0;
}

/* Removes slot i without tombstones: later entries of the probe run move
 * back into the gap when their home allows it. No markers, so no periodic
 * compaction however many blocks come and go. */
static void delete_at(shard *s, uint64_t i)
{
    uint64_t mask = s->cap - 1;
    for (uint64_t j = (i + 1) & mask; s->slots[j].key; j = (j + 1) & mask) {
        uint64_t home = home_slot(s->slots[j].key, line_hash(s->slots[j].key), s->cap);
        /* j may move to i unless its home lies cyclically in (i, j] */
        int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (stays) continue;
        s->slots[i] = s->slots[j];
        i = j;
    }
    s->slots[i].key = 0;
    s->slots[i].val = 0;
}

void op_memtrack_reset(void)
{
    for (int i = 0; i < NSHARDS; i++) {
        lock(&g_shards[i]);
        unmap(&g_shards[i]);
        unlock(&g_shards[i]);
    }
    atomic_store(&g_unknown, 0);
    atomic_store(&g_double, 0);
    atomic_store(&g_reallocs, 0);
}

int op_memtrack_insert(uint64_t addr, uint64_t bytes)
{
    if (!addr) return 0;
    uint64_t h = line_hash(addr);
    shard *s = &g_shards[h & (NSHARDS - 1)];
    lock(s);
    /* At most half full: the runs make clusters, and at 10M live blocks a
     * table kept up to 3/4 full probed 14.7 slots per free (the cost per
     * alloc + free doubled over an empty table); up to 1/2, 2.8 slots. It
     * costs 32-64 bytes per live block instead of 21-43. */
    if ((s->live + 1) * 2 > s->cap && grow(s) != 0) {
        unlock(s);
        return -1;
    }
    for (unsigned k = 0; k < RECENT; k++)
        if (s->recent[k] == addr) s->recent[k] = 0; /* allocated again: its next free is legitimate */
    uint64_t mask = s->cap - 1;
    for (uint64_t i = home_slot(addr, h, s->cap);; i = (i + 1) & mask) {
        slot *e = &s->slots[i];
        if (e->key == addr) { /* a block whose free we never saw */
            e->val = bytes;
            break;
        }
        if (!e->key) {
            e->key = addr;
            e->val = bytes;
            s->live++;
            break;
        }
    }
    unlock(s);
    return 0;
}

int64_t op_memtrack_remove(uint64_t addr)
{
    uint64_t h = line_hash(addr);
    shard *s = &g_shards[h & (NSHARDS - 1)];
    int64_t r = OP_MT_UNKNOWN;
    lock(s);
    if (s->cap) {
        uint64_t mask = s->cap - 1;
        for (uint64_t i = home_slot(addr, h, s->cap); s->slots[i].key; i = (i + 1) & mask) {
            if (s->slots[i].key != addr) continue;
            r = (int64_t)s->slots[i].val;
            delete_at(s, i);
            s->live--;
            s->recent[s->recent_pos++ % RECENT] = addr;
            break;
        }
    }
    if (r == OP_MT_UNKNOWN) {
        for (unsigned k = 0; k < RECENT; k++)
            if (s->recent[k] == addr) r = OP_MT_DOUBLE;
    }
    unlock(s);
    if (r == OP_MT_UNKNOWN) atomic_fetch_add_explicit(&g_unknown, 1, memory_order_relaxed);
    if (r == OP_MT_DOUBLE) atomic_fetch_add_explicit(&g_double, 1, memory_order_relaxed);
    return r;
}

void op_memtrack_count_realloc(void)
{
    atomic_fetch_add_explicit(&g_reallocs, 1, memory_order_relaxed);
}

void op_memtrack_counts_get(op_memtrack_counts *out)
{
    memset(out, 0, sizeof *out);
    out->unknown_frees = atomic_load(&g_unknown);
    out->double_frees = atomic_load(&g_double);
    out->reallocs = atomic_load(&g_reallocs);
    for (int i = 0; i < NSHARDS; i++) {
        lock(&g_shards[i]);
        out->live_blocks += g_shards[i].live;
        unlock(&g_shards[i]);
    }
}

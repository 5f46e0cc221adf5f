/* The streamed trace's spool (export/spool.h), white box: every chunk put
 * comes back in hand-off order with its words intact, whether written
 * past the page cache (a pool chunk in place; an arena copy, which is not
 * on a block boundary, through the spool's own aligned room) or through
 * it; a chunk holding a range still open waits in memory and keeps its
 * place. */
#define _GNU_SOURCE /* O_DIRECT, for tmpdir_takes_direct */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "capture/arena.h"
#include "capture/spill.h"
#include "export/spool.h"
#include "tmpdir.h"

TMPDIR_GROUP(g_dir, "/tmp/opprof_spool_XXXXXX")

/* n words of gap records [GAP][seed+i][seed+i+1] (n a multiple of 3). */
static void fill(op_word *w, size_t n, uint64_t seed)
{
    for (size_t i = 0; i + 3 <= n; i += 3) {
        w[i] = OP_REC_GAP;
        w[i + 1] = seed + i;
        w[i + 2] = seed + i + 1;
    }
}

static op_chunk *pool_chunk(size_t n, uint64_t seed)
{
    op_chunk *c = op_spill_chunk();
    assert_non_null(c);
    assert_true(c->nwords >= n);
    fill(c->words, n, seed);
    atomic_store_explicit(&c->end, c->words + n, memory_order_release);
    atomic_store_explicit(&c->next, NULL, memory_order_relaxed);
    return c;
}

typedef struct seen {
    size_t n;
    size_t words[8];
    uint64_t seed[8];
    int bad;
} seen;

static int check(void *ctx, op_tstate *t, op_chunk *c)
{
    (void)t;
    seen *s = ctx;
    const op_word *end = atomic_load_explicit(&c->end, memory_order_acquire);
    size_t n = (size_t)(end - c->words);
    if (s->n >= 8 || n != s->words[s->n]) s->bad = 1;
    for (size_t i = 0; !s->bad && i + 3 <= n; i += 3)
        if (c->words[i] != OP_REC_GAP || c->words[i + 1] != s->seed[s->n] + i ||
            c->words[i + 2] != s->seed[s->n] + i + 1)
            s->bad = 1;
    s->n++;
    op_spill_free(c);
    return 0;
}

static void round_trip(int direct)
{
    char near[600];
    snprintf(near, sizeof near, "%s/x.pftrace", g_dir);
    op_spool *sp = op_spool_open(near, direct);
    assert_non_null(sp);
    op_tstate *t = (op_tstate *)(uintptr_t)0x1000; /* only handed back */
    seen s = {0};
    /* a full pool chunk, a short one, an arena copy (not block-aligned) */
    op_chunk *full = op_spill_chunk();
    assert_non_null(full);
    size_t nfull = full->nwords / 3 * 3;
    op_spill_free(full);
    const size_t sizes[3] = {nfull, 3 * 1001, 3 * 77};
    for (int k = 0; k < 3; k++) {
        s.words[k] = sizes[k];
        s.seed[k] = (uint64_t)(k + 1) << 40;
    }
    op_spool_put(sp, t, pool_chunk(sizes[0], s.seed[0]));
    op_spool_put(sp, t, pool_chunk(sizes[1], s.seed[1]));
    op_word tmp[3 * 77];
    fill(tmp, sizes[2], s.seed[2]);
    op_chunk *copy = op_arena_copy(tmp, sizes[2]);
    assert_non_null(copy);
    assert_non_null(copy->arena);
    op_spool_put(sp, t, copy);
    /* a range still open: held in memory, read back in its place */
    op_chunk *open = pool_chunk(3 * 10, 0);
    open->words[0] = 0;                /* a plain range record: [site] [begin] [end] */
    open->words[2] = OP_OPEN;
    s.words[3] = 3 * 10;
    s.seed[3] = 0;
    op_spool_put(sp, t, open);
    op_spool_put(sp, t, pool_chunk(3 * 5, (uint64_t)9 << 40));
    s.words[4] = 3 * 5;
    s.seed[4] = (uint64_t)9 << 40;
    /* it ends; the record is then [GAP][0][1] as fill made the rest */
    open->words[0] = OP_REC_GAP;
    __atomic_store_n(&open->words[2], 1, __ATOMIC_RELEASE);
    op_spool_put(sp, t, NULL); /* the next hand-off writes it */
    op_spool_stats st;
    op_spool_stats_get(sp, &st);
    print_message("direct=%d: %llu chunks, %llu direct, %llu bytes, held at most %llu\n", direct,
                  (unsigned long long)st.chunks, (unsigned long long)st.direct, (unsigned long long)st.bytes,
                  (unsigned long long)st.held_peak);
    assert_string_equal(st.error, "");
    assert_int_equal(st.chunks, 5);
    assert_int_equal(st.held_peak, 1);
    assert_int_equal(st.bytes, (sizes[0] + sizes[1] + sizes[2] + 30 + 15) * sizeof(op_word));
    if (!direct) assert_int_equal(st.direct, 0);
    else if (tmpdir_takes_direct(g_dir)) assert_int_equal(st.direct, 5);
    uint64_t lost = 0;
    assert_int_equal(op_spool_replay(sp, check, &s, &lost), 0);
    assert_int_equal(lost, 0);
    assert_int_equal(s.n, 5);
    assert_false(s.bad);
    op_spool_free(sp);
}

static void test_round_trip_past_the_page_cache(void **state)
{
    (void)state;
    round_trip(1);
}

static void test_round_trip_through_the_page_cache(void **state)
{
    (void)state;
    round_trip(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_past_the_page_cache),
        cmocka_unit_test(test_round_trip_through_the_page_cache),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

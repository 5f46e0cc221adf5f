/* The common containers (src/common): the growable array, the byte buffer
 * and its sticky out-of-memory state, the hash map by key and by the
 * caller's hash, and every out-of-memory path through the failing
 * allocator hook. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/map.h"
#include "common/vec.h"

static int reset_hook(void **state)
{
    (void)state;
    op_alloc_fail_after(-1);
    return 0;
}

/* ---- growable array ---- */

static void vec_grows_and_keeps_order(void **state)
{
    (void)state;
    OP_VEC(uint32_t) a = {0};
    for (uint32_t i = 0; i < 10000; i++) assert_int_equal(op_vec_push(&a, i * 3), 0);
    assert_int_equal(a.n, 10000);
    assert_true(a.cap >= 10000 && a.cap < 20000);
    assert_int_equal(a.cap & (a.cap - 1), 0); /* doubled from 16 */
    for (uint32_t i = 0; i < 10000; i++) assert_int_equal(a.v[i], i * 3);
    op_vec_free(&a);
    assert_null(a.v);
    assert_int_equal(a.n + a.cap, 0);
}

static void vec_out_of_memory_keeps_the_array(void **state)
{
    (void)state;
    OP_VEC(uint64_t) a = {0};
    for (uint64_t i = 0; i < 16; i++) assert_int_equal(op_vec_push(&a, i), 0);
    uint64_t *before = a.v;
    op_alloc_fail_after(0);
    assert_int_equal(op_vec_push(&a, 99), -1);
    op_alloc_fail_after(-1);
    assert_ptr_equal(a.v, before);
    assert_int_equal(a.n, 16);
    assert_int_equal(a.cap, 16);
    for (uint64_t i = 0; i < 16; i++) assert_int_equal(a.v[i], i);
    assert_int_equal(op_vec_push(&a, 99), 0); /* and works again once memory is back */
    assert_int_equal(a.v[16], 99);
    op_vec_free(&a);
}

static void grow_refuses_sizes_that_overflow(void **state)
{
    (void)state;
    char *p = NULL;
    size_t cap = 0;
    assert_int_equal(op_grow(&p, &cap, SIZE_MAX / 2 + 2, 1), -1);
    assert_int_equal(op_grow(&p, &cap, SIZE_MAX / 8, 16), -1);
    assert_null(p);
    assert_int_equal(cap, 0);
    assert_int_equal(op_grow(&p, &cap, 5, 1), 0);
    assert_int_equal(cap, 16);
    free(p);
}

/* ---- byte buffer ---- */

static void buf_appends_and_stays_a_string(void **state)
{
    (void)state;
    op_buf b = {0};
    assert_int_equal(op_buf_puts(&b, "ab"), 0);
    assert_int_equal(op_buf_putc(&b, 'c'), 0);
    assert_int_equal(op_buf_fill(&b, '-', 3), 0);
    assert_int_equal(op_buf_printf(&b, "%d/%s", 42, "x"), 0);
    assert_string_equal(op_buf_str(&b), "abc---42/x");
    assert_int_equal(b.n, 10);
    /* longer than the first formatting attempt's room */
    char big[1000];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(op_buf_printf(&b, "[%s]", big), 0);
    assert_int_equal(b.n, 10 + 1001);
    assert_int_equal(strlen(op_buf_str(&b)), b.n);
    assert_int_equal(b.p[10], '[');
    assert_int_equal(b.p[b.n - 1], ']');
    for (int i = 0; i < 100000; i++) assert_int_equal(op_buf_putc(&b, (char)('a' + i % 26)), 0);
    assert_int_equal(b.n, 1011 + 100000);
    assert_int_equal(b.p[b.n - 1], 'a' + 99999 % 26);
    assert_false(b.failed);
    char *s = op_buf_take(&b);
    assert_non_null(s);
    assert_int_equal(strlen(s), 1011 + 100000);
    assert_null(b.p);
    free(s);
}

static void buf_of_nothing_is_empty_string(void **state)
{
    (void)state;
    op_buf b = {0};
    assert_string_equal(op_buf_str(&b), "");
    assert_null(b.p); /* and allocated nothing */
    char *s = op_buf_take(&b);
    assert_non_null(s);
    assert_string_equal(s, "");
    free(s);
}

static void buf_out_of_memory_is_sticky(void **state)
{
    (void)state;
    op_buf b = {0};
    assert_int_equal(op_buf_puts(&b, "kept"), 0);
    op_alloc_fail_after(0);
    char big[200];
    memset(big, 'q', sizeof big);
    assert_int_equal(op_buf_put(&b, big, sizeof big), -1);
    assert_true(b.failed);
    op_alloc_fail_after(-1);
    /* memory is back, but the buffer stays failed: one check at the end
     * sees every failure */
    assert_int_equal(op_buf_putc(&b, 'x'), -1);
    assert_int_equal(op_buf_printf(&b, "%d", 1), -1);
    assert_int_equal(op_buf_fill(&b, ' ', 2), -1);
    assert_int_equal(op_buf_reserve(&b, 0), -1);
    assert_int_equal(b.n, 4);
    assert_memory_equal(b.p, "kept", 4);
    assert_null(op_buf_take(&b)); /* frees */
    assert_null(b.p);
    assert_false(b.failed);
    assert_int_equal(op_buf_puts(&b, "new"), 0);
    assert_string_equal(op_buf_str(&b), "new");
    op_buf_free(&b);
}

static void buf_fail_joins_the_state(void **state)
{
    (void)state;
    op_buf b = {0};
    assert_int_equal(op_buf_fail(&b), -1);
    assert_int_equal(op_buf_puts(&b, "x"), -1);
    assert_null(b.p);
    op_buf_free(&b);
    assert_false(b.failed);
}

/* ---- hash map by key ---- */

static void map_puts_and_gets_many_keys(void **state)
{
    (void)state;
    op_map m = {0};
    assert_null(op_map_get(&m, 7));
    assert_null(op_map_get(&m, 0));
    for (uint64_t k = 0; k < 50000; k++) assert_int_equal(op_map_put(&m, k * 8, k + 1), 0);
    assert_int_equal(m.n, 50000);
    assert_true(m.cap >= 100000); /* at most half full */
    for (uint64_t k = 0; k < 50000; k++) {
        uint64_t *v = op_map_get(&m, k * 8);
        assert_non_null(v);
        assert_int_equal(*v, k + 1);
        assert_null(op_map_get(&m, k * 8 + 1));
    }
    assert_int_equal(op_map_put(&m, 0, 77), 0); /* replaces */
    assert_int_equal(*op_map_get(&m, 0), 77);
    assert_int_equal(op_map_put(&m, UINT64_MAX, 5), 0);
    assert_int_equal(*op_map_get(&m, UINT64_MAX), 5);
    assert_int_equal(m.n, 50001);
    int added = -1;
    uint64_t *v = op_map_at(&m, 8, &added);
    assert_int_equal(added, 0);
    assert_int_equal(*v, 2);
    v = op_map_at(&m, 3, &added);
    assert_int_equal(added, 1);
    assert_int_equal(*v, 0);
    op_map_free(&m);
    assert_null(m.slots);
}

/* Keys whose homes are all one slot of a 64-slot table: one long run. */
static size_t colliding_keys(uint64_t *keys, size_t want)
{
    size_t n = 0;
    uint64_t target = op_map_mix(1) & 63;
    for (uint64_t k = 1; n < want; k++)
        if ((op_map_mix(k) & 63) == target) keys[n++] = k;
    return n;
}

static void map_collisions(void **state)
{
    (void)state;
    op_map m = {0};
    uint64_t keys[24];
    colliding_keys(keys, 24);
    assert_int_equal(op_map_reserve(&m, 24), 0);
    assert_int_equal(m.cap, 64);
    for (size_t i = 0; i < 24; i++) assert_int_equal(op_map_put(&m, keys[i], i), 0);
    assert_int_equal(m.cap, 64); /* no growth: the run wrapped around one home */
    for (size_t i = 0; i < 24; i++) {
        uint64_t *v = op_map_get(&m, keys[i]);
        assert_non_null(v);
        assert_int_equal(*v, i);
    }
    assert_null(op_map_get(&m, 0));
    assert_int_equal(op_map_put(&m, 0, 1), 0);
    assert_int_equal(*op_map_get(&m, 0), 1);
    assert_int_equal(m.n, 25);
    op_map_free(&m);
}

static void map_random_puts_match_a_model(void **state)
{
    (void)state;
    enum { SPACE = 4096 };
    static uint64_t model[SPACE]; /* value + 1; 0 absent */
    memset(model, 0, sizeof model);
    op_map m = {0};
    uint64_t x = 88172645463325252ull;
    size_t live = 0;
    for (int step = 0; step < 200000; step++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t k = x % SPACE;
        if (x >> 62) {
            if (!model[k]) live++;
            model[k] = step + 1;
            assert_int_equal(op_map_put(&m, k << 4, (uint64_t)step), 0);
        } else if (model[k]) { /* op_map_at finds the key without adding it again */
            int added = 1;
            uint64_t *p = op_map_at(&m, k << 4, &added);
            assert_int_equal(added, 0);
            assert_int_equal(*p, model[k] - 1);
        }
    }
    assert_int_equal(m.n, live);
    for (uint64_t i = 0; i < SPACE; i++) {
        uint64_t *p = op_map_get(&m, i << 4);
        if (model[i]) {
            assert_non_null(p);
            assert_int_equal(*p, model[i] - 1);
        } else {
            assert_null(p);
        }
    }
    op_map_free(&m);
}

static void map_out_of_memory_keeps_the_map(void **state)
{
    (void)state;
    op_map m = {0};
    for (uint64_t k = 1; k <= 32; k++) assert_int_equal(op_map_put(&m, k, k), 0);
    assert_int_equal(m.cap, 64);
    op_alloc_fail_after(0);
    assert_int_equal(op_map_put(&m, 33, 33), -1);
    assert_null(op_map_at(&m, 34, NULL));
    assert_int_equal(op_map_add_h(&m, 35, 1), -1);
    /* existing keys still answer without allocating */
    assert_int_equal(op_map_put(&m, 5, 500), 0);
    op_alloc_fail_after(-1);
    assert_int_equal(m.n, 32);
    assert_int_equal(*op_map_get(&m, 5), 500);
    for (uint64_t k = 1; k <= 32; k++) assert_non_null(op_map_get(&m, k));
    assert_null(op_map_get(&m, 33));
    assert_int_equal(op_map_put(&m, 33, 33), 0);
    assert_int_equal(m.cap, 128);
    op_map_free(&m);
}

/* ---- hash map by the caller's hash ---- */

typedef struct words {
    const char *w[64];
} words;

static int word_eq(const void *ctx, uint64_t val)
{
    const void *const *c = ctx;
    const words *ws = c[0];
    return strcmp(ws->w[val], c[1]) == 0;
}

static void map_by_hash_tells_equal_hashes_apart(void **state)
{
    (void)state;
    words ws = {{"alpha", "beta", "gamma", "delta", "epsilon"}};
    op_map m = {0};
    /* every word under one hash (and hash 0, which is stored as 1): only
     * eq tells them apart */
    for (uint64_t i = 0; i < 5; i++) assert_int_equal(op_map_add_h(&m, 0, i), 0);
    for (uint64_t i = 0; i < 5; i++) {
        const void *ctx[2] = {&ws, ws.w[i]};
        uint64_t *v = op_map_find_h(&m, 0, word_eq, ctx);
        assert_non_null(v);
        assert_int_equal(*v, i);
        assert_null(op_map_find_h(&m, 2, word_eq, ctx));
    }
    const void *ctx[2] = {&ws, "zeta"};
    assert_null(op_map_find_h(&m, 0, word_eq, ctx));
    assert_int_equal(m.n, 5);
    op_map_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(vec_grows_and_keeps_order, reset_hook),
        cmocka_unit_test_teardown(vec_out_of_memory_keeps_the_array, reset_hook),
        cmocka_unit_test_teardown(grow_refuses_sizes_that_overflow, reset_hook),
        cmocka_unit_test_teardown(buf_appends_and_stays_a_string, reset_hook),
        cmocka_unit_test_teardown(buf_of_nothing_is_empty_string, reset_hook),
        cmocka_unit_test_teardown(buf_out_of_memory_is_sticky, reset_hook),
        cmocka_unit_test_teardown(buf_fail_joins_the_state, reset_hook),
        cmocka_unit_test_teardown(map_puts_and_gets_many_keys, reset_hook),
        cmocka_unit_test_teardown(map_collisions, reset_hook),
        cmocka_unit_test_teardown(map_random_puts_match_a_model, reset_hook),
        cmocka_unit_test_teardown(map_out_of_memory_keeps_the_map, reset_hook),
        cmocka_unit_test_teardown(map_by_hash_tells_equal_hashes_apart, reset_hook),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

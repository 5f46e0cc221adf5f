/* Public structs that grow (include/opprof.h, at the top): a program built
 * against an older, smaller struct still works, its missing fields taking
 * their defaults, and the library reads no byte beyond the struct_size it is
 * given (the old structs here are heap copies of exactly that size, so ASan
 * sees any overread); a struct never set up or of a size no struct has is
 * refused with a detail; the trace handler's results are read apart from
 * its inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "opprof_trace.h"

/* The older structs here are smaller than this header's on purpose, and
 * only their fields that fit are touched: what an older program does. */
#pragma GCC diagnostic ignored "-Warray-bounds"

static const opprof_site k_site = OPPROF_SITE_INIT("op", OPPROF_CAT_CPU_OP, NULL);

static char g_dir[] = "/tmp/opprof_struct_size_XXXXXX";

static int setup(void **state)
{
    (void)state;
    /* the ranks of the exports below come from their options alone */
    unsetenv("RANK");
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("PMI_RANK");
    unsetenv("WORLD_SIZE");
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMI_SIZE");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A heap copy of the first size bytes of s, struct_size set to size: the
 * struct as a program built against an older header holds it. */
static void *older(const void *s, size_t size)
{
    void *p = malloc(size);
    assert_non_null(p);
    memcpy(p, s, size);
    memcpy(p, &size, sizeof size);
    return p;
}

static opprof_trace *record(const opprof_config *cfg)
{
    assert_int_equal(opprof_start(cfg), OPPROF_OK);
    for (int i = 0; i < 3; i++) {
        opprof_begin(&k_site);
        opprof_end(&k_site);
    }
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_non_null(t);
    return t;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = calloc(1, 1 << 20);
    assert_non_null(buf);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* ---- opprof_config ---- */

static void test_config_of_an_older_program_gets_defaults(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    assert_int_equal(cfg.struct_size, sizeof cfg);
    cfg.aggregate = 1;
    /* The whole struct: aggregate is read, the session keeps no events. */
    opprof_trace *t = record(&cfg);
    assert_int_equal(opprof_trace_event_count(t), 0);
    assert_int_equal(opprof_trace_aggregated(t), 3);
    opprof_trace_free(t);
    /* A struct that ends before aggregate: the 1 beyond it is not the
     * program's, the default (keep events) applies. */
    opprof_config *old = older(&cfg, offsetof(opprof_config, aggregate));
    t = record(old);
    assert_int_equal(opprof_trace_event_count(t), 3);
    assert_int_equal(opprof_trace_aggregated(t), 0);
    opprof_trace_free(t);
    free(old);
}

static void test_config_init_writes_only_its_size(void **state)
{
    (void)state;
    size_t size = offsetof(opprof_config, aggregate);
    unsigned char buf[sizeof(opprof_config) + 16];
    memset(buf, 0xa5, sizeof buf);
    assert_int_equal(opprof_config_init_size((opprof_config *)(void *)buf, size), OPPROF_OK);
    opprof_config got;
    memcpy(&got, buf, sizeof got);
    assert_int_equal(got.struct_size, size);
    assert_int_equal(got.activities, OPPROF_ACTIVITY_CPU);
    assert_int_equal(got.max_events, OPPROF_DEFAULT_MAX_EVENTS);
    for (size_t i = size; i < sizeof buf; i++) assert_int_equal(buf[i], 0xa5);
    /* A larger struct (a newer header): the bytes this library does not
     * know are zeroed, its own get their defaults. */
    unsigned char big[sizeof(opprof_config) + 64];
    memset(big, 0xa5, sizeof big);
    assert_int_equal(opprof_config_init_size((opprof_config *)(void *)big, sizeof big), OPPROF_OK);
    memcpy(&got, big, sizeof got);
    assert_int_equal(got.struct_size, sizeof big);
    assert_int_equal(got.max_stack_depth, 32);
    for (size_t i = sizeof(opprof_config); i < sizeof big; i++) assert_int_equal(big[i], 0);
}

static void test_config_not_set_up_is_refused(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.struct_size = 0;
    assert_int_equal(opprof_start(&cfg), OPPROF_E_INVAL);
    assert_non_null(strstr(opprof_last_error(), "opprof_config.struct_size is 0"));
    assert_non_null(strstr(opprof_last_error(), "opprof_config_init"));
    assert_int_equal(opprof_is_active(), 0);
    const size_t bad[] = {4, 13, sizeof(opprof_config) + 1, (size_t)1 << 30};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cfg.struct_size = bad[i];
        assert_int_equal(opprof_start(&cfg), OPPROF_E_INVAL);
        assert_non_null(strstr(opprof_last_error(), "is not the size of any opprof_config"));
        assert_int_equal(opprof_is_active(), 0);
    }
    assert_int_equal(opprof_config_init_size(&cfg, 12), OPPROF_E_INVAL);
    assert_int_equal(opprof_on_demand_start(&(opprof_config){0}), OPPROF_E_INVAL);
    assert_non_null(strstr(opprof_last_error(), "opprof_on_demand_start: opprof_config.struct_size is 0"));
}

/* A program built against a newer header: accepted while it leaves the
 * fields this library does not know at zero, refused when it sets one. */
static void test_config_of_a_newer_program(void **state)
{
    (void)state;
    struct {
        opprof_config known;
        uint64_t later[4];
    } newer;
    memset(&newer, 0, sizeof newer);
    opprof_config_init_size(&newer.known, sizeof newer);
    assert_int_equal(newer.known.struct_size, sizeof newer);
    opprof_trace_free(record(&newer.known));
    newer.later[2] = 1;
    assert_int_equal(opprof_start(&newer.known), OPPROF_E_INVAL);
    assert_non_null(strstr(opprof_last_error(), "does not know"));
    assert_int_equal(opprof_is_active(), 0);
}

/* ---- opprof_export_options ---- */

static void test_export_options_of_an_older_program(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_config_init(&cfg);
    opprof_trace *t = record(&cfg);
    opprof_export_options o;
    opprof_export_options_init(&o);
    o.rank = 5;
    o.world_size = 8;
    char path[256];
    snprintf(path, sizeof path, "%s/full.json", g_dir);
    assert_int_equal(opprof_export_chrome_trace_ex(t, path, &o), OPPROF_OK);
    char *text = slurp(path);
    assert_non_null(strstr(text, "\"rank\": 5, \"world_size\": 8"));
    free(text);
    /* Without world_size: its default (none, the environment has none). */
    opprof_export_options *old = older(&o, offsetof(opprof_export_options, world_size));
    snprintf(path, sizeof path, "%s/old.json", g_dir);
    assert_int_equal(opprof_export_chrome_trace_ex(t, path, old), OPPROF_OK);
    text = slurp(path);
    assert_non_null(strstr(text, "\"rank\": 5}"));
    assert_null(strstr(text, "world_size"));
    free(text);
    free(old);
    /* Not set up: refused, nothing written. */
    o.struct_size = 0;
    snprintf(path, sizeof path, "%s/refused.json", g_dir);
    assert_int_equal(opprof_export_chrome_trace_ex(t, path, &o), OPPROF_E_INVAL);
    assert_non_null(strstr(opprof_last_error(), "opprof_export_options.struct_size is 0"));
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(opprof_export_chrome_trace_stream(t, stdout, &o), OPPROF_E_INVAL);
    opprof_trace_free(t);
}

/* ---- opprof_trace_handler ---- */

static void test_handler_results_apart_from_inputs(void **state)
{
    (void)state;
    char dir[300];
    snprintf(dir, sizeof dir, "%s/traces", g_dir);
    opprof_trace_handler h;
    assert_int_equal(opprof_trace_handler_init(&h, dir, "w", 0), OPPROF_OK);
    assert_int_equal(opprof_trace_handler_status(&h), OPPROF_OK);
    assert_int_equal(opprof_trace_handler_traces_written(&h), 0);
    assert_string_equal(opprof_trace_handler_last_path(&h), "");
    opprof_config cfg;
    opprof_config_init(&cfg);
    opprof_trace *t = record(&cfg);
    /* The handler writes its results, never what the caller set. */
    size_t in_at = offsetof(opprof_trace_handler, dir);
    unsigned char inputs[sizeof h];
    memcpy(inputs, (unsigned char *)&h + in_at, sizeof h - in_at);
    opprof_trace_handler_ready(t, &h);
    opprof_trace_handler_ready(t, &h);
    assert_memory_equal(inputs, (unsigned char *)&h + in_at, sizeof h - in_at);
    assert_int_equal(h.struct_size, sizeof h);
    assert_int_equal(opprof_trace_handler_status(&h), OPPROF_OK);
    assert_int_equal(opprof_trace_handler_traces_written(&h), 2);
    assert_string_equal(opprof_trace_handler_last_error(&h), "");
    const char *path = opprof_trace_handler_last_path(&h);
    assert_int_equal(strncmp(path, dir, strlen(dir)), 0);
    assert_non_null(strstr(path, "/w."));
    assert_int_equal(access(path, R_OK), 0);
    /* A failure: reported, the count kept. */
    char file[300];
    snprintf(file, sizeof file, "%s/plain", g_dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(h.dir, sizeof h.dir, "%s/sub", file);
    opprof_trace_handler_ready(t, &h);
    assert_int_equal(opprof_trace_handler_status(&h), OPPROF_E_IO);
    assert_non_null(strstr(opprof_trace_handler_last_error(&h), file));
    assert_int_equal(opprof_trace_handler_traces_written(&h), 2);
    opprof_trace_free(t);
}

/* A handler without the export options pointer (an older program): the
 * default options, and its results as for any handler. */
static void test_handler_of_an_older_program(void **state)
{
    (void)state;
    size_t size = offsetof(opprof_trace_handler, export_options);
    opprof_trace_handler *h = malloc(size);
    assert_non_null(h);
    char dir[300];
    snprintf(dir, sizeof dir, "%s/old_handler", g_dir);
    assert_int_equal(opprof_trace_handler_init_size(h, size, dir, NULL, 1), OPPROF_OK);
    assert_int_equal(h->struct_size, size);
    assert_int_equal(h->row_limit, 100);
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.on_trace_ready = opprof_trace_handler_ready;
    cfg.user = h;
    opprof_trace_free(record(&cfg));
    assert_int_equal(opprof_trace_handler_status(h), OPPROF_OK);
    assert_int_equal(opprof_trace_handler_traces_written(h), 1);
    const char *path = opprof_trace_handler_last_path(h);
    size_t n = strlen(path);
    assert_true(n > 3 && strcmp(path + n - 3, ".gz") == 0);
    assert_int_equal(access(path, R_OK), 0);
    free(h);
}

static void test_handler_not_set_up(void **state)
{
    (void)state;
    opprof_trace_handler h;
    assert_int_equal(opprof_trace_handler_init(&h, g_dir, NULL, 0), OPPROF_OK);
    h.struct_size = 0;
    assert_int_equal(opprof_trace_handler_status(&h), OPPROF_E_INVAL);
    assert_non_null(strstr(opprof_last_error(), "opprof_trace_handler.struct_size is 0"));
    assert_int_equal(opprof_trace_handler_traces_written(&h), 0);
    assert_string_equal(opprof_trace_handler_last_path(&h), "");
    opprof_config cfg;
    opprof_config_init(&cfg);
    opprof_trace *t = record(&cfg);
    opprof_trace_handler_ready(t, &h); /* refused on stderr: nothing written, nothing kept */
    h.struct_size = sizeof h;
    assert_int_equal(opprof_trace_handler_traces_written(&h), 0);
    assert_string_equal(opprof_trace_handler_last_path(&h), "");
    assert_int_equal(opprof_trace_handler_init_size(&h, 16, NULL, NULL, 0), OPPROF_E_INVAL);
    opprof_trace_free(t);
}

/* Options through the handler's pointer, checked as the exporter checks them. */
static void test_handler_export_options(void **state)
{
    (void)state;
    opprof_export_options o;
    opprof_export_options_init(&o);
    o.rank = 3;
    opprof_trace_handler h;
    assert_int_equal(opprof_trace_handler_init(&h, g_dir, NULL, 0), OPPROF_OK);
    snprintf(h.file_name, sizeof h.file_name, "ranked.json");
    h.export_options = &o;
    opprof_config cfg;
    opprof_config_init(&cfg);
    opprof_trace *t = record(&cfg);
    opprof_trace_handler_ready(t, &h);
    assert_int_equal(opprof_trace_handler_status(&h), OPPROF_OK);
    char *text = slurp(opprof_trace_handler_last_path(&h));
    assert_non_null(strstr(text, "\"rank\": 3"));
    free(text);
    o.struct_size = 0;
    opprof_trace_handler_ready(t, &h);
    assert_int_equal(opprof_trace_handler_status(&h), OPPROF_E_INVAL);
    assert_non_null(strstr(opprof_trace_handler_last_error(&h), "opprof_export_options.struct_size is 0"));
    opprof_trace_free(t);
}

/* ---- the structs that hold growing ones ---- */

static void test_env_and_config_of_an_older_program(void **state)
{
    (void)state;
    size_t cfg_size = offsetof(opprof_config, aggregate);
    size_t env_size = offsetof(opprof_env, handler) + offsetof(opprof_trace_handler, export_options);
    opprof_config *cfg = malloc(cfg_size);
    opprof_env *env = malloc(env_size);
    assert_non_null(cfg);
    assert_non_null(env);
    char settings[400];
    snprintf(settings, sizeof settings, "record_shapes=1;output_trace_dir=%s/env", g_dir);
    assert_int_equal(opprof_config_from_string_size(cfg, cfg_size, env, env_size, settings), OPPROF_OK);
    assert_int_equal(cfg->struct_size, cfg_size);
    assert_int_equal(cfg->record_shapes, 1);
    assert_int_equal(env->enabled, 1);
    assert_ptr_equal(cfg->user, &env->handler);
    assert_ptr_equal(cfg->output_dir, env->handler.dir);
    assert_int_equal(env->handler.struct_size, env_size - offsetof(opprof_env, handler));
    opprof_trace_free(record(cfg));
    assert_int_equal(opprof_trace_handler_status(&env->handler), OPPROF_OK);
    assert_int_equal(opprof_trace_handler_traces_written(&env->handler), 1);
    assert_non_null(strstr(opprof_trace_handler_last_path(&env->handler), "/env/profile_"));
    free(cfg);
    free(env);
}

static void test_flight_config_of_an_older_program(void **state)
{
    (void)state;
    size_t size = offsetof(opprof_flight_config, session) + offsetof(opprof_config, aggregate);
    opprof_flight_config *fc = malloc(size);
    assert_non_null(fc);
    assert_int_equal(opprof_flight_config_init_size(fc, size), OPPROF_OK);
    assert_int_equal(fc->max_slow_dumps, 10);
    assert_int_equal(fc->session.struct_size, offsetof(opprof_config, aggregate));
    assert_int_equal(fc->session.max_stack_depth, 32);
    fc->signal = -1;
    fc->ring_bytes = 2u << 20;
    assert_int_equal(opprof_flight_start(fc), OPPROF_OK);
    opprof_begin(&k_site);
    opprof_end(&k_site);
    assert_int_equal(opprof_flight_stop(), OPPROF_OK);
    fc->session.struct_size = 0;
    assert_int_equal(opprof_flight_start(fc), OPPROF_E_INVAL);
    assert_non_null(strstr(opprof_last_error(), "opprof_flight_start: opprof_config.struct_size is 0"));
    free(fc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_of_an_older_program_gets_defaults),
        cmocka_unit_test(test_config_init_writes_only_its_size),
        cmocka_unit_test(test_config_not_set_up_is_refused),
        cmocka_unit_test(test_config_of_a_newer_program),
        cmocka_unit_test(test_export_options_of_an_older_program),
        cmocka_unit_test(test_handler_results_apart_from_inputs),
        cmocka_unit_test(test_handler_of_an_older_program),
        cmocka_unit_test(test_handler_not_set_up),
        cmocka_unit_test(test_handler_export_options),
        cmocka_unit_test(test_env_and_config_of_an_older_program),
        cmocka_unit_test(test_flight_config_of_an_older_program),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* Configuration from the environment: every variable, the one-string form,
 * the rank, and invalid values that must name the variable, the value and
 * the choices, and leave profiling off. */
#include <glob.h>
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
#include "trace_check.h"

static const char *const k_vars[] = {
    "OPPROF_ENABLE", "OPPROF_ACTIVITIES", "OPPROF_SCHEDULE", "OPPROF_RECORD_SHAPES", "OPPROF_PROFILE_MEMORY",
    "OPPROF_WITH_STACK", "OPPROF_WITH_FLOPS", "OPPROF_OUTPUT_TRACE_DIR", "OPPROF_USE_GZIP", "OPPROF_ROW_LIMIT",
    "OPPROF_SORT_BY", "OPPROF_MAX_EVENTS", "OPPROF_MAX_STACK_DEPTH", "OPPROF_CONFIG", "RANK",
    "OMPI_COMM_WORLD_RANK", "PMI_RANK", NULL,
};

static int clean_env(void **state)
{
    (void)state;
    for (int i = 0; k_vars[i]; i++) unsetenv(k_vars[i]);
    return 0;
}

static void test_nothing_set_means_off(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_env env;
    assert_int_equal(opprof_config_from_env(&cfg, &env), OPPROF_OK);
    assert_int_equal(env.enabled, 0);
    assert_int_equal(env.rank, (int64_t)getpid());
    assert_null(cfg.on_trace_ready);
}

static void test_every_variable(void **state)
{
    (void)state;
    setenv("OPPROF_ACTIVITIES", "cpu, CUDA", 1);
    setenv("OPPROF_SCHEDULE", "skip_first=10,wait=5,warmup=1,active=3,repeat=2", 1);
    setenv("OPPROF_RECORD_SHAPES", "1", 1);
    setenv("OPPROF_PROFILE_MEMORY", "true", 1);
    setenv("OPPROF_WITH_STACK", "yes", 1);
    setenv("OPPROF_WITH_FLOPS", "On", 1);
    setenv("OPPROF_OUTPUT_TRACE_DIR", "/tmp/opprof-traces", 1);
    setenv("OPPROF_USE_GZIP", "0", 1);
    setenv("OPPROF_ROW_LIMIT", "10", 1);
    setenv("OPPROF_SORT_BY", "self_cpu_time_total", 1);
    setenv("OPPROF_MAX_EVENTS", "5000", 1);
    setenv("OPPROF_MAX_STACK_DEPTH", "12", 1);
    setenv("RANK", "3", 1);
    setenv("PMI_RANK", "9", 1);
    opprof_config cfg;
    opprof_env env;
    assert_int_equal(opprof_config_from_env(&cfg, &env), OPPROF_OK);
    assert_int_equal(env.enabled, 1);
    assert_int_equal(cfg.activities, OPPROF_ACTIVITY_CPU | OPPROF_ACTIVITY_CUDA);
    assert_true(cfg.schedule.enabled);
    assert_int_equal(cfg.schedule.skip_first, 10);
    assert_int_equal(cfg.schedule.wait, 5);
    assert_int_equal(cfg.schedule.warmup, 1);
    assert_int_equal(cfg.schedule.active, 3);
    assert_int_equal(cfg.schedule.repeat, 2);
    assert_true(cfg.record_shapes && cfg.profile_memory && cfg.with_stack && cfg.with_flops);
    assert_int_equal(cfg.max_events, 5000);
    assert_int_equal(cfg.max_stack_depth, 12);
    assert_int_equal(env.rank, 3); /* RANK before PMI_RANK */
    assert_string_equal(env.handler.dir, "/tmp/opprof-traces");
    /* a schedule: a file per cycle */
    assert_string_equal(env.handler.file_name, "profile_3.step{step}.{time}.pt.trace.json");
    assert_int_equal(env.handler.use_gzip, 0);
    assert_true(env.handler.print_table);
    assert_int_equal(env.handler.row_limit, 10);
    assert_string_equal(env.handler.sort_by, "self_cpu_time_total");
    assert_ptr_equal(env.handler.table_out, stderr);
    assert_ptr_equal(cfg.on_trace_ready, opprof_trace_handler_ready);
    assert_ptr_equal(cfg.user, &env.handler);
    assert_string_equal(cfg.output_dir, "/tmp/opprof-traces");
}

static void test_enable_switch_and_rank_order(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_env env;
    setenv("OPPROF_RECORD_SHAPES", "1", 1);
    setenv("OPPROF_ENABLE", "off", 1);
    assert_int_equal(opprof_config_from_env(&cfg, &env), OPPROF_OK);
    assert_int_equal(env.enabled, 0);
    unsetenv("OPPROF_RECORD_SHAPES");
    setenv("OPPROF_ENABLE", "1", 1);
    setenv("OMPI_COMM_WORLD_RANK", "4", 1);
    setenv("PMI_RANK", "9", 1);
    assert_int_equal(opprof_config_from_env(&cfg, &env), OPPROF_OK);
    assert_int_equal(env.enabled, 1);
    assert_int_equal(env.rank, 4);
    assert_null(cfg.on_trace_ready); /* nothing to write, no table */
    unsetenv("OMPI_COMM_WORLD_RANK");
    assert_int_equal(opprof_config_from_env(&cfg, &env), OPPROF_OK);
    assert_int_equal(env.rank, 9);
    setenv("PMI_RANK", "x", 1); /* not a rank: the pid */
    assert_int_equal(opprof_config_from_env(&cfg, &env), OPPROF_OK);
    assert_int_equal(env.rank, (int64_t)getpid());
}

static void test_one_string(void **state)
{
    (void)state;
    opprof_config cfg;
    opprof_env env;
    setenv("OPPROF_CONFIG", " record_shapes=1; schedule = wait=1,warmup=1,active=2 ;output_trace_dir=out;use_gzip=1",
           1);
    setenv("OPPROF_RECORD_SHAPES", "0", 1); /* its own variable wins */
    setenv("RANK", "0", 1);
    assert_int_equal(opprof_config_from_env(&cfg, &env), OPPROF_OK);
    assert_int_equal(env.enabled, 1);
    assert_int_equal(cfg.record_shapes, 0);
    assert_int_equal(cfg.schedule.active, 2);
    assert_string_equal(env.handler.dir, "out");
    assert_string_equal(env.handler.file_name, "profile_0.step{step}.{time}.pt.trace.json");
    assert_int_equal(env.handler.use_gzip, 1);
    assert_false(env.handler.print_table);
    unsetenv("OPPROF_CONFIG");
    setenv("OPPROF_OUTPUT_TRACE_DIR", "out", 1);
    assert_int_equal(opprof_config_from_env(&cfg, &env), OPPROF_OK);
    assert_string_equal(env.handler.file_name, "profile_0.json"); /* no schedule: the one trace, at exit */
    unsetenv("OPPROF_OUTPUT_TRACE_DIR");

    /* From a string alone, the environment's own variables do not count. */
    assert_int_equal(opprof_config_from_string(&cfg, &env, "with_flops=1;row_limit=-1"), OPPROF_OK);
    assert_int_equal(cfg.with_flops, 1);
    assert_int_equal(cfg.record_shapes, 0);
    assert_int_equal(env.handler.row_limit, -1);
    assert_true(env.handler.table_only);
    assert_int_equal(env.rank, 0);
    /* The table's row order and length default to the opprof command's. */
    assert_string_equal(env.handler.sort_by, "cpu_time_total");
    assert_int_equal(opprof_config_from_string(&cfg, &env, "sort_by=count"), OPPROF_OK);
    assert_true(env.handler.print_table);
    assert_int_equal(env.handler.row_limit, 10);
}

/* Runs f with stderr in a buffer. */
static void capture_stderr(char *buf, size_t n, int *rc, opprof_config *cfg, opprof_env *env, const char *settings)
{
    char path[] = "/tmp/opprof_env_stderr_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    *rc = settings ? opprof_config_from_string(cfg, env, settings) : opprof_config_from_env(cfg, env);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t k = pread(fd, buf, n - 1, 0);
    buf[k > 0 ? k : 0] = '\0';
    close(fd);
    unlink(path);
}

static void test_invalid_values(void **state)
{
    (void)state;
    static const struct {
        const char *var, *value, *choices;
    } bad[] = {
        {"OPPROF_RECORD_SHAPES", "maybe", "1, 0, true, false, yes, no, on, off"},
        {"OPPROF_ACTIVITIES", "cpu,tpu", "cpu, cuda, cpu,cuda"},
        {"OPPROF_SCHEDULE", "wait=1,warmup=1", "active must be at least 1"},
        {"OPPROF_SCHEDULE", "wait=1,bogus=2,active=1", "unknown key 'bogus'"},
        {"OPPROF_ROW_LIMIT", "ten", "a whole number of rows, -1 for all"},
        {"OPPROF_SORT_BY", "cpu_time_totl", "cpu_time_total, self_cpu_time_total"},
        {"OPPROF_MAX_EVENTS", "0", "a whole number of events >= 1"},
        {"OPPROF_MAX_STACK_DEPTH", "129", "a number of frames from 1 to 128"},
        {"OPPROF_ENABLE", "2", "true, false"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        clean_env(NULL);
        setenv("OPPROF_WITH_FLOPS", "1", 1);
        setenv(bad[i].var, bad[i].value, 1);
        opprof_config cfg;
        opprof_env env;
        char err[2048];
        int rc;
        capture_stderr(err, sizeof err, &rc, &cfg, &env, NULL);
        assert_int_equal(rc, OPPROF_E_INVAL);
        assert_int_equal(env.enabled, 0);
        assert_int_equal(cfg.with_flops, 0); /* all defaults: nothing half-applied */
        assert_null(cfg.on_trace_ready);
        char want[256];
        snprintf(want, sizeof want, "%s=%s", bad[i].var, bad[i].value);
        const char *detail = opprof_last_error();
        if (!strstr(detail, want) || !strstr(detail, bad[i].choices) || !strstr(detail, "profiling stays off"))
            fail_msg("detail '%s' should name '%s' and '%s'", detail, want, bad[i].choices);
        if (!strstr(err, want) || strncmp(err, "opprof: ", 8) != 0) fail_msg("stderr '%s' should name '%s'", err, want);
        int lines = 0;
        for (const char *c = err; *c; c++) lines += *c == '\n';
        assert_int_equal(lines, 1);
    }
    clean_env(NULL);
    opprof_config cfg;
    opprof_env env;
    char err[2048];
    int rc;
    capture_stderr(err, sizeof err, &rc, &cfg, &env, "record_shapes=1;colour=blue");
    assert_int_equal(rc, OPPROF_E_INVAL);
    assert_non_null(strstr(err, "colour"));
    assert_non_null(strstr(err, "record_shapes, profile_memory"));
    capture_stderr(err, sizeof err, &rc, &cfg, &env, "record_shapes");
    assert_int_equal(rc, OPPROF_E_INVAL);
    assert_non_null(strstr(err, "key=value"));
}

/* The whole path: environment -> session with a schedule of two cycles ->
 * a file per cycle, profile_{rank}.step{N}.{time}.pt.trace.json, each with
 * its own steps (a second cycle used to overwrite the first). */
static void test_end_to_end(void **state)
{
    (void)state;
    char dir[] = "/tmp/opprof_env_e2e_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char out[300];
    snprintf(out, sizeof out, "%s/sub/dir", dir); /* made on demand */
    setenv("OPPROF_OUTPUT_TRACE_DIR", out, 1);
    setenv("OPPROF_SCHEDULE", "wait=1,warmup=1,active=2,repeat=2", 1);
    setenv("OPPROF_RECORD_SHAPES", "1", 1);
    setenv("RANK", "7", 1);
    opprof_config cfg;
    opprof_env env;
    assert_int_equal(opprof_config_from_env(&cfg, &env), OPPROF_OK);
    assert_int_equal(env.enabled, 1);
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    OPPROF_SITE(site, "train_op");
    for (int i = 0; i < 10; i++) {
        opprof_begin(&site);
        opprof_end(&site);
        opprof_step();
    }
    assert_int_equal(opprof_stop(NULL), OPPROF_OK);
    assert_int_equal(opprof_trace_handler_status(&env.handler), OPPROF_OK);
    assert_int_equal(opprof_trace_handler_traces_written(&env.handler), 2);
    /* cycle 1 records steps 2-3 and is handed out at step 4, cycle 2 steps 6-7 at 8 */
    static const struct {
        int at, steps[2], absent;
    } cycles[] = {{4, {2, 3}, 6}, {8, {6, 7}, 3}};
    for (int c = 0; c < 2; c++) {
        char pattern[400];
        snprintf(pattern, sizeof pattern, "%s/profile_7.step%d.*.pt.trace.json", out, cycles[c].at);
        glob_t g;
        if (glob(pattern, 0, NULL, &g) != 0 || g.gl_pathc != 1) fail_msg("no single file %s", pattern);
        if (c == 1) assert_string_equal(opprof_trace_handler_last_path(&env.handler), g.gl_pathv[0]);
        opprof_trace *t = NULL;
        assert_int_equal(opprof_trace_load(g.gl_pathv[0], &t), OPPROF_OK);
        int seen[8] = {0};
        for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
            opprof_event e;
            assert_int_equal(opprof_trace_event(t, i, &e), OPPROF_OK);
            if (!strncmp(e.name, "ProfilerStep#", 13)) seen[atoi(e.name + 13) & 7] = 1;
        }
        assert_true(seen[cycles[c].steps[0]] && seen[cycles[c].steps[1]]);
        assert_false(seen[cycles[c].absent]);
        opprof_trace_free(t);
        if (c == 0 && trace_check_available()) {
            char *summary = trace_check(g.gl_pathv[0]);
            assert_non_null(summary);
            assert_non_null(strstr(summary, "\"record_shapes\": 1"));
            assert_non_null(strstr(summary, "\"distributedInfo\": {\"rank\": 7"));
            free(summary);
        }
        globfree(&g);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_nothing_set_means_off, clean_env),
        cmocka_unit_test_setup(test_every_variable, clean_env),
        cmocka_unit_test_setup(test_enable_switch_and_rank_order, clean_env),
        cmocka_unit_test_setup(test_one_string, clean_env),
        cmocka_unit_test_setup(test_invalid_values, clean_env),
        cmocka_unit_test_setup(test_end_to_end, clean_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The built-in trace handler (torch's tensorboard_trace_handler): one file
 * per ready trace, named {worker}.{time_ns}.pt.trace.json[.gz]. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "opprof_trace.h"
#include "tmpdir.h"
#include "trace_check.h"

TMPDIR_GROUP(g_dir, "/tmp/opprof_handler_test_XXXXXX")

OPPROF_SITE(site_op, "op");

/* Runs n steps with a schedule that saves every step. */
static void run_steps(opprof_config *cfg, int n)
{
    cfg->schedule = (opprof_schedule){1, 0, 0, 1, 1, 0, 0, NULL, NULL}; /* warmup 1, active 1 */
    assert_int_equal(opprof_start(cfg), OPPROF_OK);
    for (int i = 0; i < n; i++) {
        opprof_begin(&site_op);
        opprof_end(&site_op);
        assert_int_equal(opprof_step(), OPPROF_OK);
    }
    assert_int_equal(opprof_stop(NULL), OPPROF_OK);
}

/* Names in dir that start with prefix and end with suffix. */
static int count_named(const char *dir, const char *prefix, const char *suffix, char *last, size_t n)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int k = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t l = strlen(e->d_name), sl = strlen(suffix);
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 || l < sl || strcmp(e->d_name + l - sl, suffix) != 0)
            continue;
        /* {worker}.{digits}{suffix} */
        const char *digits = e->d_name + strlen(prefix);
        size_t nd = strspn(digits, "0123456789");
        if (nd < 16 || digits + nd != e->d_name + l - sl) continue;
        k++;
        snprintf(last, n, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    return k;
}

static void test_default_worker_names(void **state)
{
    (void)state;
    char dir[256];
    snprintf(dir, sizeof dir, "%s/log/run1", g_dir);
    opprof_trace_handler h;
    assert_int_equal(opprof_trace_handler_init(&h, dir, NULL, 0), OPPROF_OK);
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.on_trace_ready = opprof_trace_handler_ready;
    cfg.user = &h;
    run_steps(&cfg, 5); /* W S W S W S: ready at steps 2, 4, and 5 (at stop) */
    assert_int_equal(opprof_trace_handler_status(&h), OPPROF_OK);
    assert_int_equal(opprof_trace_handler_traces_written(&h), 3);
    char host[128], prefix[200], last[512];
    gethostname(host, sizeof host);
    snprintf(prefix, sizeof prefix, "%s_%ld.", host, (long)getpid());
    assert_int_equal(count_named(dir, prefix, ".pt.trace.json", last, sizeof last), 3);
    assert_int_equal(strncmp(opprof_trace_handler_last_path(&h), dir, strlen(dir)), 0);
    if (trace_check_available()) {
        char *s = trace_check(last);
        assert_non_null(s);
        assert_non_null(strstr(s, "ProfilerStep#"));
        free(s);
    }
}

static void test_named_worker_gzip_and_session_dir(void **state)
{
    (void)state;
    char dir[256];
    snprintf(dir, sizeof dir, "%s/from_config", g_dir);
    opprof_trace_handler h;
    assert_int_equal(opprof_trace_handler_init(&h, NULL, "rank0", 1), OPPROF_OK);
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.on_trace_ready = opprof_trace_handler_ready;
    cfg.user = &h;
    cfg.output_dir = dir; /* the handler has no directory of its own */
    run_steps(&cfg, 2);
    assert_int_equal(opprof_trace_handler_status(&h), OPPROF_OK);
    assert_int_equal(opprof_trace_handler_traces_written(&h), 1);
    char last[512];
    assert_int_equal(count_named(dir, "rank0.", ".pt.trace.json.gz", last, sizeof last), 1);
    FILE *f = fopen(last, "rb");
    unsigned char m[2] = {0};
    assert_int_equal(fread(m, 1, 2, f), 2);
    fclose(f);
    assert_int_equal(m[0], 0x1f);
    if (trace_check_available()) {
        char *s = trace_check(last);
        assert_non_null(s);
        free(s);
    }
}

static void test_failure_is_reported(void **state)
{
    (void)state;
    char file[256];
    snprintf(file, sizeof file, "%s/plainfile", g_dir);
    FILE *f = fopen(file, "w");
    fclose(f);
    opprof_trace_handler h;
    assert_int_equal(opprof_trace_handler_init(&h, file, NULL, 0), OPPROF_OK); /* a file, not a directory */
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.on_trace_ready = opprof_trace_handler_ready;
    cfg.user = &h;
    run_steps(&cfg, 2);
    assert_int_equal(opprof_trace_handler_status(&h), OPPROF_E_IO);
    assert_int_equal(opprof_trace_handler_traces_written(&h), 0);
    assert_non_null(strstr(opprof_trace_handler_last_error(&h), file));
    char big[2000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(opprof_trace_handler_init(&h, big, NULL, 0), OPPROF_E_INVAL);
}

/* The seed's trace_handler prints each cycle's table: so does ours, asked. */
static void test_table_per_trace(void **state)
{
    (void)state;
    opprof_trace_handler h;
    assert_int_equal(opprof_trace_handler_init(&h, g_dir, "tables", 0), OPPROF_OK);
    h.table_only = 1;
    h.print_table = 1;
    h.row_limit = 10;
    snprintf(h.sort_by, sizeof h.sort_by, "self_cpu_time_total");
    h.table_out = tmpfile();
    assert_non_null(h.table_out);
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.on_trace_ready = opprof_trace_handler_ready;
    cfg.user = &h;
    run_steps(&cfg, 4); /* ready at steps 2 and 4 */
    assert_int_equal(opprof_trace_handler_status(&h), OPPROF_OK);
    assert_int_equal(opprof_trace_handler_traces_written(&h), 0);
    char text[8192] = {0};
    rewind(h.table_out);
    size_t n = fread(text, 1, sizeof text - 1, h.table_out);
    fclose(h.table_out);
    assert_true(n > 0);
    int tables = 0;
    for (const char *p = text; (p = strstr(p, "Self CPU time total:")); p++) tables++;
    assert_int_equal(tables, 2);
    assert_non_null(strstr(text, "ProfilerStep*"));
    assert_non_null(strstr(text, "# of Calls"));
    char last[512];
    assert_int_equal(count_named(g_dir, "tables.", ".pt.trace.json", last, sizeof last), 0);
    /* A bad sort key is reported like any failure. */
    h.table_out = tmpfile();
    snprintf(h.sort_by, sizeof h.sort_by, "nonsense");
    run_steps(&cfg, 2);
    fclose(h.table_out);
    assert_int_equal(opprof_trace_handler_status(&h), OPPROF_E_INVAL);
    assert_non_null(strstr(opprof_trace_handler_last_error(&h), "nonsense"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_worker_names),
        cmocka_unit_test(test_named_worker_gzip_and_session_dir),
        cmocka_unit_test(test_failure_is_reported),
        cmocka_unit_test(test_table_per_trace),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
